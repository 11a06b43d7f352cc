"""Scheduling: the pool of sandboxed workers, batches of programs, and dispatching jobs to workers.

One worker per core by default (never more than the cores unless asked, because more concurrency only
adds contention). Worker processes are started and stopped by ``_workers.py``; reports become outcomes
in ``_judge.py``. A worker that stops answering is replaced, and its job is reported as ``crashed`` —
the caller decides whether to retry; the pool never raises because of what candidate code did.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import replace

from refinelab.problems import CallTest
from refinelab.sandbox._judge import crash_report, judge, value_or_outcome
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._outcome import IsolationLevel, RunResult, TestOutcome
from refinelab.sandbox._protocol import Sandbox
from refinelab.sandbox._suite import Item, Suite
from refinelab.sandbox._worker import protocol as wire
from refinelab.sandbox._workers import IsolationMode, WorkerLauncher, WorkerProcess, default_workers


def _is_cpu_timeout(report: object) -> bool:
    if not isinstance(report, dict):
        return False
    return report.get(wire.STATUS) == wire.S_TIMEOUT and report.get(wire.LIMIT) == wire.CPU_LIMIT


def _cpu_timeouts(row: list[object]) -> list[int]:
    """Indices of the tests in a program's row of reports that exceeded the CPU limit."""
    return [index for index, report in enumerate(row) if _is_cpu_timeout(report)]


def _job(items: Sequence[Item], limits: Limits, isolate: bool, job_id: int) -> dict[str, object]:
    suites: list[Suite] = []
    index: dict[int, int] = {}
    for _, suite in items:
        if id(suite) not in index:
            index[id(suite)] = len(suites)
            suites.append(suite)
    kind = items[0][1].kind
    seconds = [suite.test_seconds(limits) for _, suite in items]
    # A child's hard CPU limit: every limit it may spend (a stdio child runs one test).
    cpu_total = max((max(s, default=0.0) for s in seconds), default=0.0) if kind == "stdio" else sum(map(sum, seconds))
    return {
        wire.JOB_ID: job_id,
        wire.MODE: kind,
        wire.PROGRAMS: [program for program, _ in items],
        wire.SUITE_OF: [index[id(suite)] for _, suite in items],
        wire.SUITES: [suite.for_worker(limits) for suite in suites],
        wire.ISOLATE: isolate or kind == "stdio",
        wire.LIMITS: limits.for_worker(max(cpu_total, limits.cpu_seconds)),
    }


def _backstop(items: Sequence[Item], limits: Limits) -> float:
    """How long the host waits for a job's reply: every test's wall-clock backstop, and a margin."""
    walls = (seconds * limits.wall_factor + 1.0 for _, suite in items for seconds in suite.test_seconds(limits))
    return sum(walls) + 30.0


def _judged_row(suite: Suite, row: list[object], limits: Limits) -> tuple[TestOutcome, ...]:
    """Each test's outcome; a timeout records the limit it had."""
    outcomes = [judge(test, report) for test, report in zip(suite.tests, row)]
    if any(o.verdict == "timeout" for o in outcomes):
        seconds = suite.test_seconds(limits)
        outcomes = [replace(o, limit_seconds=s) if o.verdict == "timeout" else o for o, s in zip(outcomes, seconds)]
    return tuple(outcomes)


def _worth_confirming(outcomes: Sequence[TestOutcome], row: list[object], limits: Limits) -> bool:
    """Whether running a program with a CPU timeout again can change what was asked for: always, unless
    only the verdict is wanted and a test before its first timeout already failed."""
    timeouts = _cpu_timeouts(row)
    if not timeouts:
        return False
    return not limits.stop_at_failure or all(o.passed for o in outcomes[: timeouts[0]])


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
        limits = limits or self.limits
        results: list[RunResult | None] = [None] * len(items)
        runnable = [i for i, (_, suite) in enumerate(items) if suite.tests]
        for i in set(range(len(items))) - set(runnable):
            results[i] = RunResult((), self.isolation)
        batches = self._batches(runnable, items)
        done = await asyncio.gather(*(self._run_batch([items[i] for i in batch], limits, isolate) for batch in batches))
        for batch, batch_results in zip(batches, done):
            for i, result in zip(batch, batch_results):
                results[i] = result
        assert all(r is not None for r in results), "every item gets a result"
        return [r for r in results if r is not None]

    def _batches(self, indices: list[int], items: Sequence[Item]) -> list[list[int]]:
        """Split into batches of the same kind; function items interleaved across the batches."""
        stdio = [[i] for i in indices if items[i][1].kind == "stdio"]
        functions = [i for i in indices if items[i][1].kind == "function"]
        count = -(-len(functions) // self.batch_size) if functions else 0
        count = max(count, min(len(functions), self.size))
        return stdio + [functions[start::count] for start in range(count)]

    async def _run_batch(self, items: list[Item], limits: Limits, isolate: bool) -> list[RunResult]:
        rows, outputs = await self._raw_batch(items, limits, isolate)
        results = self._judged(items, rows, outputs, limits)
        for _ in range(limits.timeout_reruns):
            suspects = [i for i, r in enumerate(results) if _worth_confirming(r.outcomes, rows[i], limits)]
            if not suspects:
                break
            await self._confirm_timeouts(items, rows, outputs, limits, suspects)
            results = self._judged(items, rows, outputs, limits)
        return results

    def _judged(
        self, items: list[Item], rows: list[list[object]], outputs: list[str], limits: Limits
    ) -> list[RunResult]:
        return [
            RunResult(_judged_row(suite, row, limits), self.isolation, output=out)
            for (_, suite), row, out in zip(items, rows, outputs)
        ]

    async def _confirm_timeouts(
        self, items: list[Item], rows: list[list[object]], outputs: list[str], limits: Limits, suspects: list[int]
    ) -> None:
        """Run each suspect (a program that exceeded a CPU limit) again, alone, before its timeout stands.

        The first run that stays within the limit replaces the report (in place): of two runs of the same
        program, the faster is the truer, since load only ever adds CPU time. See ``Limits.timeout_reruns``.
        """
        again = await asyncio.gather(*(self._rerun(*items[i], rows[i], limits) for i in suspects))
        for i, (row, output) in zip(suspects, again):
            if row is not None:
                rows[i], outputs[i] = row, output

    async def _rerun(
        self, code: str, suite: Suite, row: list[object], limits: Limits
    ) -> tuple[list[object] | None, str]:
        """A new row for program ``code`` if a second run stays within the CPU limit, else ``None``.

        A function program whose tests share one process runs all its tests again (an earlier test may
        have warmed a cache a later one relies on); a stdio program, or a function program whose every
        test gets its own verdict (``after_timeout="continue"``), only the tests that timed out (and,
        when only the verdict is wanted, those skipped after them).
        """
        if suite.kind == "function" and limits.after_timeout == "skip":
            (again,), (output,) = await self._raw_batch([(code, suite)], limits, True)
            return (None, "") if _cpu_timeouts(again) else (again, output)
        timed_out = _cpu_timeouts(row)
        chosen = list(range(timed_out[0], len(row))) if limits.stop_at_failure else timed_out
        (again,), _ = await self._raw_batch([(code, suite.subset(chosen))], limits, True)
        if limits.stop_at_failure and _is_cpu_timeout(again[0]):
            return None, ""
        merged = list(row)
        for index, report in zip(chosen, again):
            if limits.stop_at_failure or not _is_cpu_timeout(report):
                merged[index] = report
        return (None, "") if merged == row else (merged, "")

    async def _raw_batch(
        self, items: list[Item], limits: Limits, isolate: bool
    ) -> tuple[list[list[object]], list[str]]:
        """The worker's reports, one row per program (a crashed worker yields ``crashed`` reports)."""
        reply = await self._dispatch(lambda: _job(items, limits, isolate, self._new_id()), _backstop(items, limits))
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
        (row,), _ = await self._raw_batch([(code, suite)], limits or self.limits, True)
        return [value_or_outcome(test, report) for test, report in zip(tests, row)]

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
