"""The pool's queue: programs waiting for a worker, and how a free worker's next job is cut from them.

Every program a caller asks for becomes a :class:`Unit` (one program on one suite's inputs) with a future
of its own, so each program's result is handed back as soon as its own job ends: a program's next step
(its next stage, the rerun that confirms its timeout) never waits for other programs, and no program
waits for another's rerun. A free worker takes the oldest units that can share a job (same limits, same
``isolate``, function programs), as many as ``ceil(waiting / workers)`` up to the pool's batch size (guided
self-scheduling): large jobs while much is waiting, single programs at the end, so the last jobs are
short and no worker idles behind one long batch. Units marked :attr:`Placement.urgent` (a program's
later stages and its timeout reruns: work on a chain already started) go before fresh work, and share a
job only up to :data:`URGENT_TESTS` tests in all: a later stage is large (512 tests of HumanEval+), and
seven programs' third stages in one job had made one chain of 5.4 CPU s for all seven, where each took
0.8 s. See docs/design/sandbox.md ("Scheduling").
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

from refinelab.sandbox._judge import Ran
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._suite import InputItem

URGENT_TESTS = 512
"""Most tests in one job of urgent units (a program's later stages): eight second stages of 64 tests
share a job, a third stage of 512 has one of its own."""


@dataclass(eq=False)
class Meter:
    """CPU seconds the programs submitted under one :class:`Placement` used, as their jobs ended (what the
    worker measured each program's steps took, and an even share of the rest of its job): how a caller
    learns what a program costs (see ``_scoring``)."""

    cpu: float = 0.0

    def add(self, seconds: float) -> None:
        """Count a program's share of a job that ended (a number that is not finite is not counted)."""
        if math.isfinite(seconds):
            self.cpu += seconds


@dataclass(frozen=True)
class Placement:
    """Where the programs a caller submits go in the queue."""

    urgent: bool = False
    """Before fresh work (the continuation of a program already started)."""
    alone: bool = False
    """In a job of their own (a piece whose reply would be large: see ``_scoring.HEAVY_BYTES``)."""
    chain: str | None = None
    """What the programs continue, for the job trace (``None``: each its program): one program's stages
    on one suite are one chain, its runs on another suite another."""
    meter: Meter | None = field(default=None, compare=False)
    """Where the pool counts the CPU these programs use (``None``: not counted; other sandboxes never do)."""
    overlaps: bool = False
    """The rerun that confirms a whole program's timeout, which the pool starts beside its first run when
    workers idle (``_pool.SPECULATE_AFTER``): for the job trace, whose prediction counts it from then."""


_PLACEMENT: ContextVar[Placement | None] = ContextVar("refinelab_sandbox_placement", default=None)


@contextlib.contextmanager
def placed(placement: Placement) -> Iterator[None]:
    """Programs submitted to a :class:`~refinelab.sandbox.WorkerPool` within this block go where
    ``placement`` says (other sandboxes ignore it)."""
    token = _PLACEMENT.set(placement)
    try:
        yield
    finally:
        _PLACEMENT.reset(token)


def current_placement() -> Placement:
    """The placement in force here."""
    return _PLACEMENT.get() or Placement()


@dataclass(eq=False)
class Unit:
    """One program on one suite's inputs, waiting for (or in) a job."""

    item: InputItem
    """The program and its suite's inputs."""
    limits: Limits
    """The limits it runs under."""
    isolate: bool
    """A fresh process for it."""
    placement: Placement
    """Urgent, alone (see :class:`Placement`)."""
    done: asyncio.Future[Ran]
    """Its run, set when its job ends."""
    chain: str
    """What it continues (its program, or a call of its own): the bench's longest-chain estimate."""
    speculate: bool = False
    """Its confirming rerun may start before it ends (the pool's ``_speculate``)."""
    backup: asyncio.Future[Ran] | None = None
    """That rerun, once started."""
    withdraw: Callable[[], None] | None = None
    """While it runs with the timeout grace: takes its grace back (the pool's ``_speculate``)."""
    submitted: float = field(default_factory=time.perf_counter)
    """When it was queued."""

    def joins(self, first: Unit) -> bool:
        """Whether it may share ``first``'s job."""
        return (
            not self.placement.alone
            and self.isolate == first.isolate
            and self.item[1].kind == "function"
            and (self.limits is first.limits or self.limits == first.limits)
        )


class UnitQueue:
    """Units waiting for a worker: urgent ones first, then fresh ones, each oldest first."""

    def __init__(self) -> None:
        self._urgent: deque[Unit] = deque()
        self._fresh: deque[Unit] = deque()

    def __len__(self) -> int:
        return len(self._urgent) + len(self._fresh)

    def put(self, unit: Unit) -> None:
        """Queue a unit where its placement says."""
        (self._urgent if unit.placement.urgent else self._fresh).append(unit)

    def put_back(self, units: list[Unit]) -> None:
        """Return units a job handed back unrun to the front of the queue, in their order."""
        for unit in reversed(units):
            (self._urgent if unit.placement.urgent else self._fresh).appendleft(unit)

    def take(self, workers: int, batch_size: int) -> list[Unit]:
        """The next job's units (none when nothing waits): the first waiting unit and the ones after it
        that may share its job, at most ``ceil(waiting / workers)`` and ``batch_size`` (and, urgent ones,
        :data:`URGENT_TESTS` tests)."""
        for waiting in (self._urgent, self._fresh):
            while waiting and waiting[0].done.done():
                waiting.popleft()  # its caller gave up
        waiting = self._urgent or self._fresh
        if not waiting:
            return []
        first = waiting.popleft()
        if first.placement.alone or first.item[1].kind != "function":
            return [first]
        size = min(batch_size, max(1, -(-(len(self) + 1) // max(workers, 1))))
        taken, tests = [first], len(first.item[1].tests)
        while waiting and len(taken) < size and waiting[0].joins(first):
            if first.placement.urgent and tests + len(waiting[0].item[1].tests) > URGENT_TESTS:
                break
            unit = waiting.popleft()
            if not unit.done.done():
                taken.append(unit)
                tests += len(unit.item[1].tests)
        return taken

    def drain(self) -> list[Unit]:
        """Remove and return every waiting unit."""
        units = [*self._urgent, *self._fresh]
        self._urgent.clear()
        self._fresh.clear()
        return units
