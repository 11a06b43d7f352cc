"""Scheduling: the pool of sandboxed workers, batches of programs, and dispatching jobs to workers.

One worker per core by default (never more than the cores unless asked, because more concurrency only
adds contention). Worker processes are started and stopped by ``_workers.py``; reports become outcomes
in ``_judge.py``. A worker that stops answering is replaced, and its job is reported as ``crashed`` —
the caller decides whether to retry; the pool never raises because of what candidate code did.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from refinelab.problems import CallTest
from refinelab.sandbox._confirm import Rerun, confirmed
from refinelab.sandbox._judge import ProgramReports, Ran, crash_report, value_or_outcome
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._outcome import IsolationLevel, RunResult, TestOutcome
from refinelab.sandbox._protocol import Sandbox
from refinelab.sandbox._suite import InputItem, Item, Suite, SuiteInputs
from refinelab.sandbox._worker import protocol as wire
from refinelab.sandbox._workers import IsolationMode, WorkerLauncher, WorkerProcess, default_workers

T = TypeVar("T")


def _job(items: Sequence[InputItem], limits: Limits, isolate: bool, job_id: int) -> dict[str, object]:
    suites: list[SuiteInputs] = []
    index: dict[int, int] = {}
    for _, inputs in items:
        if id(inputs) not in index:
            index[id(inputs)] = len(suites)
            suites.append(inputs)
    kind = items[0][1].kind
    seconds = [inputs.test_seconds(limits) for _, inputs in items]
    # A child's hard CPU limit: every limit it may spend (a stdio child runs one test).
    cpu_total = max((max(s, default=0.0) for s in seconds), default=0.0) if kind == "stdio" else sum(map(sum, seconds))
    return {
        wire.JOB_ID: job_id,
        wire.MODE: kind,
        wire.PROGRAMS: [program for program, _ in items],
        wire.SUITE_OF: [index[id(inputs)] for _, inputs in items],
        wire.SUITES: [inputs.for_worker(limits) for inputs in suites],
        wire.ISOLATE: isolate or kind == "stdio",
        wire.LIMITS: limits.for_worker(max(cpu_total, limits.cpu_seconds)),
    }


def input_items(items: Sequence[Item], limits: Limits) -> list[InputItem]:
    """Each program with its suite's inputs under ``limits`` (one :class:`SuiteInputs` per distinct suite,
    each test's CPU limit resolved: see :meth:`Suite.inputs`)."""
    inputs: dict[int, SuiteInputs] = {}
    for _, suite in items:
        if id(suite) not in inputs:
            inputs[id(suite)] = suite.inputs(limits)
    return [(program, inputs[id(suite)]) for program, suite in items]


def _backstop(items: Sequence[InputItem], limits: Limits) -> float:
    """How long the host waits for a job's reply: every test's wall-clock backstop, and a margin."""
    walls = (seconds * limits.wall_factor + 1.0 for _, inputs in items for seconds in inputs.test_seconds(limits))
    return sum(walls) + 30.0


class WorkerPool(Sandbox):
    """Runs candidate programs against tests in pre-started sandboxed workers (a :class:`Sandbox`).

    Use as an async context manager::

        async with WorkerPool() as pool:
            result = await pool.run(code, Suite.of(tests, entry_point="add"))
    """

    def __init__(
        self,
        *,
        workers: int | None = None,
        limits: Limits | None = None,
        isolation: IsolationMode = "auto",
        batch_size: int = 32,
        packages: Sequence[str] = (),
    ) -> None:
        self.size = workers or default_workers()
        self.batch_size = max(1, batch_size)
        self.packages = tuple(packages)
        self.limits = limits or Limits()
        self.mode: IsolationMode = isolation
        self.isolation: IsolationLevel = "none"
        self._idle: asyncio.Queue[WorkerProcess] = asyncio.Queue()
        self._all: list[WorkerProcess] = []
        self._launcher = WorkerLauncher(isolation, self.limits, self.packages)
        self._next_id = 0
        self.stats: dict[str, float] = {}
        """Totals the workers reported: children forked, their CPU seconds, job wall and worker CPU."""

    async def __aenter__(self) -> WorkerPool:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Choose the isolation level and start the workers."""
        workers = await self._launcher.start(self.size)
        self.isolation = workers[0].command.isolation
        for worker in workers:
            self._all.append(worker)
            self._idle.put_nowait(worker)

    @property
    def isolation_note(self) -> str:
        """What the isolation got, in words, where it is not bubblewrap (``landlock``: the Landlock ABI,
        how signals are confined, and whose uid the jobs run as); empty otherwise."""
        return self._launcher.note

    async def close(self) -> None:
        """Stop every worker."""
        await asyncio.gather(*(worker.stop() for worker in self._all))
        self._all.clear()
        self._launcher.cleanup()

    async def run(self, code: str, suite: Suite, *, limits: Limits | None = None) -> RunResult:
        """Run one program against a suite and judge every test. Never raises for what the code does."""
        (result,) = await self.run_items([(code, suite)], limits=limits)
        return result

    async def run_many(
        self, programs: Sequence[str], suite: Suite, *, limits: Limits | None = None, isolate: bool = False
    ) -> list[RunResult]:
        """Run several programs against the same suite (the samples of one problem)."""
        return await self.run_items([(program, suite) for program in programs], limits=limits, isolate=isolate)

    async def run_items(
        self, items: Sequence[Item], *, limits: Limits | None = None, isolate: bool = False
    ) -> list[RunResult]:
        """Run programs, each against its own suite, and judge every test; results in item order.

        Function programs are batched: one child process runs a batch of programs in turn, with the
        interpreter state restored between them and a fresh child whenever a program leaves anything
        behind that cannot be restored (see ``_worker/state.py``). Batches interleave the items, so the
        samples of one slow problem spread over all workers. ``isolate=True`` gives every program its
        own process (slower; the strongest separation between programs). Stdio programs always get a
        process per test. CPU timeouts are confirmed by a rerun where it can change the verdict
        (``_confirm.py``, the rule :class:`ClusterSandbox` follows too).
        """
        limits = limits or self.limits
        inputs = input_items(items, limits)

        async def batch(chosen: list[int]) -> list[RunResult]:
            batch_inputs = [inputs[i] for i in chosen]
            found = await self._raw_batch(batch_inputs, limits, isolate)
            return await confirmed([items[i] for i in chosen], batch_inputs, found, limits, self._alone(limits))

        return await self._in_batches(inputs, batch, RunResult((), self.isolation))

    async def reports(
        self, items: Sequence[InputItem], *, limits: Limits | None = None, isolate: bool = False
    ) -> list[ProgramReports]:
        """What each program did on each test, as the workers reported it, not judged; in item order.

        :meth:`run_items` without the judging and without the timeout reruns: the programs get only their
        suites' inputs, so this is what runs where expected values must not go (a cluster node). The
        caller judges, and sends the reruns worth running back (``_confirm.py``).
        """
        limits = limits or self.limits

        async def batch(chosen: list[int]) -> list[ProgramReports]:
            return [ran.reports for ran in await self._raw_batch([items[i] for i in chosen], limits, isolate)]

        return await self._in_batches(items, batch, ProgramReports((), ""))

    async def _in_batches(
        self, items: Sequence[InputItem], run: Callable[[list[int]], Awaitable[list[T]]], empty: T
    ) -> list[T]:
        """``run`` on each batch of the items with tests, concurrently; ``empty`` for an item without."""
        found: list[T | None] = [None] * len(items)
        runnable = [i for i, (_, inputs) in enumerate(items) if inputs.tests]
        for i in set(range(len(items))) - set(runnable):
            found[i] = empty
        batches = self._batches(runnable, items)
        for batch, results in zip(batches, await asyncio.gather(*(run(batch) for batch in batches))):
            for i, result in zip(batch, results):
                found[i] = result
        assert all(r is not None for r in found), "every item gets a result"
        return [r for r in found if r is not None]

    def _batches(self, indices: list[int], items: Sequence[InputItem]) -> list[list[int]]:
        """Split into batches of the same kind; function items interleaved across the batches."""
        stdio = [[i] for i in indices if items[i][1].kind == "stdio"]
        functions = [i for i in indices if items[i][1].kind == "function"]
        count = -(-len(functions) // self.batch_size) if functions else 0
        count = max(count, min(len(functions), self.size))
        return stdio + [functions[start::count] for start in range(count)]

    def _alone(self, limits: Limits) -> Rerun:
        """How a confirming rerun runs here: one program, a job of its own, in a fresh process."""

        async def rerun(code: str, inputs: SuiteInputs) -> Ran:
            (ran,) = await self._raw_batch([(code, inputs)], limits, True)
            return ran

        return rerun

    async def _raw_batch(self, items: list[InputItem], limits: Limits, isolate: bool) -> list[Ran]:
        """The worker's reports, one per program (a crashed worker yields ``crashed`` reports)."""
        reply = await self._dispatch(lambda: _job(items, limits, isolate, self._new_id()), _backstop(items, limits))
        if reply is None:
            crash = crash_report("the sandbox worker stopped answering and was replaced")
            return [self._ran([crash] * len(inputs.tests), "") for _, inputs in items]
        rows, outputs = reply[wire.RESULTS], reply.get(wire.OUTPUTS)
        assert isinstance(rows, list) and isinstance(outputs, list)
        self._record(reply.get(wire.STATS))
        return [self._ran(row, str(out)) for row, out in zip(rows, outputs)]

    def _ran(self, row: Sequence[object], output: str) -> Ran:
        return Ran(ProgramReports(tuple(row), output), None, self.isolation)

    def _record(self, stats: object) -> None:
        if isinstance(stats, dict):
            for key, value in stats.items():
                if isinstance(value, (int, float)):
                    self.stats[key] = self.stats.get(key, 0.0) + value

    async def values(
        self,
        code: str,
        expressions: Sequence[str],
        *,
        entry_point: str | None = None,
        setup: str = "",
        limits: Limits | None = None,
    ) -> list[object | TestOutcome]:
        """Evaluate expressions against a trusted program (a reference solution) and return the values.

        Used to compute expected outputs (HumanEval+). An expression that fails yields its
        :class:`TestOutcome` instead of a value.
        """
        tests = [CallTest(expr, None) for expr in expressions]
        suite = Suite.of(tests, entry_point=entry_point, setup=setup)
        limits = limits or self.limits
        (ran,) = await self._raw_batch([(code, suite.inputs(limits))], limits, True)
        return [value_or_outcome(test, report) for test, report in zip(tests, ran.reports.row)]

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def _dispatch(self, job: Callable[[], dict[str, object]], backstop: float) -> dict[str, object] | None:
        """Send a job to the next free worker; the job is built only then (jobs waiting for a worker hold
        no copies of their suites)."""
        worker = await self._idle.get()
        try:
            return await worker.call(job(), backstop)
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionError, ValueError):
            await worker.stop()
            await worker.start()
            return None
        finally:
            self._idle.put_nowait(worker)
