"""Scheduling: the pool of sandboxed workers, batches of programs, and dispatching jobs to workers.

One worker per core by default (never more than the cores unless asked, because more concurrency only
adds contention). Worker processes are started and stopped by ``_workers.py``; reports become outcomes
in ``_judge.py``. A worker that stops answering is replaced, and its job is reported as ``crashed`` —
the caller decides whether to retry; the pool never raises because of what candidate code did.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import os
import time
from collections import OrderedDict
from collections.abc import Sequence

from refinelab.sandbox._confirm import Rerun, confirmed
from refinelab.sandbox._judge import ProgramReports, Ran, crash_report, reports_of, value_tests, values_of
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._machine import this_machine
from refinelab.sandbox._outcome import IsolationLevel, RunResult, TestOutcome
from refinelab.sandbox._protocol import Sandbox
from refinelab.sandbox._queue import Placement, Unit, UnitQueue, current_placement
from refinelab.sandbox._suite import InputItem, Item, Suite, SuiteInputs
from refinelab.sandbox._trace import JobTrace, chain_of
from refinelab.sandbox._worker import protocol as wire
from refinelab.sandbox._workers import IsolationMode, WorkerLauncher, WorkerProcess, default_workers

_INPUTS_KEPT = 128
"""Suites whose inputs the pool keeps built (a program's stages and a problem's samples reuse them)."""
SPECULATE_AFTER = 0.5
"""Seconds a program may run, with workers idle and nothing waiting, before its confirming rerun starts
beside it (:meth:`WorkerPool._speculate`)."""


def _meter(units: list[Unit], stats: object) -> None:
    """Give each unit's :class:`Meter` (if its placement has one) its share of the job's CPU: what the
    worker measured its program's steps took (``program_cpu``), and an even share of the rest (forking,
    the worker's own work); an even share of it all where the worker measured none (a stdio job)."""
    if not isinstance(stats, dict):
        return
    cpu = float(stats.get("child_cpu") or 0.0) + float(stats.get("worker_cpu") or 0.0)
    own = _program_cpu(stats.get("program_cpu"), len(units), cpu)
    rest = max(cpu - sum(own), 0.0) / len(units)
    for unit, spent in zip(units, own):
        if unit.placement.meter is not None:
            unit.placement.meter.add(spent + rest)


def _traced(trace: JobTrace, units: list[Unit], started: float, stats: object) -> None:
    """Record a job that has just ended in the job trace (``_trace.py``)."""
    queued: dict[str, float] = {}
    for unit in units:
        queued[unit.chain] = min(queued.get(unit.chain, unit.submitted), unit.submitted)
    values = all(unit.chain.startswith("values:") for unit in units)
    overlaps = all(unit.placement.overlaps for unit in units)
    trace.job(queued, started, stats, programs=len(units), values=values, overlaps=overlaps)


def _program_cpu(found: object, programs: int, cpu: float) -> list[float]:
    """Each program's CPU seconds as the worker measured them, where they read as such (the worker takes
    them from what the children say, which a program could garble): finite, not negative, and together at
    most the job's (scaled down to it)."""
    if not (isinstance(found, list) and len(found) == programs and _seconds(cpu)):
        return [0.0] * programs
    numbers = [min(float(x), cpu) if _seconds(x) else 0.0 for x in found]  # each at most the job's: no overflow
    total = sum(numbers)
    return numbers if total <= cpu else [n * (cpu / total) for n in numbers]


def _seconds(value: object) -> bool:
    """Whether ``value`` reads as a number of seconds (a finite number, not negative, not a boolean)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _backed_up_until(unit: Unit) -> float:
    """Seconds into its job until which a program's confirming rerun, started then, ends before the program's
    grace would (a loop's run ends at one and a half limits, the rerun a limit after it starts: half a limit,
    its longest test's); for ever without a grace."""
    if unit.withdraw is None:
        return math.inf
    limits = unit.limits
    return limits.timeout_grace * max(unit.item[1].test_seconds(limits), default=limits.cpu_seconds)


_SHARED_UID = frozenset({"landlock", "none"})
"""Isolations whose jobs run under a uid other processes share (:data:`~protocol.PROCESSES_SHARED`)."""


def _job(
    items: Sequence[InputItem], limits: Limits, isolate: bool, job_id: int, *, grace: bool = False, shared: bool = False
) -> bytes:
    """The job as the worker reads it (JSON), each suite's tests written once per suite and limits
    (:meth:`SuiteInputs.wire_json`), not again for every job of every program that runs them; ``grace``: its
    tests may run past their limits by ``limits.timeout_grace`` (:meth:`WorkerPool._grace`); ``shared``: its
    uid is shared (:data:`~protocol.PROCESSES_SHARED`)."""
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
    head = {
        wire.JOB_ID: job_id,
        wire.MODE: kind,
        wire.PROGRAMS: [program for program, _ in items],
        wire.SUITE_OF: [index[id(inputs)] for _, inputs in items],
        wire.ISOLATE: isolate or kind == "stdio",
        wire.LIMITS: {
            **limits.for_worker(max(cpu_total, limits.cpu_seconds), grace=grace),
            wire.PROCESSES_SHARED: shared,
        },
    }
    written = ", ".join(inputs.wire_json(limits) for inputs in suites)
    return f"{json.dumps(head)[:-1]}, {json.dumps(wire.SUITES)}: [{written}]}}".encode()


def input_items(items: Sequence[Item], limits: Limits) -> list[InputItem]:
    """Each program with its suite's inputs under ``limits`` (one :class:`SuiteInputs` per distinct suite,
    each test's CPU limit resolved: see :meth:`Suite.inputs`)."""
    inputs: dict[int, SuiteInputs] = {}
    for _, suite in items:
        if id(suite) not in inputs:
            inputs[id(suite)] = suite.inputs(limits)
    return [(program, inputs[id(suite)]) for program, suite in items]


def _rerun_is_whole(inputs: SuiteInputs, limits: Limits) -> bool:
    """Whether the run that confirms a timeout of a program on ``inputs`` is the whole program again
    (``_confirm._again``): a function program whose tests stop at a timeout, with a rerun allowed."""
    return inputs.kind == "function" and limits.after_timeout == "skip" and limits.timeout_reruns >= 1


def _backstop(items: Sequence[InputItem], limits: Limits) -> float:
    """How long the host waits for a job's reply on an idle machine: every test's wall-clock backstop, and a
    margin (stretched by the machine's load: ``_workers._stretched``)."""
    walls = (sum(inputs.test_seconds(limits)) * limits.wall_factor + len(inputs.tests) for _, inputs in items)
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
        batch_size: int = 8,
        packages: Sequence[str] = (),
    ) -> None:
        self.size = workers or default_workers()
        self.batch_size = max(1, batch_size)
        """Programs in one job at most: few, so no job holds a worker long (a wrong program may spend its
        whole limit; a job of 32 such took 17 CPU seconds on HumanEval+), and enough that the fork and round
        trip of a job stay a small share of its programs' cost."""
        self.packages = tuple(packages)
        self.limits = limits or Limits()
        self.mode: IsolationMode = isolation
        self.isolation: IsolationLevel = "none"
        self.machine: str | None = this_machine()
        self._idle: list[WorkerProcess] = []
        self._all: list[WorkerProcess] = []
        self._queue = UnitQueue()
        self._jobs: set[asyncio.Task[None]] = set()
        self._running: dict[Unit, float] = {}  # programs in a job now, and when it started
        self._timer: asyncio.TimerHandle | None = None
        self._pump_soon = False
        self._inputs: OrderedDict[int, tuple[Suite, Limits, SuiteInputs]] = OrderedDict()
        self._launcher = WorkerLauncher(isolation, self.limits, self.packages)
        self._next_id = 0
        self._trace: JobTrace | None = None
        self.stats: dict[str, float] = {}
        """Totals the workers reported: children forked, their CPU seconds, job wall and worker CPU."""

    async def __aenter__(self) -> WorkerPool:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Choose the isolation level and start the workers (and the job trace ``REFINELAB_JOB_TRACE``
        names, if any: ``_trace.py``)."""
        workers = await self._launcher.start(self.size)
        self.isolation = workers[0].command.isolation
        self._trace = JobTrace.from_environment(os.environ)
        if self._trace is not None:
            self._trace.watch(asyncio.get_running_loop())
        self._all += workers
        self._idle += workers

    @property
    def isolation_note(self) -> str:
        """What the isolation got, in words, where it is not bubblewrap (``landlock``: the Landlock ABI,
        how signals are confined, and whose uid the jobs run as); empty otherwise."""
        return self._launcher.note

    async def close(self) -> None:
        """Stop every worker (programs still waiting are cancelled)."""
        if self._timer is not None:
            self._timer.cancel()
        for unit in self._queue.drain():
            unit.done.cancel()
        busy = [worker for worker in self._all if worker not in self._idle]
        for worker in busy:  # a job nobody waits for any more (a backup whose first run stood): no grace
            if worker.process is not None and worker.process.returncode is None:
                # SIGTERM, not SIGKILL: a landlock worker (no PID namespace) ends its job's processes on it,
                # and a killed one would leave them to the machine; bubblewrap's namespace dies with it either way
                worker.process.terminate()
        for job in list(self._jobs):
            job.cancel()
        await asyncio.gather(*self._jobs, return_exceptions=True)
        await asyncio.gather(*(worker.stop() for worker in self._all))
        self._all.clear()
        self._idle.clear()
        self._launcher.cleanup()
        if self._trace is not None:
            self._trace.close()

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

        Function programs are batched: one child process runs a job's programs in turn, with the
        interpreter state restored between them and a fresh child whenever a program leaves anything
        behind that cannot be restored (see ``_worker/state.py``). Jobs are cut from everything waiting,
        whoever asked for it (``_queue.py``). ``isolate=True`` gives every program its own process (slower;
        the strongest separation between programs). Stdio programs always get a process per test. CPU
        timeouts are confirmed by a rerun where it can change the verdict (``_confirm.py``, the rule
        :class:`ClusterSandbox` follows too), each program's as soon as its own run ends.
        """
        limits = limits or self.limits
        inputs = self._input_items(items, limits)
        placement = current_placement()

        async def judged(i: int) -> RunResult:
            if not inputs[i][1].tests:
                return RunResult((), self.isolation)
            program, suite_inputs = inputs[i]
            speculate = _rerun_is_whole(suite_inputs, limits)
            unit = self._submit(program, suite_inputs, limits, isolate, placement, speculate=speculate)
            ran = await unit.done
            (result,) = await confirmed([items[i]], [inputs[i]], [ran], limits, self._alone(limits, unit))
            return result

        if len(items) == 1:  # a program's stage (check runs them one by one): no task of its own to gather
            return [await judged(0)]
        return list(await asyncio.gather(*(judged(i) for i in range(len(items)))))

    async def reports(
        self, items: Sequence[InputItem], *, limits: Limits | None = None, isolate: bool = False
    ) -> list[ProgramReports]:
        """What each program did on each test, as the workers reported it, not judged; in item order.

        :meth:`run_items` without the judging and without the timeout reruns: the programs get only their
        suites' inputs, so this is what runs where expected values must not go (a cluster node). The
        caller judges, and sends the reruns worth running back (``_confirm.py``).
        """
        limits = limits or self.limits
        placement = current_placement()
        found = await asyncio.gather(
            *(self._submit(code, inputs, limits, isolate, placement).done for code, inputs in items if inputs.tests)
        )
        runs = iter(found)
        return [next(runs).reports if inputs.tests else ProgramReports((), "") for _, inputs in items]

    def _input_items(self, items: Sequence[Item], limits: Limits) -> list[InputItem]:
        """:func:`input_items`, reusing the inputs of suites seen lately (the suite kept alive with them)."""
        found: list[InputItem] = []
        for program, suite in items:
            kept = self._inputs.get(id(suite))
            if kept is None or kept[0] is not suite or not (kept[1] is limits or kept[1] == limits):
                kept = (suite, limits, suite.inputs(limits))
                self._inputs[id(suite)] = kept
                if len(self._inputs) > _INPUTS_KEPT:
                    self._inputs.popitem(last=False)
            else:
                self._inputs.move_to_end(id(suite))
            found.append((program, kept[2]))
        return found

    def _alone(self, limits: Limits, first: Unit | None = None) -> Rerun:
        """How a confirming rerun runs here: one program, a job of its own, in a fresh process, ahead of
        fresh work; ``first``'s backup when one was started (:meth:`_speculate`) and it is that same run."""

        async def rerun(code: str, inputs: SuiteInputs) -> Ran:
            if first is not None and first.backup is not None and first.item == (code, inputs):
                return await first.backup
            chain, overlaps = (first.chain, first.speculate) if first is not None else (None, False)
            placement = Placement(urgent=True, alone=True, chain=chain, overlaps=overlaps)
            return await self._submit(code, inputs, limits, True, placement).done

        return rerun

    def _submit(
        self,
        program: str,
        inputs: SuiteInputs,
        limits: Limits,
        isolate: bool,
        placement: Placement,
        *,
        speculate: bool = False,
    ) -> Unit:
        """Queue one program; its run comes back on the unit's future as soon as its job ends. Jobs are cut
        once this turn of the event loop has queued what it will (a caller's programs go together)."""
        if not self._all:  # no worker would ever take it: say so instead of waiting for ever
            raise RuntimeError("the WorkerPool is not running: use `async with WorkerPool(...) as pool:`")
        done: asyncio.Future[Ran] = asyncio.get_running_loop().create_future()
        chain = placement.chain or chain_of(program)
        unit = Unit((program, inputs), limits, isolate, placement, done, chain, speculate=speculate)
        self._queue.put(unit)
        if not self._pump_soon:
            self._pump_soon = True
            asyncio.get_running_loop().call_soon(self._pump)
        return unit

    def _pump(self) -> None:
        """Give every idle worker a job while programs wait; with workers idle and nothing waiting, look for
        long runs to back up (:meth:`_speculate`)."""
        self._pump_soon = False
        while self._idle and (units := self._queue.take(self.size, self.batch_size)):
            job = asyncio.ensure_future(self._serve(self._idle.pop(), units))
            self._jobs.add(job)
            job.add_done_callback(self._jobs.discard)
        if self._idle and self._jobs and self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(SPECULATE_AFTER, self._speculate)

    def _speculate(self) -> None:
        """At the end of a run, start the confirming rerun of each program that has run for
        :data:`SPECULATE_AFTER` seconds beside it, on a worker that would idle otherwise: if the program
        exceeds its CPU limit, its rerun (``_confirm.py``) is already under way, so its limit and the rerun
        overlap instead of adding up, and the program's grace is taken back (:meth:`_grace`). Only where the
        rerun is the whole program again (``speculate``), and for a program with the grace only while the
        rerun would end before the grace does; the verdict is the same either way (the first run within the
        limit stands)."""
        self._timer = None
        now = time.perf_counter()
        spare = len(self._idle) - len(self._queue)
        for unit, started in list(self._running.items()):
            if spare <= 0:
                break
            if unit.speculate and unit.backup is None and SPECULATE_AFTER <= now - started < _backed_up_until(unit):
                placement = Placement(urgent=True, alone=True, chain=unit.chain, overlaps=True)
                unit.backup = self._submit(*unit.item, unit.limits, True, placement).done
                if unit.withdraw is not None:
                    unit.withdraw()
                spare -= 1
        self._pump()

    async def _serve(self, worker: WorkerProcess, units: list[Unit]) -> None:
        """Run one job on ``worker`` and hand each program its run."""
        started, job_id = time.perf_counter(), self._new_id()
        first = units[0]
        grace = self._grace(first)
        for index, unit in enumerate(units):
            self._running[unit] = started
            unit.withdraw = functools.partial(worker.withdraw, job_id, index) if grace else None
        try:
            items = [unit.item for unit in units]
            runs, stats = await self._raw_batch(worker, items, first.limits, first.isolate, job_id, grace)
            ran_units = units[: len(runs)]
            self._queue.put_back(units[len(runs) :])  # handed back unrun (``Limits.defer_after``)
            _meter(ran_units, stats)
            if self._trace is not None:
                _traced(self._trace, ran_units, started, stats)
            for unit, ran in zip(ran_units, runs):
                if not unit.done.done():
                    unit.done.set_result(ran)
        except BaseException as exc:
            for unit in units:
                if unit.done.done():
                    continue
                if isinstance(exc, Exception):
                    unit.done.set_exception(exc)
                else:
                    unit.done.cancel()
            raise
        finally:
            for unit in units:
                self._running.pop(unit, None)
                unit.withdraw = None
            self._idle.append(worker)
            self._pump()

    def _grace(self, first: Unit) -> bool:
        """Whether a job starting now gets the timeout grace (``Limits.timeout_grace``): a first run (not isolated,
        which reruns are) with reruns allowed. A looping program then costs one and a half limits, and its
        verdict comes then, where a rerun after it would take two limits; where a worker is idle the rerun can
        start beside the run and end sooner still, and :meth:`_speculate` takes the grace back when it starts
        it (the grace was first given only while other work waited, which left a loop two limits at the end of
        a run on workers all busy: ``run``'s looping attempt on two cores)."""
        limits = first.limits
        return limits.timeout_grace > 0 and limits.timeout_reruns >= 1 and not first.isolate

    async def _raw_batch(
        self, worker: WorkerProcess, items: list[InputItem], limits: Limits, isolate: bool, job_id: int, grace: bool
    ) -> tuple[list[Ran], object]:
        """The worker's reports, one per program (a crashed worker yields ``crashed`` reports), and the
        job's stats; ``grace``: see :meth:`_grace`."""
        job = _job(items, limits, isolate, job_id, grace=grace, shared=self.isolation in _SHARED_UID)
        called = await self._call(worker, job, _backstop(items, limits))
        if called is None:
            crash = crash_report("the sandbox worker stopped answering and was replaced")
            return [self._ran([crash] * len(inputs.tests), "") for _, inputs in items], None
        reply, texts = called
        rows, outputs = reply[wire.RESULTS], reply.get(wire.OUTPUTS)
        assert isinstance(rows, list) and isinstance(outputs, list) and 0 < len(rows) == len(outputs) <= len(items)
        stats = reply.get(wire.STATS)
        self._record(stats)
        return [Ran(reports_of(row, str(out), texts), None, self.isolation) for row, out in zip(rows, outputs)], stats

    def _ran(self, row: Sequence[object], output: str) -> Ran:
        return Ran(ProgramReports(tuple(row), output), None, self.isolation)

    def _record(self, stats: object) -> None:
        if isinstance(stats, dict):
            for key, value in stats.items():
                if isinstance(value, (int, float)):
                    self.stats[key] = self.stats.get(key, 0.0) + value

    async def values(  # noqa: PLR0913 - the Sandbox role's values(): keywords, each what one caller sets
        self,
        code: str,
        expressions: Sequence[str],
        *,
        entry_point: str | None = None,
        setup: str = "",
        limits: Limits | None = None,
        arguments: Sequence[str] | None = None,
        encoded: bool = False,
    ) -> list[object | TestOutcome]:
        """Evaluate expressions against a trusted program (a reference solution) and return the values.

        Used to compute expected outputs (HumanEval+). An expression that fails yields its
        :class:`TestOutcome` instead of a value; ``encoded``: the values as the worker encoded them.
        """
        tests = value_tests(expressions, arguments)
        suite = Suite.of(tests, entry_point=entry_point, setup=setup)
        limits = limits or self.limits
        chain = f"values:{self._new_id()}"
        placement = Placement(alone=True, chain=chain)
        ran = await self._submit(code, suite.value_inputs(limits), limits, True, placement).done
        return values_of(tests, ran.reports, encoded=encoded)

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    @staticmethod
    async def _call(worker: WorkerProcess, job: bytes, backstop: float) -> tuple[dict[str, object], memoryview] | None:
        """Send a job to ``worker``; ``None`` when it stopped answering (it is stopped, and started again at its
        next job: a start that fails then says so there, where a worker left without a process had failed
        every later job of its own)."""
        try:
            return await worker.call(job, backstop)
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionError, ValueError):
            await worker.stop()
            return None
