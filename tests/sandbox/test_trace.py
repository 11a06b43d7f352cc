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
from refinelab.sandbox._trace import TICK, LoopWatch
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
        await asyncio.sleep(3 * TICK)
        block()
        await asyncio.sleep(3 * TICK)  # the tick that comes late
        watch.stop()
        return watch

    return asyncio.run(body())


def test_a_step_that_holds_the_loop_up_is_found_with_the_cpu_it_spent() -> None:
    busy = _watched(lambda: _spin(0.3))
    assert busy.longest >= 0.3 - TICK and busy.cpu >= 0.3 - TICK and busy.total >= busy.longest
    asleep = _watched(lambda: time.sleep(0.2))  # held up, but not by the loop's own work
    assert asleep.longest >= 0.2 - TICK and asleep.cpu < asleep.longest / 2


def test_the_pools_trace_ends_with_how_long_the_loop_was_held_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("REFINELAB_JOB_TRACE", str(trace))  # read when the pool starts
    suite = Suite.of([CallTest("f(1)", 1)], entry_point="f")

    async def body(pool: WorkerPool) -> None:
        await pool.run("def f(x):\n    return x\n", suite)
        _spin(0.3)
        await asyncio.sleep(3 * TICK)

    with_pool(body, workers=1, isolation="none")
    (closed,) = [json.loads(line) for line in trace.read_text().splitlines() if '"closed"' in line]
    held = closed["loop_held"]
    assert held["longest"] >= 0.3 - TICK and held["cpu"] >= 0.3 - TICK and held["total"] >= held["longest"]
    (job,) = [json.loads(line) for line in trace.read_text().splitlines() if '"chains"' in line]
    assert job["end"] <= held["at"] <= closed["closed"]  # on the jobs' clock
