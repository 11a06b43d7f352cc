"""Wrong programs cost little: each test on its own CPU limit (following the reference's time where it is
known), a program stopped at its first failure when only the verdict is wanted, a timeout run again only
where that can change what was asked for, and every test's verdict after a timeout when it is wanted.

Every loop here is bounded by the CPU limit the test sets."""

from __future__ import annotations

from dataclasses import replace

import pytest

from refinelab.problems import CallTest, StdioTest
from refinelab.sandbox import Limits, RunResult, Suite, WorkerPool
from tests.conftest import with_pool

SPIN_FOR = """
import time
def f(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return seconds
"""


def run(code: str, suite: Suite, limits: Limits, **options: object) -> tuple[RunResult, float]:
    """The result and how many child processes the pool forked for it."""

    async def body(pool: WorkerPool) -> tuple[RunResult, float]:
        result = await pool.run(code, suite, limits=limits)
        return result, pool.stats["children"]

    return with_pool(body, workers=1, **options)


def verdicts(result: RunResult) -> list[str]:
    return [o.verdict for o in result.outcomes]


def test_each_test_has_its_own_limit_when_the_suite_gives_one() -> None:
    suite = Suite.of([CallTest("f(0.3)", 0.3), CallTest("f(0.3)", 0.3)], entry_point="f")
    limits = Limits(cpu_seconds=0.15, timeout_reruns=0, after_timeout="continue")
    result, _ = run(SPIN_FOR, replace(suite, seconds=(1.0, 0.15)), limits)
    assert verdicts(result) == ["pass", "timeout"]
    assert result.outcomes[1].limit_seconds == 0.15


def test_a_tests_limit_follows_the_reference_time_under_evalplus_rule() -> None:
    limits = Limits(cpu_seconds=30.0, timeout_reruns=0).following_reference(factor=4, floor=0.2)
    assert limits.test_seconds(0.01) == 0.2 and limits.test_seconds(0.1) == pytest.approx(0.4)
    assert limits.test_seconds(None) == 30.0 and Limits().test_seconds(0.01) == 4.0
    tests = [CallTest("f(0.3)", 0.3), CallTest("f(0.3)", 0.3)]
    suite = Suite(tuple(tests), entry_point="f", reference_seconds=(0.1, 0.01))  # limits 0.4 s, 0.2 s
    result, _ = run(SPIN_FOR, suite, limits)
    assert verdicts(result) == ["pass", "timeout"]
    assert result.outcomes[1].limit_seconds == 0.2
    fixed, _ = run(SPIN_FOR, suite, Limits(cpu_seconds=0.2, timeout_reruns=0))  # no rule: the reference is ignored
    assert verdicts(fixed) == ["timeout", "skipped"]


def test_only_the_verdict_stops_a_program_at_its_first_error_and_batches_go_on() -> None:
    raising = "def f(x):\n    if x == 1:\n        raise ValueError('one')\n    return x\n"
    right = "def f(x):\n    return x\n"
    suite = Suite.of([CallTest(f"f({i})", i) for i in range(4)], entry_point="f")

    async def body(pool: WorkerPool) -> list[RunResult]:
        return await pool.run_items([(raising, suite), (right, suite)], limits=Limits(stop_at_failure=True))

    first, second = with_pool(body, workers=1)
    assert verdicts(first) == ["pass", "error", "skipped", "skipped"]
    assert first.outcomes[2].message == "not run: an earlier test failed"
    assert verdicts(second) == ["pass"] * 4
    every, _ = run(raising, suite, Limits())
    assert verdicts(every) == ["pass", "error", "pass", "pass"]


def test_a_timeout_after_a_failure_is_not_run_again_when_only_the_verdict_counts() -> None:
    code = "def f(x):\n    while x == 2:\n        pass\n    return x + (x == 0)\n"
    suite = Suite.of([CallTest("f(0)", 0), CallTest("f(2)", 2)], entry_point="f")  # wrong, then loops
    limits = Limits(cpu_seconds=0.2, timeout_reruns=1, timeout_grace=0.0)  # a loop is confirmed by its rerun
    verdict_only, children = run(code, suite, replace(limits, stop_at_failure=True))
    assert verdicts(verdict_only) == ["fail", "timeout"] and children == 1
    details, children = run(code, suite, limits)
    assert verdicts(details) == ["fail", "timeout"] and children == 2  # every outcome wanted: confirmed


def test_after_a_timeout_every_later_test_still_gets_a_verdict_when_asked() -> None:
    code = "def f(x):\n    while x == 1:\n        pass\n    return x\n"
    suite = Suite.of([CallTest(f"f({i})", i) for i in range(4)], entry_point="f")
    limits = Limits(cpu_seconds=0.15, timeout_reruns=1, after_timeout="continue", timeout_grace=0.0)
    result, children = run(code, suite, limits)
    assert verdicts(result) == ["pass", "timeout", "pass", "pass"]
    assert children == 3  # the first child, one after the timeout, one rerun of the timed-out test alone


@pytest.mark.filterwarnings("ignore::refinelab.sandbox.SandboxWarning")
def test_a_stdio_program_stops_at_its_first_error_when_only_the_verdict_counts() -> None:
    code = "n = int(input())\nassert n != 2\nprint(n)\n"
    suite = Suite.of([StdioTest(f"{i}\n", f"{i}\n") for i in (1, 2, 3)], kind="stdio")
    result, children = run(code, suite, Limits(stop_at_failure=True), isolation="none")
    assert verdicts(result) == ["pass", "error", "skipped"] and children == 2
