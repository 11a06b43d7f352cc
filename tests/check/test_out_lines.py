"""``check --out`` lines are written by :meth:`ScoredSample.json_line`, which encodes each distinct outcome
once: the text must be what ``json.dumps(to_json())`` writes, byte for byte, whatever the outcomes hold."""

from __future__ import annotations

import json

from refinelab.check._samples import Sample, ScoredSample
from refinelab.problems import Problem
from refinelab.sandbox import Limits, RunResult, outcomes_json
from refinelab.sandbox import TestOutcome as Outcome
from refinelab.sandbox._outcome import PASSED
from refinelab.sandbox._scoring import AFTER_TIMEOUT, SKIPPED

PROBLEM = Problem(
    "HumanEval/0", "def f(x):\n", "function", (), (), entry_point="f", metadata={"reference_time_scale": 1.5}
)

OUTCOMES = (
    PASSED,
    PASSED,
    Outcome("pass"),  # equal to PASSED, another object
    Outcome("pass", cpu_seconds=0.25),
    Outcome("fail", "f(1): expected 'é\\n\"', got 2", expected="'é\\n\"'", actual="2"),
    Outcome("timeout", "over the limit", cpu_seconds=1.0, limit_seconds=1),
    Outcome("error", "", error_type="ValueError", traceback="Traceback:\n  line 1\tx"),
    AFTER_TIMEOUT,
    SKIPPED,
    SKIPPED,
)


def scored(outcomes: tuple[Outcome, ...], limits: Limits | None) -> ScoredSample:
    sample = Sample(PROBLEM, "def f(x):\n    return x\n", "HumanEval/0", 3, code="    return x\n")
    return ScoredSample(sample, RunResult(outcomes, "bwrap-uid", node="10.0.0.2 abc"), limits)


def test_an_out_line_is_what_json_dumps_writes_byte_for_byte() -> None:
    for limits in (None, Limits(reference_factor=4.0), Limits(cpu_seconds=2.0, stop_at_failure=True)):
        for outcomes in (OUTCOMES, (), (PASSED,), OUTCOMES[4:5]):
            item = scored(outcomes, limits)
            assert item.json_line() == json.dumps(item.to_json())


def test_outcomes_json_encodes_each_outcome_in_its_place() -> None:
    assert outcomes_json(OUTCOMES) == json.dumps([o.to_json() for o in OUTCOMES])
    assert json.loads(outcomes_json([SKIPPED, PASSED, SKIPPED]))[1] == {"verdict": "pass"}
    runs = [PASSED] * 3 + [SKIPPED] * 2 + [PASSED] + [SKIPPED] * 4  # runs of one object, each written at once
    assert outcomes_json(runs) == json.dumps([o.to_json() for o in runs])
