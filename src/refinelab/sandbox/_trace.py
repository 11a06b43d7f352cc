"""A record of every sandbox job, for working out what a run would take on more workers.

With ``REFINELAB_JOB_TRACE=FILE`` in its environment, a :class:`~refinelab.sandbox.WorkerPool` appends one
JSON line per job to ``FILE``: when its first program was queued (and each chain's first), when it
started and ended (seconds on one clock, ``time.perf_counter``), the CPU seconds its children and its
worker spent, the worker's wall time, how many programs it ran, which chains they continue (a program's
stages and reruns share its chain), whether it computed reference values, whether it is a timeout's
confirming rerun that may overlap the program's first run, and the driver's own CPU seconds so far. A
last line, written when the pool closes, holds the driver's CPU then and how long its event loop was held up
(:class:`LoopWatch`): a stretch in which it ran nothing else starts no job, which the prediction, counting
the driver's CPU as overlapping the jobs, would not show. ``bench/_predict.py`` reads it:
the larger of the total CPU over W workers and the longest chain that cannot be split is what the run
would take at W workers (docs/design/sandbox.md, "Where the time goes").
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

TRACE_VARIABLE = "REFINELAB_JOB_TRACE"
"""The environment variable naming the trace file."""


def chain_of(program: str) -> str:
    """A short name for a program's chain (its stages and reruns are one chain)."""
    return hashlib.blake2b(program.encode(), digest_size=6).hexdigest()


HELD = 0.05
"""Seconds the loop may go between two polls before it counts as held up."""


class LoopWatch:
    """How long the event loop went without polling for what its workers sent: the time from one poll's
    return to the next poll (one turn of the loop, every callback it ran) where that is longer than
    :data:`HELD`, and the loop thread's CPU over it (near the hold-up's length when a step of the driver's
    own ran that long; small when the machine or another thread held it). It times the loop's own polls
    (the selector's ``select``, wrapped), so it adds no wake-up of its own: an idle loop costs nothing."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.longest = self.at = self.cpu = self.total = 0.0
        """The longest hold-up (seconds), when it began (``time.perf_counter``), the loop thread's CPU seconds
        over it, and every hold-up's seconds added up."""
        self._polled, self._cpu = time.perf_counter(), time.thread_time()
        self._selector = getattr(loop, "_selector", None)  # a selector event loop's (the only kind on Linux)
        self._found: object = None  # what the selector's ``select`` was, where something had replaced its own
        self._timed: object = None
        if self._selector is not None:
            select = self._selector.select
            self._found = vars(self._selector).get("select")

            def timed(timeout: float | None = None) -> object:
                if self._selector is None:  # stopped while another watch had wrapped it again: pass through
                    return select(timeout)
                self._turned(time.perf_counter(), time.thread_time())
                events = select(timeout)
                self._polled, self._cpu = time.perf_counter(), time.thread_time()
                return events

            self._selector.select = self._timed = timed

    def _turned(self, now: float, cpu: float) -> None:
        """A poll begins at ``now``: the turn since the last one held the loop up if it was long."""
        held = now - self._polled
        if held > HELD:
            self.total += held
            if held > self.longest:
                self.longest, self.at, self.cpu = held, self._polled, cpu - self._cpu

    def stop(self) -> dict[str, float]:
        """Stop watching; what was found, for the trace's closing line."""
        selector, self._selector = self._selector, None
        if selector is not None and vars(selector).get("select") is self._timed:  # not wrapped again since
            if self._found is None:
                del selector.select  # the selector's own method again
            else:
                selector.select = self._found
        return {
            "longest": round(self.longest, 6),
            "at": round(self.at, 6),
            "cpu": round(self.cpu, 6),
            "total": round(self.total, 6),
        }


class JobTrace:
    """Appends job records to a file (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self._handle: TextIO | None = path.open("a", encoding="utf-8")
        self._watch: LoopWatch | None = None

    def watch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Watch ``loop`` for hold-ups until :meth:`close` (see :class:`LoopWatch`)."""
        if self._handle is not None and self._watch is None:
            self._watch = LoopWatch(loop)

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> JobTrace | None:
        """The trace ``REFINELAB_JOB_TRACE`` asks for, if any."""
        path = environ.get(TRACE_VARIABLE)
        return cls(Path(path)) if path else None

    def job(
        self,
        queued: Mapping[str, float],
        started: float,
        stats: object,
        *,
        programs: int,
        values: bool,
        overlaps: bool = False,
    ) -> None:
        """Record a job that has just ended: when each chain in it was queued, when it started, what its
        worker reported (``stats``), how many programs it ran, whether it computed reference values, and
        whether it is the rerun that confirms a whole program's timeout (``overlaps``: the pool may start
        it beside the run it confirms, and the prediction counts it so, whether or not this run did)."""
        if self._handle is None:
            return
        numbers = stats if isinstance(stats, dict) else {}
        chains = sorted(queued)
        record = {
            "submitted": round(min(queued.values(), default=started), 6),
            "queued": {chain: round(queued[chain], 6) for chain in chains},
            "start": round(started, 6),
            "end": round(time.perf_counter(), 6),
            "child_cpu": numbers.get("child_cpu", 0.0),
            "worker_cpu": numbers.get("worker_cpu", 0.0),
            "wall": numbers.get("wall", 0.0),
            "programs": programs,
            "chains": chains,
            "values": values,
            "overlaps": overlaps,
            "driver_cpu": round(time.process_time(), 6),
        }
        self._handle.write(json.dumps(record) + "\n")

    def close(self) -> None:
        """Write the closing line (the driver's CPU now, and the loop's hold-ups) and close the file."""
        if self._handle is None:
            return
        record: dict[str, object] = {
            "closed": round(time.perf_counter(), 6),
            "driver_cpu": round(time.process_time(), 6),
        }
        if self._watch is not None:
            record["loop_held"] = self._watch.stop()
        self._handle.write(json.dumps(record) + "\n")
        self._handle.close()
        self._handle = None
