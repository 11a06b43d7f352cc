"""A CPU timeout stands only when it recurs: a program near the limit must not pass or time out
depending on what else the machine is running (Limits.timeout_reruns).

The programs here are slow on their first run only: they leave a mark in a folder the test made, which
only the unsandboxed mode lets them see, so these tests run with ``isolation="none"`` (the rerun logic is
the host's, the same for every isolation mode). Every loop is bounded by the CPU limit the test sets."""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from refinelab.problems import CallTest, StdioTest
from refinelab.sandbox import Limits, RunResult, Suite, WorkerPool, _pool
from refinelab.sandbox._judge import Ran
from refinelab.sandbox._queue import Placement, Unit
from tests.conftest import with_pool

pytestmark = pytest.mark.filterwarnings("ignore::refinelab.sandbox.SandboxWarning")

SLOW_THE_FIRST_TIME = """
import os
def f(x):
    with open({log!r}, "a") as log:
        log.write("run\\n")
    if not os.path.exists({mark!r}):
        open({mark!r}, "w").close()
        {stall}
    return x
"""
SPIN = "while True:\n            pass"
SLEEP = "import time; time.sleep(60)"


def run_once_slow(tmp_path: Path, limits: Limits, *, stall: str = SPIN, isolation: str = "none") -> RunResult:
    log, mark = tmp_path / "log", tmp_path / "mark"
    code = SLOW_THE_FIRST_TIME.format(log=str(log), mark=str(mark), stall=stall)
    suite = Suite.of([CallTest("f(1)", 1), CallTest("f(2)", 2)], entry_point="f")
    return with_pool(lambda pool: pool.run(code, suite), workers=1, isolation=isolation, limits=limits)


def runs(tmp_path: Path) -> int:
    return len((tmp_path / "log").read_text().splitlines())


def test_a_cpu_timeout_that_does_not_recur_gives_way_to_the_second_run(tmp_path: Path) -> None:
    result = run_once_slow(tmp_path, Limits(cpu_seconds=0.3, timeout_grace=0.0))  # it stalls for ever: no grace
    assert [o.verdict for o in result.outcomes] == ["pass", "pass"]
    assert runs(tmp_path) == 3  # f(1) timed out, then f(1) and f(2) in the second run


def test_without_reruns_the_first_timeout_stands(tmp_path: Path) -> None:
    result = run_once_slow(tmp_path, Limits(cpu_seconds=0.3, timeout_reruns=0))
    assert [o.verdict for o in result.outcomes] == ["timeout", "skipped"]
    assert result.outcomes[0].message == "CPU time limit exceeded"
    assert runs(tmp_path) == 1


def test_a_wall_clock_timeout_is_not_run_again(tmp_path: Path) -> None:
    result = run_once_slow(tmp_path, Limits(cpu_seconds=0.2, wall_factor=2), stall=SLEEP)
    assert [o.verdict for o in result.outcomes] == ["timeout", "skipped"]
    assert "wall-clock" in result.outcomes[0].message
    assert runs(tmp_path) == 1


@pytest.mark.parametrize("isolation", ["auto", "none"])
def test_a_timeout_that_recurs_stands_after_the_reruns(isolation: str) -> None:
    code = "def f(x):\n    while x:\n        pass\n    return x\n"
    suite = Suite.of([CallTest("f(0)", 0), CallTest("f(1)", 1)], entry_point="f")

    async def body(pool: WorkerPool) -> tuple[RunResult, float]:
        result = await pool.run(code, suite)
        return result, pool.stats["children"]

    limits = Limits(cpu_seconds=0.2, timeout_reruns=2, timeout_grace=0.0)  # a loop past its grace is not run again
    result, children = with_pool(body, workers=1, isolation=isolation, limits=limits)
    assert [o.verdict for o in result.outcomes] == ["pass", "timeout"]
    assert result.outcomes[1].message == "CPU time limit exceeded"
    assert children == 3  # the first run and two reruns, each in its own process


def stdio_slow_once(tmp_path: Path, when: str, stall: str) -> tuple[Path, str]:
    """A stdio program that logs each input it reads (the log, and its code) and runs ``stall`` (indented lines)
    the first time ``when`` holds of it (``data``), leaving a mark."""
    log, mark = tmp_path / "log", tmp_path / "mark"
    code = (
        "import os, sys, time\n"
        "data = sys.stdin.read().strip()\n"
        f"with open({str(log)!r}, 'a') as log:\n"
        "    log.write(data + '\\n')\n"
        f"if {when} and not os.path.exists({str(mark)!r}):\n"
        f"    open({str(mark)!r}, 'w').close()\n"
        f"{stall}"
        "print(data)\n"
    )
    return log, code


def test_a_stdio_program_runs_again_only_on_the_tests_that_timed_out(tmp_path: Path) -> None:
    log, code = stdio_slow_once(tmp_path, "data == 'slow'", "    while True:\n        pass\n")
    tests = [StdioTest("fast\n", "fast"), StdioTest("slow\n", "slow"), StdioTest("other\n", "other")]
    suite = Suite.of(tests, kind="stdio")
    limits = Limits(cpu_seconds=0.3, timeout_grace=0.0)  # it stalls for ever the first time: no grace
    result = with_pool(lambda pool: pool.run(code, suite), workers=1, isolation="none", limits=limits)
    assert [o.verdict for o in result.outcomes] == ["pass", "pass", "pass"]
    assert log.read_text().splitlines() == ["fast", "slow", "other", "slow"]


LOOPING = "def f(x):\n    while x:\n        pass\n    return x\n"


@pytest.fixture
def trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The job trace's file, named in the environment (read when a pool starts)."""
    path = tmp_path / "trace.jsonl"
    monkeypatch.setenv("REFINELAB_JOB_TRACE", str(path))
    return path


def traced_jobs(trace: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in trace.read_text().splitlines() if '"chains"' in line]


def test_the_job_trace_marks_a_whole_programs_rerun_as_one_that_may_overlap_its_first_run(trace: Path) -> None:
    function = Suite.of([CallTest("f(0)", 0), CallTest("f(1)", 1)], entry_point="f")
    stdio = Suite.of([StdioTest("1\n", "1\n")], kind="stdio")

    async def body(pool: WorkerPool) -> None:
        await pool.run(LOOPING, function)  # a function program's rerun is the whole program again
        await pool.run("while True:\n    pass\n", stdio)  # a stdio program's, only the tests that timed out

    limits = Limits(cpu_seconds=0.2, timeout_reruns=1, timeout_grace=0.0)  # each loop run again
    with_pool(body, workers=1, isolation="none", limits=limits)
    jobs = traced_jobs(trace)
    assert [job["overlaps"] for job in jobs] == [False, True, False, False]
    assert jobs[0]["chains"] == jobs[1]["chains"] and jobs[2]["chains"] == jobs[3]["chains"]


BURN_THE_FIRST_TIME = """
import os, time
def f(x):
    with open({log!r}, "a") as log:
        log.write(str(x) + "\\n")
    if not os.path.exists({mark!r}):
        open({mark!r}, "w").close()
        end = time.process_time() + {seconds}
        while time.process_time() < end:
            pass
    return x
"""
"""Takes ``seconds`` of CPU on its first test, the first time it runs: past a limit of 0.4 s, well within its
grace's 0.6 s (the loop reads the same clock the limit is judged on)."""


def run_while_work_waits(programs: list[str], suite: Suite, limits: Limits) -> tuple[list[RunResult], float]:
    """``programs`` queued at once on one worker, one a job, each a first run with the grace (no worker is idle to
    start a rerun beside it); also the children the pool forked (one for each run here)."""

    async def body(pool: WorkerPool) -> tuple[list[RunResult], float]:
        results = await pool.run_items([(code, suite) for code in programs])
        return results, pool.stats["children"]

    return with_pool(body, workers=1, batch_size=1, isolation="none", limits=limits)


@pytest.mark.parametrize(("grace", "children"), [(0.5, 3), (0.0, 6)])
def test_a_loop_past_its_grace_is_not_run_again_while_work_waits(grace: float, children: int) -> None:
    looping = [f"{LOOPING}# copy {n}\n" for n in range(3)]
    suite = Suite.of([CallTest("f(1)", 1)], entry_point="f")
    results, forked = run_while_work_waits(looping, suite, Limits(cpu_seconds=0.3, timeout_grace=grace))
    assert [[o.verdict for o in r.outcomes] for r in results] == [["timeout"]] * 3
    assert all(r.outcomes[0].message == "CPU time limit exceeded" for r in results)
    # with the grace each ran 0.45 s and stands; without it each ran 0.3 s, then again
    assert forked == children


def test_loops_on_workers_all_busy_end_at_their_grace_not_after_a_rerun_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``run``'s looping attempt on two cores: its visible and hidden tests start together, one on each worker,
    with nothing waiting; no worker is left to start a rerun beside either, so each ends at its grace (one and
    a half limits) instead of a limit and a rerun (two). The grace was first given only while other work waited:
    both ran again (4 children)."""
    monkeypatch.setattr(_pool, "SPECULATE_AFTER", 600.0)  # no rerun starts beside a run: each is counted
    suite = Suite.of([CallTest("f(1)", 1)], entry_point="f")

    async def body(pool: WorkerPool) -> tuple[list[RunResult], float]:
        results = await asyncio.gather(pool.run(LOOPING, suite), pool.run(f"{LOOPING}# the hidden run\n", suite))
        return list(results), pool.stats["children"]

    results, forked = with_pool(body, workers=2, isolation="none", limits=Limits(cpu_seconds=0.3, timeout_grace=0.5))
    assert [[o.verdict for o in r.outcomes] for r in results] == [["timeout"]] * 2
    assert forked == 2


def test_a_rerun_started_beside_a_loop_takes_its_grace_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where a worker idles, the pool starts a loop's rerun beside it (``_speculate``) and tells the loop's worker
    that its tests get no grace from now on: the loop stops at its limit, a timeout that is no verdict yet, and
    the rerun's verdict stands. Here the rerun is a program that returns at once (a program near its limit that
    runs within it alone): its pass is the verdict. Had the loop kept its grace, its timeout would stand, sure.
    A word about a job that has ended is dropped: the next job keeps its grace."""
    monkeypatch.setattr(_pool, "SPECULATE_AFTER", 600.0)  # the test starts the rerun itself
    suite = Suite.of([CallTest("f(1)", 1)], entry_point="f")

    async def body(pool: WorkerPool) -> tuple[RunResult, RunResult, float]:
        run = asyncio.ensure_future(pool.run(LOOPING, suite))
        while not pool._running:
            await asyncio.sleep(0.01)
        unit = next(iter(pool._running))
        assert unit.withdraw is not None  # the first run has the grace
        word, within = unit.withdraw, "def f(x):\n    return x\n"
        unit.backup = pool._submit(within, unit.item[1], unit.limits, True, Placement(urgent=True, alone=True)).done
        word()
        backed = await run
        word()  # about the job that ended: the worker reads it before the next job, and drops it
        before = pool.stats["children"]
        after = await pool.run(f"{LOOPING}# next\n", suite)
        return backed, after, pool.stats["children"] - before

    limits = Limits(cpu_seconds=1.0, timeout_grace=0.5)  # the word comes long before 1.5 CPU s, however loaded
    backed, after, children = with_pool(body, workers=2, isolation="none", limits=limits)
    assert [o.verdict for o in backed.outcomes] == ["pass"]
    assert [o.verdict for o in after.outcomes] == ["timeout"]
    assert children == 1  # the next loop ran once, to its grace's end, and stands


def test_a_rerun_starts_beside_a_loop_with_the_grace_only_while_it_would_end_first() -> None:
    """A loop with the grace ends at one and a half limits; a rerun started at ``t`` ends at ``t`` plus a limit:
    it is worth starting only in the first half limit (the longest test's), and at any time without a grace."""
    suite = replace(Suite.of([CallTest("f(1)", 1), CallTest("f(2)", 2)], entry_point="f"), seconds=(1.0, 3.0))
    limits = Limits(cpu_seconds=4.0, timeout_grace=0.5)
    loop = asyncio.new_event_loop()
    try:
        done: asyncio.Future[Ran] = loop.create_future()
        unit = Unit(("code", suite.inputs(limits)), limits, False, Placement(), done, "chain")
    finally:
        loop.close()
    assert _pool._backed_up_until(unit) == math.inf
    unit.withdraw = lambda: None
    assert _pool._backed_up_until(unit) == 1.5


def test_a_test_that_ends_within_its_grace_is_a_timeout_run_again(tmp_path: Path) -> None:
    log, mark = tmp_path / "log", tmp_path / "mark"
    burning = BURN_THE_FIRST_TIME.format(log=str(log), mark=str(mark), seconds=0.5)
    suite = Suite.of([CallTest("f(1)", 1), CallTest("f(2)", 2)], entry_point="f")
    results, _ = run_while_work_waits([burning, "def f(x):\n    return x\n"], suite, Limits(cpu_seconds=0.4))
    assert [[o.verdict for o in r.outcomes] for r in results] == [["pass", "pass"]] * 2
    # f(1) took 0.5 s of a 0.4 s limit: not a pass, but a timeout its rerun (fast: the mark is there) replaced
    assert log.read_text().splitlines().count("1") == 2


def test_a_stdio_test_that_ends_within_its_grace_is_a_timeout_run_again(tmp_path: Path) -> None:
    burn = "    end = time.process_time() + 0.5\n    while time.process_time() < end:\n        pass\n"
    log, code = stdio_slow_once(tmp_path, "True", burn)
    suite = Suite.of([StdioTest("a\n", "a"), StdioTest("b\n", "b")], kind="stdio")
    results, _ = run_while_work_waits([code, "print(input())\n"], suite, Limits(cpu_seconds=0.4))
    assert [[o.verdict for o in r.outcomes] for r in results] == [["pass", "pass"]] * 2
    assert log.read_text().splitlines() == ["a", "b", "a"]  # each test in a child of its own, then the first again


BURN = """
import time
def f(x):
    end = time.process_time() + 0.15  # CPU time: the same on a loaded machine
    while time.process_time() < end:
        pass
    return x
"""


def test_a_child_that_spent_the_budget_on_programs_that_finish_ends_and_the_job_hands_back_the_rest(
    trace: Path,
) -> None:
    slow = [f"{BURN}# copy {n}\n" for n in range(3)]
    suite = Suite.of([CallTest("f(1)", 1)], entry_point="f")
    limits = Limits(cpu_seconds=1.0, timeout_reruns=0, defer_after=0.2)

    async def body(pool: WorkerPool) -> list[RunResult]:
        return await pool.run_items([(code, suite) for code in slow])

    results = with_pool(body, workers=1, isolation="none", limits=limits)
    assert [[o.verdict for o in r.outcomes] for r in results] == [["pass"]] * 3
    # each program spends 0.15 s and passes (nothing is deferred): one child would run all three in one job,
    # 0.45 s; it ends after the second, past the 0.2 s budget, and the third goes out again in a job of its own
    assert [job["programs"] for job in traced_jobs(trace)] == [2, 1]


def test_a_job_that_spent_its_budget_hands_back_the_programs_it_has_not_started(trace: Path) -> None:
    quick = [f"def f(x):\n    return x  # {n}\n" for n in range(2)]
    suite = Suite.of([CallTest("f(1)", 1)], entry_point="f")
    limits = Limits(cpu_seconds=0.3, timeout_reruns=0, defer_after=0.2)

    async def body(pool: WorkerPool) -> list[RunResult]:
        return await pool.run_items([(code, suite) for code in [LOOPING, *quick]])

    results = with_pool(body, workers=1, isolation="none", limits=limits)
    assert [[o.verdict for o in r.outcomes] for r in results] == [["timeout"], ["pass"], ["pass"]]
    jobs = traced_jobs(trace)
    # one job took all three; its child spent 0.3 s on the loop, past the 0.2 s budget, so the two programs
    # queued behind it came back unrun and went out again, as a job of their own
    assert [job["programs"] for job in jobs] == [1, 2]
