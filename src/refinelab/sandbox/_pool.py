"""Scheduling: the pool of sandboxed workers, batches of programs, and dispatching jobs to workers.

One worker per core by default (never more than the cores unless asked, because more concurrency only
adds contention). Worker processes are started and stopped by ``_workers.py``; reports become outcomes
in ``_judge.py``. A worker that stops answering is replaced, and its job is reported as ``crashed`` —
the caller decides whether to retry; the pool never raises because of what candidate code did.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from refinelab.problems import CallTest
from refinelab.sandbox._judge import ProgramReports, crash_report, judged, value_or_outcome
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._outcome import IsolationLevel, RunResult, TestOutcome
from refinelab.sandbox._protocol import Sandbox
from refinelab.sandbox._suite import InputItem, Item, Suite, SuiteInputs
from refinelab.sandbox._worker import protocol as wire
from refinelab.sandbox._workers import IsolationMode, WorkerLauncher, WorkerProcess, default_workers


def _is_cpu_timeout(report: object) -> bool:
    if not isinstance(report, dict):
        return False
    return report.get(wire.STATUS) == wire.S_TIMEOUT and report.get(wire.LIMIT) == wire.CPU_LIMIT


def _cpu_timeouts(row: list[object]) -> list[int]:
    """Indices of the tests in a program's row of reports that exceeded the CPU limit."""
    return [index for index, report in enumerate(row) if _is_cpu_timeout(report)]


def _job(items: Sequence[InputItem], limits: Limits, isolate: bool, job_id: int) -> dict[str, object]:
    suites: list[SuiteInputs] = []
    index: dict[int, int] = {}
    for _, inputs in items:
        if id(inputs) not in index:
            index[id(inputs)] = len(suites)
            suites.append(inputs)
    kind = items[0][1].kind
    test_count = 1 if kind == "stdio" else sum(len(inputs.tests) for _, inputs in items)
    return {
        wire.JOB_ID: job_id,
        wire.MODE: kind,
        wire.PROGRAMS: [program for program, _ in items],
        wire.SUITE_OF: [index[id(inputs)] for _, inputs in items],
        wire.SUITES: [inputs.for_worker() for inputs in suites],
        wire.ISOLATE: isolate or kind == "stdio",
        wire.LIMITS: limits.for_worker(test_count),
    }


def input_items(items: Sequence[Item]) -> list[InputItem]:
    """Each program with its suite's inputs (one :class:`SuiteInputs` per distinct suite)."""
    inputs: dict[int, SuiteInputs] = {}
    for _, suite in items:
        if id(suite) not in inputs:
            inputs[id(suite)] = suite.inputs()
    return [(program, inputs[id(suite)]) for program, suite in items]


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
        process per test.
        """
        found = await self.reports(input_items(items), limits=limits, isolate=isolate)
        return [judged(suite, reports, self.isolation) for (_, suite), reports in zip(items, found)]

    async def reports(
        self, items: Sequence[InputItem], *, limits: Limits | None = None, isolate: bool = False
    ) -> list[ProgramReports]:
        """What each program did on each test, as the workers reported it, not judged; in item order.

        :meth:`run_items` without the judging: the programs get only their suites' inputs, so this is
        what runs where expected values must not go (a cluster node; the caller judges). Batching and
        the confirmation of CPU timeouts are :meth:`run_items`'s.
        """
        limits = limits or self.limits
        found: list[ProgramReports | None] = [None] * len(items)
        runnable = [i for i, (_, inputs) in enumerate(items) if inputs.tests]
        for i in set(range(len(items))) - set(runnable):
            found[i] = ProgramReports((), "")
        batches = self._batches(runnable, items)
        done = await asyncio.gather(*(self._run_batch([items[i] for i in batch], limits, isolate) for batch in batches))
        for batch, batch_reports in zip(batches, done):
            for i, reports in zip(batch, batch_reports):
                found[i] = reports
        assert all(r is not None for r in found), "every item gets its reports"
        return [r for r in found if r is not None]

    def _batches(self, indices: list[int], items: Sequence[InputItem]) -> list[list[int]]:
        """Split into batches of the same kind; function items interleaved across the batches."""
        stdio = [[i] for i in indices if items[i][1].kind == "stdio"]
        functions = [i for i in indices if items[i][1].kind == "function"]
        count = -(-len(functions) // self.batch_size) if functions else 0
        count = max(count, min(len(functions), self.size))
        return stdio + [functions[start::count] for start in range(count)]

    async def _run_batch(self, items: list[InputItem], limits: Limits, isolate: bool) -> list[ProgramReports]:
        rows, outputs = await self._raw_batch(items, limits, isolate)
        await self._confirm_timeouts(items, rows, outputs, limits)
        return [ProgramReports(tuple(row), output) for row, output in zip(rows, outputs)]

    async def _confirm_timeouts(
        self, items: list[InputItem], rows: list[list[object]], outputs: list[str], limits: Limits
    ) -> None:
        """Run each program that exceeded the CPU limit again, alone, before its timeout stands.

        The first run that stays within the limit replaces the report (in place): of two runs of the same
        program, the faster is the truer, since load only ever adds CPU time. See ``Limits.timeout_reruns``.
        """
        for _ in range(limits.timeout_reruns):
            suspects = [i for i, row in enumerate(rows) if _cpu_timeouts(row)]
            if not suspects:
                return
            again = await asyncio.gather(*(self._rerun(*items[i], rows[i], limits) for i in suspects))
            for i, (row, output) in zip(suspects, again):
                if row is not None:
                    rows[i], outputs[i] = row, output

    async def _rerun(
        self, code: str, inputs: SuiteInputs, row: list[object], limits: Limits
    ) -> tuple[list[object] | None, str]:
        """A new row for program ``code`` if a second run stays within the CPU limit, else ``None``.

        A function program runs all its tests again (its tests share one process, and an earlier test may
        have warmed a cache a later one relies on); a stdio program only the tests that timed out.
        """
        if inputs.kind == "function":
            (again,), (output,) = await self._raw_batch([(code, inputs)], limits, True)
            return (None, "") if _cpu_timeouts(again) else (again, output)
        timed_out = _cpu_timeouts(row)
        (again,), _ = await self._raw_batch([(code, inputs.subset(timed_out))], limits, True)
        merged = list(row)
        for index, report in zip(timed_out, again):
            if not _is_cpu_timeout(report):
                merged[index] = report
        return (None, "") if merged == row else (merged, "")

    async def _raw_batch(
        self, items: list[InputItem], limits: Limits, isolate: bool
    ) -> tuple[list[list[object]], list[str]]:
        """The worker's reports, one row per program (a crashed worker yields ``crashed`` reports)."""
        job = _job(items, limits, isolate, self._new_id())
        backstop = limits.wall_seconds * sum(len(suite.tests) for _, suite in items) + 30.0
        reply = await self._dispatch(job, backstop)
        if reply is None:
            crash = crash_report("the sandbox worker stopped answering and was replaced")
            return [[crash] * len(suite.tests) for _, suite in items], [""] * len(items)
        rows, outputs = reply[wire.RESULTS], reply.get(wire.OUTPUTS)
        assert isinstance(rows, list) and isinstance(outputs, list)
        self._record(reply.get(wire.STATS))
        return rows, [str(out) for out in outputs]

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
        (row,), _ = await self._raw_batch([(code, suite.inputs())], limits or self.limits, True)
        return [value_or_outcome(test, report) for test, report in zip(tests, row)]

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def _dispatch(self, job: dict[str, object], backstop: float) -> dict[str, object] | None:
        worker = await self._idle.get()
        try:
            return await worker.call(job, backstop)
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionError, ValueError):
            await worker.stop()
            await worker.start()
            return None
        finally:
            self._idle.put_nowait(worker)
