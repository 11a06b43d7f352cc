"""Scoring samples files (the human-eval / evalplus format) and self-testing a benchmark.

A sample is ``{"task_id": ..., "completion": ...}`` (appended to the problem's prompt) or
``{"task_id": ..., "solution": ...}`` (a whole program); a task may have many samples. LiveCodeBench's
own records, ``{"question_id": ..., "code_list": [programs]}`` in one JSON list, are read as they are:
each program of ``code_list`` is a ``solution``.
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter
from pathlib import Path
from typing import Literal

from refinelab._progress import ProgressHook
from refinelab.errors import InputError
from refinelab.metrics import mean_pass_at_k
from refinelab.problems import Problem, find_problem, read_records
from refinelab.sandbox import Limits, RunResult, Sandbox, Suite, outcomes_json, run_scored


@dataclass(frozen=True)
class Sample:
    """One program to score."""

    problem: Problem
    """The problem it answers."""
    program: str
    """The full program."""
    task_id: str
    """The task id as the samples file spelled it."""
    index: int
    """Position among this task's samples (0-based)."""
    code: str = ""
    """The code as the file gave it."""
    given_as: Literal["completion", "solution"] = "solution"
    """Which field held it: ``completion`` (appended to the prompt) or ``solution`` (a whole program)."""


@dataclass(frozen=True)
class ScoredSample:
    """A sample and its hidden-test result."""

    sample: Sample
    """What was run."""
    result: RunResult
    """How it went."""
    limits: Limits | None = None
    """The limits it ran under (their time rule is written with each ``--out`` line)."""

    def to_json(self) -> dict[str, object]:
        """One line of the ``--out`` file: the verdict, each test's outcome (``skipped`` after the first
        failure when only the verdict was asked for), and the time rule the tests ran under."""
        return {**self._head(), "outcomes": [outcome.to_json() for outcome in self.result.outcomes]}

    def json_line(self) -> str:
        """``json.dumps(self.to_json())``, written faster: the outcomes as :func:`outcomes_json` encodes
        them (1,640 HumanEval+ programs carry 1.2 million outcomes)."""
        return f'{json.dumps(self._head())[:-1]}, "outcomes": {outcomes_json(self.result.outcomes)}}}'

    def _head(self) -> dict[str, object]:
        """The line without its outcomes."""
        line: dict[str, object] = {
            "task_id": self.sample.task_id,
            "sample_index": self.sample.index,
            "passed": self.result.passed,
            "tests_passed": self.result.pass_count,
            "tests_total": len(self.result.outcomes),
            "isolation": self.result.isolation,
            "node": self.result.node,
        }
        if self.limits is not None:
            line["time_limit"] = self.limits.rule()
            line["stop_at_failure"] = self.limits.stop_at_failure
            scale = self.sample.problem.metadata.get("reference_time_scale")
            if self.limits.reference_factor is not None and scale is not None:
                line["reference_time_scale"] = scale
        return line


def read_samples(path: str | Path, problems: Sequence[Problem]) -> list[Sample]:
    """Read a samples file (JSON Lines, or one JSON list); every record needs a known ``task_id`` and a
    ``completion`` or ``solution``, or LiveCodeBench's ``question_id`` and ``code_list``."""
    by_id = {problem.id: problem for problem in problems}
    counts: Counter[str] = Counter()
    samples = []
    for line, record in read_records(path):
        name = "task_id" if "task_id" in record or "question_id" not in record else "question_id"
        task_id = record.get(name)
        if not isinstance(task_id, (str, int)) or isinstance(task_id, bool):
            raise InputError(path, line, name, "missing, or not a string or number")
        problem = find_problem(by_id, str(task_id))
        if problem is None:
            raise InputError(path, line, name, f"unknown task {task_id!r} for this benchmark")
        for code, given_as in _codes(record, path, line):
            program = code if given_as == "solution" else problem.program(code)
            samples.append(Sample(problem, program, str(task_id), counts[problem.id], code, given_as))
            counts[problem.id] += 1
    if not samples:
        raise InputError(path, None, None, "no samples: expected JSON lines with task_id and completion or solution")
    return samples


def _codes(record: dict[str, object], path: str | Path, line: int | None) -> list[tuple[str, Given]]:
    """The record's programs: its ``solution`` or ``completion``, or each of LiveCodeBench's ``code_list``."""
    if "solution" in record or "completion" in record or "code_list" not in record:
        return [_code(record, path, line)]
    programs = record["code_list"]
    if not isinstance(programs, list):
        raise InputError(path, line, "code_list", f"must be a list of programs, not {_json_kind(programs)}")
    for index, program in enumerate(programs):
        if not isinstance(program, str):
            kind = _json_kind(program)
            raise InputError(path, line, f"code_list[{index}]", f"must be a string (the program's text), not {kind}")
    return [(program, "solution") for program in programs]


Given = Literal["completion", "solution"]
"""Which field held a sample's code."""


def _code(record: dict[str, object], path: str | Path, line: int | None) -> tuple[str, Given]:
    fields: tuple[Given, ...] = ("solution", "completion")
    for name in fields:
        if isinstance(record.get(name), str):
            return str(record[name]), name
    for name in fields:
        if name in record:  # there, but not text: say what it is, not that it is missing
            kind = _json_kind(record[name])
            raise InputError(path, line, name, f"must be a string (the program's text), not {kind}")
    raise InputError(path, line, "completion", "missing: a sample needs 'completion' or 'solution' (a string)")


def _json_kind(value: object) -> str:
    """What a JSON value is, in words (``a list``, ``null``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__


def format_hint(samples: Sequence[Sample]) -> str | None:
    """One line of advice when most programs do not parse: mostly still in markdown fences, or the other
    field's reading would fix that (``completion`` is appended to the prompt, ``solution`` is a whole
    program: evalplus's convention)."""
    broken: list[Sample] = []
    for parsed, sample in enumerate(samples, 1):
        if not _parses(sample.program):
            broken.append(sample)
        elif (parsed - len(broken)) * 2 >= len(samples):  # half of them parse: no advice, the rest unread
            return None
    if not samples or len(broken) * 2 <= len(samples):
        return None
    head = f"{len(broken)} of {len(samples)} programs do not parse"
    fenced = sum(bool(_FENCE.search(s.code)) for s in broken)
    if fenced * 2 > len(broken):  # raw replies: neither field's reading helps
        return f"{head}: {fenced} of them hold markdown code fences (```); a sample is the code alone"
    fixed = sum(_parses(s.code if s.given_as == "completion" else s.problem.program(s.code)) for s in broken)
    if broken[0].given_as == "solution":
        advice = "`solution` is a whole program; `completion` is appended to the prompt"
        other = "completion"
    else:
        advice = "`completion` is appended to the prompt; `solution` is a whole program"
        other = "solution"
    if fixed * 2 > len(broken):
        return f"{head}: {advice}. {fixed} of them parse when read as `{other}`: rename the field to `{other}`"
    return f"{head}: {advice}; check which one the file holds"


_FENCE = re.compile(r"^\s*```", re.MULTILINE)
"""A markdown code fence opening or closing a line."""


def _parses(program: str) -> bool:
    try:
        ast.parse(program)
    except (SyntaxError, ValueError):  # ValueError: a NUL byte in the source
        return False
    return True


Whole = Callable[[str], "asyncio.Future[Problem]"]
"""A problem with its hidden tests by id, once loaded (:meth:`refinelab.sandbox.Loading.whole`)."""


async def score_samples(
    samples: Sequence[Sample],
    pool: Sandbox,
    progress: ProgressHook | None = None,
    on_scored: Callable[[int, ScoredSample], None] | None = None,
    whole: Whole | None = None,
) -> list[ScoredSample]:
    """Run every sample on its problem's hidden tests (in shared batches; identical programs once, and
    under ``pool.limits``: see :func:`run_scored`); results in sample order, and each given to
    ``on_scored`` with its index as soon as it is known (``check --out`` writes its lines meanwhile).

    ``whole``: the samples were read against problems still loading (without their hidden tests); each
    task's programs run as soon as ``whole`` has its problem, and the scored samples carry it."""
    loaded: dict[str, Problem] = {}
    suites: dict[str, Suite | asyncio.Future[Suite]] = {}
    for sample in samples:
        key = sample.problem.id
        if key not in suites:
            suites[key] = Suite.hidden(sample.problem) if whole is None else _hidden(whole(key), loaded)
    items = [(sample.program, suites[sample.problem.id]) for sample in samples]
    scored: dict[int, ScoredSample] = {}

    def done(index: int, result: RunResult) -> None:
        sample = samples[index]
        problem = loaded.get(sample.problem.id, sample.problem)
        if problem is not sample.problem:
            sample = replace(sample, problem=problem)
        scored[index] = ScoredSample(sample, result, pool.limits)
        if on_scored is not None:
            on_scored(index, scored[index])

    await run_scored(pool, items, progress=progress, on_result=done)
    return [scored[index] for index in range(len(samples))]


def _hidden(problem: asyncio.Future[Problem], loaded: dict[str, Problem]) -> asyncio.Future[Suite]:
    """The hidden suite of a problem still loading (``loaded`` keeps the problem, once there)."""

    async def suite() -> Suite:
        found = await problem
        loaded[found.id] = found
        return Suite.hidden(found)

    return asyncio.ensure_future(suite())


_VERDICT = attrgetter("verdict")

SkipCause = Literal["failure", "stage"]
"""Why a program's tests were skipped (see :attr:`Summary.skipped`)."""


@dataclass(frozen=True)
class Summary:
    """pass@k and outcome counts over scored samples."""

    problems: int
    """Problems with at least one sample."""
    samples: int
    """Samples scored."""
    pass_at: dict[int, float] = field(default_factory=dict)
    """pass@k for k = 1, 10, 100 where every problem has at least k samples."""
    verdicts: dict[str, int] = field(default_factory=dict)
    """How many tests ended in each verdict."""
    skipped: dict[SkipCause, int] = field(default_factory=dict)
    """Skipped tests by what stopped their program: ``failure`` (an error, a timeout or a crash: the
    worker runs none of the program's later tests) or ``stage`` (a wrong answer in an earlier stage: see
    :func:`refinelab.sandbox.run_scored`)."""


def summarize(scored: Sequence[ScoredSample]) -> Summary:
    """pass@k (unbiased) over problems, verdict counts over all tests, and why tests were skipped."""
    per_problem: dict[str, list[bool]] = {}
    verdicts: Counter[str] = Counter()
    skipped: Counter[SkipCause] = Counter()
    for item in scored:
        verdicts_run = list(map(_VERDICT, item.result.outcomes))  # at C speed: 1.2 million for HumanEval+
        per_problem.setdefault(item.sample.problem.id, []).append(item.result.passed)
        verdicts.update(verdicts_run)
        if "skipped" in verdicts_run:
            first = verdicts_run.index("skipped")
            stopped_by = verdicts_run[first - 1] if first else "pass"
            skipped[_cause(stopped_by)] += verdicts_run.count("skipped")
    counts = [(len(v), sum(v)) for v in per_problem.values()]
    pass_at = {k: value for k in (1, 10, 100) if (value := mean_pass_at_k(counts, k)) is not None}
    return Summary(len(per_problem), len(scored), pass_at, dict(verdicts), dict(skipped))


def _cause(stopped_by: str) -> SkipCause:
    """The test just before a program's first skipped one ended so: a failure status stopped the program
    in the worker; a pass or a wrong value means its stage was judged and had a wrong answer."""
    return "stage" if stopped_by in ("pass", "fail") else "failure"
