"""The host side of the sandbox: a pool of pre-started sandboxed workers, and judging their reports.

One worker per core by default (never more than the cores unless asked, because more concurrency only
adds contention). Each worker is started once and reused; it forks a child per job. A worker that stops
answering is killed and replaced, and its job is reported as ``crashed`` — the caller decides whether to
retry; the pool never raises because of what candidate code did.
"""

from __future__ import annotations

import asyncio
import json
import os
import struct
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from refinelab.errors import InfrastructureError, MissingDependency
from refinelab.problems._model import AssertTest, CallTest, ProblemKind, StdioTest, Test
from refinelab.sandbox._bwrap import WorkerCommand, bwrap_command, probe_bwrap, unsandboxed_command
from refinelab.sandbox._compare import decode, outputs_match, values_match
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._outcome import IsolationLevel, RunResult, TestOutcome, Verdict

_HEADER = struct.Struct(">I")
_START_TIMEOUT = 30.0

IsolationMode = Literal["auto", "bwrap", "none"]
"""``auto``: bubblewrap when it works, else the unsandboxed fallback with a warning; ``bwrap``: fail if
bubblewrap does not work; ``none``: no sandbox (trusted code only)."""


class SandboxWarning(UserWarning):
    """Candidate code is running without isolation."""


def default_workers() -> int:
    """The number of cores this process may use."""
    return len(os.sched_getaffinity(0))


@dataclass(frozen=True)
class Suite:
    """A list of tests and how to run a program against them."""

    tests: tuple[Test, ...]
    """The tests, in order."""
    kind: ProblemKind = "function"
    """How programs are run: functions called by tests, or whole stdin/stdout programs."""
    entry_point: str | None = None
    """The function the tests call (``candidate`` is bound to it)."""
    setup: str = ""
    """Code run after the program and before the tests."""
    prelude: str = ""
    """Code run in the program's namespace before the program (a benchmark harness's imports)."""

    @classmethod
    def of(
        cls,
        tests: Sequence[Test],
        *,
        kind: ProblemKind = "function",
        entry_point: str | None = None,
        setup: str = "",
        prelude: str = "",
    ) -> Suite:
        """A suite from any sequence of tests."""
        return cls(tuple(tests), kind, entry_point, setup, prelude)

    def for_worker(self) -> dict[str, object]:
        """What the worker gets: inputs only, never expected values or outputs."""
        return {
            "entry_point": self.entry_point,
            "setup": self.setup,
            "prelude": self.prelude,
            "tests": [_test_for_worker(t) for t in self.tests],
        }


Item = tuple[str, Suite]
"""A program and the suite to run it against."""


def _job(items: Sequence[Item], limits: Limits, isolate: bool, job_id: int) -> dict[str, object]:
    suites: list[Suite] = []
    index: dict[int, int] = {}
    for _, suite in items:
        if id(suite) not in index:
            index[id(suite)] = len(suites)
            suites.append(suite)
    kind = items[0][1].kind
    test_count = 1 if kind == "stdio" else sum(len(suite.tests) for _, suite in items)
    return {
        "id": job_id,
        "mode": kind,
        "programs": [program for program, _ in items],
        "suite_of": [index[id(suite)] for _, suite in items],
        "suites": [suite.for_worker() for suite in suites],
        "isolate": isolate or kind == "stdio",
        "limits": limits.for_worker(test_count),
    }


class _Worker:
    """One running worker process and the pipe protocol to it."""

    def __init__(self, command: WorkerCommand) -> None:
        self.command = command
        self.process: asyncio.subprocess.Process | None = None
        self.stderr_tail = b""
        self._stderr_task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            *self.command.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            limit=1 << 20,
            env=self.command.env,
        )
        self._stderr_task = asyncio.ensure_future(self._drain_stderr())
        assert self.process.stdout is not None
        ready = await asyncio.wait_for(self.process.stdout.read(1), _START_TIMEOUT)
        if ready != b"R":
            await self.stop()
            raise InfrastructureError(
                f"sandbox worker failed to start: {self.stderr_tail.decode(errors='replace')[-500:]}"
            )

    async def _drain_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while chunk := await self.process.stderr.read(65536):
            self.stderr_tail = (self.stderr_tail + chunk)[-4096:]

    async def call(self, job: dict[str, object], timeout: float) -> dict[str, object]:
        process = self.process
        assert process is not None and process.stdin is not None and process.stdout is not None
        body = json.dumps(job).encode()
        process.stdin.write(_HEADER.pack(len(body)) + body)
        await process.stdin.drain()
        header = await asyncio.wait_for(process.stdout.readexactly(_HEADER.size), timeout)
        data = await asyncio.wait_for(process.stdout.readexactly(_HEADER.unpack(header)[0]), timeout)
        reply = json.loads(data)
        assert isinstance(reply, dict)
        return reply

    async def stop(self) -> None:
        process = self.process
        self.process = None
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()  # the worker exits at end of input
        try:
            await asyncio.wait_for(process.wait(), 2.0)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
        if self._stderr_task is not None:
            await asyncio.gather(self._stderr_task, return_exceptions=True)


class WorkerPool:
    """Runs candidate programs against tests in pre-started sandboxed workers.

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
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._all: list[_Worker] = []
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
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
        commands = self._commands()
        self.isolation = commands[0].isolation
        workers = [_Worker(command) for command in commands]
        started = await asyncio.gather(*(worker.start() for worker in workers), return_exceptions=True)
        failures = [outcome for outcome in started if isinstance(outcome, BaseException)]
        if failures:
            await asyncio.gather(*(worker.stop() for worker in workers))
            raise failures[0]
        for worker in workers:
            self._all.append(worker)
            self._idle.put_nowait(worker)

    def _commands(self) -> list[WorkerCommand]:
        if self.mode != "none":
            reason = probe_bwrap(self.limits)
            if reason is None:
                return [bwrap_command(i, self.limits, packages=self.packages) for i in range(self.size)]
            if self.mode == "bwrap":
                raise MissingDependency(reason)
            warnings.warn(f"UNSANDBOXED: {reason}; candidate code runs with rlimits only", SandboxWarning, stacklevel=3)
        else:
            warnings.warn(
                "UNSANDBOXED: isolation='none'; candidate code runs with rlimits only", SandboxWarning, stacklevel=3
            )
        self._scratch = tempfile.TemporaryDirectory(prefix="refinelab-")
        return [self._unsandboxed(i) for i in range(self.size)]

    def _unsandboxed(self, index: int) -> WorkerCommand:
        """A worker without isolation, in its own scratch directory: each worker empties its own."""
        assert self._scratch is not None
        scratch = os.path.join(self._scratch.name, f"worker{index}")
        os.mkdir(scratch, 0o700)
        return unsandboxed_command(scratch=scratch, packages=self.packages)

    async def close(self) -> None:
        """Stop every worker."""
        await asyncio.gather(*(worker.stop() for worker in self._all))
        self._all.clear()
        if self._scratch is not None:
            self._scratch.cleanup()

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
        return [
            RunResult(tuple(judge(t, r) for t, r in zip(suite.tests, row)), self.isolation, output=out)
            for (_, suite), row, out in zip(items, rows, outputs)
        ]

    async def _raw_batch(
        self, items: list[Item], limits: Limits, isolate: bool
    ) -> tuple[list[list[object]], list[str]]:
        """The worker's reports, one row per program (a crashed worker yields ``crashed`` reports)."""
        job = _job(items, limits, isolate, self._new_id())
        backstop = limits.wall_seconds * sum(len(suite.tests) for _, suite in items) + 30.0
        reply = await self._dispatch(job, backstop)
        if reply is None:
            crash = {"s": "crashed", "m": "the sandbox worker stopped answering and was replaced"}
            return [[crash] * len(suite.tests) for _, suite in items], [""] * len(items)
        rows, outputs = reply["results"], reply.get("outputs")
        assert isinstance(rows, list) and isinstance(outputs, list)
        self._record(reply.get("stats"))
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
        return [_value_or_outcome(test, report) for test, report in zip(tests, row)]

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


def _value_or_outcome(test: CallTest, report: object) -> object:
    if isinstance(report, dict) and report.get("s") == "value":
        return decode(report.get("v"))
    return judge(test, report)


def _test_for_worker(test: Test) -> dict[str, object]:
    """What the worker gets for a test: inputs only, never the expected value or output."""
    if isinstance(test, CallTest):
        return {"k": "call", "expr": test.expr}
    if isinstance(test, AssertTest):
        return {"k": "assert", "code": test.code}
    return {"k": "stdio", "stdin": test.stdin}


_STATUS_VERDICTS: dict[str, Verdict] = {
    "error": "error",
    "memory": "memory",
    "timeout": "timeout",
    "output_limit": "output_limit",
    "crashed": "crashed",
    "skipped": "skipped",
}


def judge(test: Test, report: object) -> TestOutcome:
    """Turn the worker's report for one test into an outcome.

    A pass needs the status that only the harness path produces for that kind of test (a value for a
    call test, ``ok`` with the job's nonce for an assert test, ``done`` for a stdio test) *and*, for
    call and stdio tests, a match judged here on the host.
    """
    if not isinstance(report, dict):
        return TestOutcome("crashed", "no report for this test")
    status = str(report.get("s"))
    if status in _STATUS_VERDICTS:
        return _failure_outcome(_STATUS_VERDICTS[status], report)
    if isinstance(test, CallTest) and status == "value":
        return _judge_value(test, report.get("v"))
    if isinstance(test, AssertTest) and status == "ok":
        return TestOutcome("pass")
    if isinstance(test, StdioTest) and status == "done":
        return _judge_stdout(test, report)
    return TestOutcome("crashed", f"unexpected report {status!r} for this kind of test")


def _failure_outcome(verdict: Verdict, report: dict[str, object]) -> TestOutcome:
    traceback = report.get("tb")
    return TestOutcome(
        verdict,
        str(report.get("m", "")),
        error_type=str(report["t"]) if "t" in report else None,
        traceback=str(traceback) if traceback else None,
        actual=str(report["stdout"])[:2000] if report.get("stdout") else None,
        cpu_seconds=_float_or_none(report.get("cpu")),
    )


def _judge_value(test: CallTest, encoded: object) -> TestOutcome:
    actual = decode(encoded)
    if values_match(actual, test.expected, test.atol):
        return TestOutcome("pass")
    expected_text, actual_text = _short_repr(test.expected), _short_repr(actual)
    return TestOutcome(
        "fail", f"{test.expr}: expected {expected_text}, got {actual_text}", expected=expected_text, actual=actual_text
    )


def _judge_stdout(test: StdioTest, report: dict[str, object]) -> TestOutcome:
    stdout = str(report.get("stdout", ""))
    cpu = _float_or_none(report.get("cpu"))
    if outputs_match(stdout, test.expected):
        return TestOutcome("pass", cpu_seconds=cpu)
    return TestOutcome("fail", "wrong output", expected=test.expected[:2000], actual=stdout[:2000], cpu_seconds=cpu)


def _short_repr(value: object, limit: int = 300) -> str:
    try:
        text = repr(value)
    except ValueError:  # an integer too long for decimal conversion
        text = f"<{type(value).__name__} too large to print>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _float_or_none(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None
