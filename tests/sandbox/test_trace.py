"""The job trace's watch on the driver's event loop (``_trace.LoopWatch``): a step that holds the loop up starts
no job at any width, so the trace says how long the longest was and whose CPU it was."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from refinelab.problems import CallTest
from refinelab.sandbox import Suite, WorkerPool
from refinelab.sandbox._trace import LoopWatch
from tests.conftest import with_pool

pytestmark = pytest.mark.filterwarnings("ignore::refinelab.sandbox.SandboxWarning")


def _spin(seconds: float) -> None:
    """Hold the loop with ``seconds`` of this thread's CPU (however long that takes on a loaded machine)."""
    start = time.thread_time()
    while time.thread_time() - start < seconds:
        pass


def _watched(block: Callable[[], None]) -> LoopWatch:
    async def body() -> LoopWatch:
        watch = LoopWatch(asyncio.get_running_loop())
        await asyncio.sleep(0.01)
        block()
        await asyncio.sleep(0.01)  # the loop polls again
        watch.stop()
        return watch

    return asyncio.run(body())


def test_a_step_that_holds_the_loop_up_is_found_with_the_cpu_it_spent() -> None:
    busy = _watched(lambda: _spin(0.3))
    assert busy.longest >= 0.3 and busy.cpu >= 0.3 and busy.total >= busy.longest
    asleep = _watched(lambda: time.sleep(0.2))  # held up, but not by the loop's own work
    assert asleep.longest >= 0.2 and asleep.cpu < asleep.longest / 2


def test_an_idle_loop_is_not_woken_by_the_watch() -> None:
    async def idle() -> float:
        loop = asyncio.get_running_loop()
        select = loop._selector.select  # type: ignore[attr-defined]
        polls = [0]

        def counted(timeout: float | None = None) -> object:
            polls[0] += 1
            return select(timeout)

        loop._selector.select = counted  # type: ignore[attr-defined]
        watch = LoopWatch(loop)
        await asyncio.sleep(0.3)
        watch.stop()
        del loop._selector.select  # type: ignore[attr-defined]
        return polls[0]

    assert asyncio.run(idle()) <= 3  # a sleep of 0.3 s is one poll (and the loop's own turns around it)


def test_the_pools_trace_ends_with_how_long_the_loop_was_held_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("REFINELAB_JOB_TRACE", str(trace))  # read when the pool starts
    suite = Suite.of([CallTest("f(1)", 1)], entry_point="f")

    async def body(pool: WorkerPool) -> None:
        await pool.run("def f(x):\n    return x\n", suite)
        _spin(0.3)
        await asyncio.sleep(0.01)

    with_pool(body, workers=1, isolation="none")
    (closed,) = [json.loads(line) for line in trace.read_text().splitlines() if '"closed"' in line]
    held = closed["loop_held"]
    assert held["longest"] >= 0.3 and held["total"] >= held["longest"] and held["cpu"] <= held["longest"] + 0.01
    assert 0 < held["at"] <= closed["closed"]  # on the jobs' clock


@pytest.mark.parametrize("first", [0, 1])
def test_two_watches_on_one_loop_stop_in_either_order(first: int) -> None:
    """Stopped last in, first out, the loop is as it was; the other way, the inner watch's wrapper stays as a
    pass-through: in both, neither records anything once stopped."""

    async def both() -> bool:
        loop = asyncio.get_running_loop()
        watches = [LoopWatch(loop), LoopWatch(loop)]
        _spin(0.1)
        await asyncio.sleep(0.01)
        found = {first: watches[first].stop()}
        found[1 - first] = watches[1 - first].stop()
        assert all(held["longest"] >= 0.1 for held in found.values())
        _spin(0.2)
        await asyncio.sleep(0.01)  # the loop still polls, and no stopped watch sees this
        assert all(round(watches[i].total, 6) == found[i]["total"] for i in (0, 1))  # nothing added once stopped
        return "select" not in vars(loop._selector)  # type: ignore[attr-defined]

    assert asyncio.run(both()) == (first == 1)
