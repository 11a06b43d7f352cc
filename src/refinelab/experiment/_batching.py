"""How ``run`` scores attempts: each distinct program once, as soon as it exists, and its limits.

A unit (one strategy on one problem) runs few programs at a time: a single-pass unit runs one program on
the visible tests and on the hidden ones. The sandbox puts the programs concurrent units ask for while
its workers are busy together in shared jobs (the pool's queue, ``sandbox/_queue.py``; a cluster's
driver merges its queued chunks the same way), and hands each program its result when its own job ends.

:class:`HiddenScoring` scores attempts on the hidden tests once per distinct (program, problem) in a run:
repeats and configurations that arrive at the same program share its result. A unit starts an attempt's
scoring as soon as the strategy has the program (``Env.on_attempt``), so it runs beside the visible
tests rather than after the strategy ends: a looping program's two limits (and their reruns) overlap.

See docs/design/sandbox.md ("``run``'s sandbox path").
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from refinelab.problems import Problem
from refinelab.runtime import SandboxChoice
from refinelab.sandbox import Limits, RunResult, Sandbox, Suite, run_scored
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
class HiddenScoring:
    """Scores attempts on hidden tests, each distinct (program, problem) once per run; an attempt's scoring
    may start as soon as its program exists (:meth:`start`), beside the strategy's own runs."""

    sandbox: Sandbox
    """Where programs run (the run's pool or cluster)."""
    limits: Limits
    """The hidden tests' limits."""
    suites: dict[int, tuple[Problem, Suite]] = field(default_factory=dict)
    """Each problem's hidden suite, built once (keyed by the problem object, kept alive here)."""
    results: dict[tuple[str, int], asyncio.Future[RunResult]] = field(default_factory=dict)
    """(program, problem) -> its result, once asked for."""
    running: set[asyncio.Task[None]] = field(default_factory=set)
    """Scorings under way (cancelled by :meth:`aclose`)."""

    def start(self, code: str, problem: Problem) -> None:
        """Begin scoring ``code`` on ``problem``'s hidden tests now (unless it already is); :meth:`score`
        picks the result up."""
        self._futures([code], problem)

    async def score(self, trajectory: Trajectory, problem: Problem) -> list[RunResult | None]:
        """Each attempt's result on the hidden tests (``None`` for an attempt without code)."""
        codes = sorted({a.code for a in trajectory.attempts if a.code is not None})
        futures = self._futures(codes, problem)
        by_code = {code: await asyncio.shield(future) for code, future in zip(codes, futures)}
        return [None if a.code is None else by_code[a.code] for a in trajectory.attempts]

    async def aclose(self) -> None:
        """Stop scorings nobody waits for any more (a run that was interrupted)."""
        for task in list(self.running):
            task.cancel()
        await asyncio.gather(*self.running, return_exceptions=True)

    def _futures(self, codes: Sequence[str], problem: Problem) -> list[asyncio.Future[RunResult]]:
        """Each program's result to come, its scoring started now where it was not asked for before."""
        new = [code for code in codes if (code, id(problem)) not in self.results]
        loop = asyncio.get_running_loop()
        for code in new:
            self.results[(code, id(problem))] = loop.create_future()
        if new:
            task = asyncio.ensure_future(self._run(new, problem))
            self.running.add(task)
            task.add_done_callback(self.running.discard)
        return [self.results[(code, id(problem))] for code in codes]

    async def _run(self, new: list[str], problem: Problem) -> None:
        suite = self.suites.setdefault(id(problem), (problem, Suite.hidden(problem)))[1]
        try:
            found = await run_scored(self.sandbox, [(code, suite) for code in new], limits=self.limits)
        except BaseException as exc:
            for code in new:  # a unit waiting for the same program fails too; a later one runs it again
                waiting = self.results.pop((code, id(problem)))
                if isinstance(exc, asyncio.CancelledError):
                    waiting.cancel()
                    continue
                waiting.set_exception(exc)
                waiting.exception()  # retrieved: no "never retrieved" noise when nobody else waits
            if not isinstance(exc, Exception):
                raise
            return
        for code, result in zip(new, found):
            self.results[(code, id(problem))].set_result(result)
