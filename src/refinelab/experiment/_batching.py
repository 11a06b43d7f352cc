"""How ``run`` uses the sandbox: many units' programs in shared jobs, each distinct program scored once.

A unit (one strategy on one problem) runs few programs at a time: a single-pass unit runs one program on
the visible tests, then the same on the hidden ones. Sent one by one, each program costs a sandbox job
of its own (a fork, a round trip, a reply), ten times what ``check`` pays per program, which sends its
samples in batches. :class:`Batching` is a :class:`~refinelab.sandbox.Sandbox` in front of the pool: the
programs that concurrent units ask to run while the workers are busy are sent together, in one
``run_items`` call, as soon as a worker is free (no fixed delay: an idle pool runs a request at once).

:class:`HiddenScoring` scores attempts on the hidden tests once per distinct (program, problem) in a run:
repeats and configurations that arrive at the same program share its result.

See docs/design/sandbox.md ("``run``'s sandbox path").
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from refinelab.problems import Problem
from refinelab.runtime import SandboxChoice
from refinelab.sandbox import IsolationLevel, Item, Limits, RunResult, Sandbox, Suite, TestOutcome, run_scored
from refinelab.strategies import Trajectory


@dataclass(frozen=True)
class RunLimits:
    """The limits one run uses, from its spec's ``[sandbox]`` table."""

    pool: Limits
    """The pool's: visible tests (every outcome: strategies show failures and count passes)."""
    hidden: Limits
    """Hidden-test scoring: only the verdict unless ``test_details`` (see :attr:`Limits.stop_at_failure`)."""
    agreement: Limits
    """Generated tests in dual agreement (CodeT's 0.1 s each by default)."""

    @classmethod
    def of(cls, sandbox: SandboxChoice) -> RunLimits:
        """The limits a run's sandbox choice (:func:`refinelab.runtime.choose_sandbox`) asks for."""
        return cls(sandbox.visible_limits(), sandbox.hidden_limits(), sandbox.agreement_limits())


@dataclass
class _Request:
    items: Sequence[Item]
    limits: Limits
    isolate: bool
    done: asyncio.Future[list[RunResult]]


class Batching(Sandbox):
    """The pool, with concurrent callers' programs sent together (see the module docstring)."""

    def __init__(self, pool: Sandbox) -> None:
        self.pool = pool
        self.isolation: IsolationLevel = pool.isolation
        self.limits = pool.limits
        self.size = pool.size
        self.batch_size = pool.batch_size
        self._pending: list[_Request] = []
        self._wake = asyncio.Event()
        self._slots = asyncio.Semaphore(max(pool.size, 1))
        self._loop: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[None]] = set()

    async def run(self, code: str, suite: Suite, *, limits: Limits | None = None) -> RunResult:
        """One program against a suite (sent with whatever else is waiting)."""
        (result,) = await self.run_items([(code, suite)], limits=limits)
        return result

    async def run_items(
        self, items: Sequence[Item], *, limits: Limits | None = None, isolate: bool = False
    ) -> list[RunResult]:
        """Programs against their suites, sent with every other request waiting when a worker frees up."""
        if not items:
            return []
        done: asyncio.Future[list[RunResult]] = asyncio.get_running_loop().create_future()
        self._pending.append(_Request(items, limits or self.limits, isolate, done))
        self._wake.set()
        if self._loop is None or self._loop.done():
            self._loop = asyncio.ensure_future(self._dispatch())
        return await done

    async def values(
        self,
        code: str,
        expressions: Sequence[str],
        *,
        entry_point: str | None = None,
        setup: str = "",
        limits: Limits | None = None,
    ) -> list[object | TestOutcome]:
        """Values of expressions against a trusted program: straight to the pool."""
        return await self.pool.values(code, expressions, entry_point=entry_point, setup=setup, limits=limits)

    async def aclose(self) -> None:
        """Stop dispatching (after every request sent has its answer)."""
        if self._running:
            await asyncio.gather(*self._running, return_exceptions=True)
        if self._loop is not None:
            self._loop.cancel()
            await asyncio.gather(self._loop, return_exceptions=True)

    async def _dispatch(self) -> None:
        """While requests wait: take a free slot, then send everything waiting (one call per kind)."""
        while True:
            await self._wake.wait()
            await self._slots.acquire()
            self._wake.clear()
            taken, self._pending = self._pending, []
            if not taken:
                self._slots.release()
                continue
            task = asyncio.ensure_future(self._send(taken))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def _send(self, requests: list[_Request]) -> None:
        try:
            kinds: dict[tuple[Limits, bool], list[_Request]] = {}
            for request in requests:
                kinds.setdefault((request.limits, request.isolate), []).append(request)
            await asyncio.gather(*(self._send_kind(group) for group in kinds.values()))
        finally:
            self._slots.release()

    async def _send_kind(self, requests: list[_Request]) -> None:
        items = [item for request in requests for item in request.items]
        first = requests[0]
        try:
            results = await self.pool.run_items(items, limits=first.limits, isolate=first.isolate)
        except Exception as exc:  # noqa: BLE001 - every waiting caller gets the failure, whatever it is
            for request in requests:
                if not request.done.done():
                    request.done.set_exception(exc)
            return
        except BaseException:
            for request in requests:
                request.done.cancel()
            raise
        start = 0
        for request in requests:
            if not request.done.done():
                request.done.set_result(results[start : start + len(request.items)])
            start += len(request.items)


@dataclass
class HiddenScoring:
    """Scores attempts on hidden tests, each distinct (program, problem) once per run."""

    sandbox: Sandbox
    """Where programs run (a :class:`Batching` in ``run``)."""
    limits: Limits
    """The hidden tests' limits."""
    suites: dict[int, tuple[Problem, Suite]] = field(default_factory=dict)
    """Each problem's hidden suite, built once (keyed by the problem object, kept alive here)."""
    results: dict[tuple[str, int], asyncio.Future[RunResult]] = field(default_factory=dict)
    """(program, problem) -> its result, once asked for."""

    async def score(self, trajectory: Trajectory, problem: Problem) -> list[RunResult | None]:
        """Each attempt's result on the hidden tests (``None`` for an attempt without code)."""
        codes = sorted({a.code for a in trajectory.attempts if a.code is not None})
        new = [code for code in codes if (code, id(problem)) not in self.results]
        loop = asyncio.get_running_loop()
        for code in new:
            self.results[(code, id(problem))] = loop.create_future()
        if new:
            suite = self.suites.setdefault(id(problem), (problem, Suite.hidden(problem)))[1]
            try:
                found = await run_scored(self.sandbox, [(code, suite) for code in new], limits=self.limits)
            except BaseException as exc:
                for code in new:  # a unit waiting for the same program fails too; a later one runs it again
                    waiting = self.results.pop((code, id(problem)))
                    waiting.set_exception(exc)
                    waiting.exception()  # retrieved: no "never retrieved" noise when nobody else waits
                raise
            for code, result in zip(new, found):
                self.results[(code, id(problem))].set_result(result)
        by_code = {code: await asyncio.shield(self.results[(code, id(problem))]) for code in codes}
        return [None if a.code is None else by_code[a.code] for a in trajectory.attempts]
