"""Worker control: choosing the isolation, starting, talking to and stopping worker processes.

Each worker is started once and reused; it forks a child per job (``_worker/``). A worker that stops
answering is stopped by the scheduler (``_pool.py``) and started again at its next job.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, TypeVar

from refinelab.errors import InfrastructureError, MissingDependency
from refinelab.sandbox._bwrap import WorkerCommand, base_interpreter, bwrap_command, probe_bwrap, unsandboxed_command
from refinelab.sandbox._landlock import (
    Identity,
    Layout,
    confinement_refused,
    identity,
    kernel_problem,
    landlock_command,
    what_it_got,
)
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._worker import protocol as wire

_T = TypeVar("_T")

_START_TIMEOUT = 30.0
"""Seconds a starting worker has to say it is ready, on an idle machine (stretched by the load)."""
_STOP_WAIT = 2.0
"""Seconds a stopping worker is given to end after its input is closed, and again after it is terminated."""
_LOADAVG = "/proc/loadavg"
"""Where the kernel says how many tasks are runnable (:func:`_load`)."""

IsolationMode = Literal["auto", "bwrap", "landlock", "none"]
"""``auto``: the first of ``bwrap`` and ``landlock`` that works here, else refuse to start (never
``none`` unless asked); ``bwrap``: bubblewrap's namespaces, or fail; ``landlock``: Landlock and seccomp
without namespaces (containers, pods, CI runners), or fail; ``none``: no sandbox (trusted code only)."""

SANDBOX_HOW = (
    "install bubblewrap (bash scripts/install.sh) and allow it user namespaces, or in a container "
    "run it with --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt "
    "systempaths=unconfined (docs/design/sandbox.md: Docker and Kubernetes), or use a kernel with Landlock "
    "ABI 3 (Linux 6.2) or newer"
)
"""How to get a sandbox where none works, in one line (``auto`` refusing, and ``none`` warning)."""
SANDBOX_HELP = f"to get one: {SANDBOX_HOW}; or pass --isolation none (no sandbox: only for code you trust)"
"""What ``auto`` says when it refuses: how to get a sandbox, or how to run without one."""


class SandboxWarning(UserWarning):
    """Candidate code is running without isolation, or with a weaker one than asked for by ``auto``
    (Landlock where bubblewrap could not start: the warning says why)."""


def default_workers() -> int:
    """The number of cores this process may use."""
    return len(os.sched_getaffinity(0))


class WorkerProcess:
    """One running worker process and the pipe protocol to it."""

    def __init__(self, command: WorkerCommand) -> None:
        self.command = command
        self.process: asyncio.subprocess.Process | None = None
        self.stderr_tail = b""
        self._stderr_task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the process and wait until it says it is ready."""
        self.process = await asyncio.create_subprocess_exec(
            *self.command.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            limit=1 << 20,
            env=self.command.env,
        )
        assert self.process.stdout is not None and self.process.stderr is not None
        self._stderr_task = asyncio.ensure_future(self._drain_stderr(self.process.stderr))
        try:
            ready = await _stretching(self.process.stdout.read(len(wire.READY)), _START_TIMEOUT)
        except asyncio.TimeoutError:
            ready = b""
        if ready != wire.READY:
            await self.stop()
            raise InfrastructureError(
                f"sandbox worker failed to start: {self.stderr_tail.decode(errors='replace')[-500:]}"
            )

    async def _drain_stderr(self, stderr: asyncio.StreamReader) -> None:
        """Keep the last of what the worker writes to ``stderr`` (its own pipe: the drain may first run after
        ``stop`` has let go of the process, when a worker that said nothing was stopped before this task began)."""
        while chunk := await stderr.read(65536):
            self.stderr_tail = (self.stderr_tail + chunk)[-4096:]

    async def call(self, body: bytes, timeout: float) -> tuple[dict[str, object], memoryview]:
        """Send one job (its JSON) and wait for its whole reply: its JSON, and the texts of its values rows
        (``protocol.VALUES_TEXT``), unread and not copied (a row of HumanEval/130 is 20 MB). ``timeout``: the
        wait on an idle machine; on a loaded one it is stretched by the load (:func:`_stretched`). A worker
        stopped (given up on, or never started) is started first."""
        if self.process is None:
            await self.start()
        process = self.process
        assert process is not None and process.stdin is not None and process.stdout is not None
        process.stdin.write(wire.HEADER.pack(len(body)) + body)
        await process.stdin.drain()
        # One wait for the header and the body, in this task: a job of the driver's is a few turns of its loop,
        # and wait_for would make each a task of its own (the driver runs about 1,600 jobs for a HumanEval+ check)
        whole = await _stretching(_reply(process.stdout), timeout)
        end = whole.find(b"\n")
        end = len(whole) if end < 0 else end
        reply = json.loads(whole[:end])
        assert isinstance(reply, dict)
        return reply, memoryview(whole)[end + 1 :]

    def withdraw(self, job: int, program: int) -> None:
        """Tell the worker, while it runs job ``job``, that its ``program``'s tests get no grace from now on
        (:data:`~protocol.WITHDRAW`); nothing where the process is gone (a frame it reads after the job is
        dropped)."""
        process = self.process
        if process is None or process.returncode is not None or process.stdin is None or process.stdin.is_closing():
            return
        body = json.dumps({wire.WITHDRAW: [job, program]}).encode()
        process.stdin.write(wire.HEADER.pack(len(body)) + body)

    async def stop(self) -> None:
        """End the process: close its input (it exits), terminate it if it does not (a confined worker
        then ends its job's processes first: without a PID namespace nothing else would), kill it last."""
        process = self.process
        self.process = None
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()  # the worker exits at end of input
        for end in (process.terminate, process.kill):
            try:
                await asyncio.wait_for(process.wait(), _STOP_WAIT)
                break
            except asyncio.TimeoutError:
                try:
                    end()
                except ProcessLookupError:  # it ended meanwhile (its pipes closed before its end was seen)
                    break
        await process.wait()
        if self._stderr_task is not None:
            await asyncio.gather(self._stderr_task, return_exceptions=True)


async def _stretching(read: Awaitable[_T], timeout: float) -> _T:
    """``read``, awaited in this task and given up on (``asyncio.TimeoutError``) after ``timeout`` on an idle
    machine; when ``timeout`` runs out on a loaded one, the wait becomes :func:`_stretched`'s."""
    if sys.version_info < (3, 11):  # Python 3.10 (past its end of life): the longest stretch from the start
        return await asyncio.wait_for(read, timeout * wire.WALL_CEILING)
    loop = asyncio.get_running_loop()
    begun = loop.time()
    async with asyncio.timeout(None) as window:
        look = loop.call_at(begun + timeout, lambda: window.reschedule(begun + _stretched(timeout)))
        try:
            return await read
        finally:
            look.cancel()


def _stretched(timeout: float) -> float:
    """How long to wait for a job whose reply has not come in ``timeout`` (its backstop on an idle machine):
    ``timeout`` times the machine's load (runnable tasks per core this process may use), up to
    ``protocol.WALL_CEILING`` times. The worker excuses each test the time it waited for a CPU, up to that
    ceiling, so on a loaded machine a job may rightly take several times its backstop, and giving it up there
    would judge its programs ``crashed`` for the load (64 workers on 2 cores, 2026-12-02)."""
    return timeout * min(max(_load(), 1.0), wire.WALL_CEILING)


def _load() -> float:
    """Runnable tasks per core this process may use: the larger of the last minute's average and the count
    now (``/proc/loadavg``); 1.0 where it cannot be read."""
    try:
        with open(_LOADAVG, encoding="ascii") as handle:
            fields = handle.read().split()
        runnable = max(float(fields[0]), float(fields[3].split("/")[0]) - 1)  # less this process's own reading
    except (OSError, IndexError, ValueError):
        return 1.0
    return runnable / default_workers()


async def _reply(stdout: asyncio.StreamReader) -> bytes:
    """A worker's reply: its length, then that many bytes."""
    header = await stdout.readexactly(wire.HEADER.size)
    return await stdout.readexactly(wire.HEADER.unpack(header)[0])


class WorkerLauncher:
    """Chooses how workers run (bubblewrap, Landlock, or unsandboxed when asked) and makes their commands."""

    def __init__(self, mode: IsolationMode, limits: Limits, packages: Sequence[str]) -> None:
        self.mode = mode
        self.limits = limits
        self.packages = tuple(packages)
        self.note = ""
        """What the chosen isolation got, in words, when it is not bubblewrap (``WorkerPool.isolation_note``)."""
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._layout: Layout | None = None
        self._identity: Identity | None = None
        self._chosen: IsolationMode = mode
        self._passed_over: list[str] = []
        """Why ``auto`` did not take the isolations before the chosen one."""

    def commands(self, count: int) -> list[WorkerCommand]:
        """Commands for ``count`` workers, in the isolation the mode asks for.

        Raises:
            MissingDependency: the isolation asked for does not work here (``auto``: none does), with
                the reason and how to get one.
        """
        if self.mode == "none":
            warnings.warn(
                f"UNSANDBOXED: isolation 'none', as asked: candidate code runs with rlimits only, no sandbox "
                f"(only for code you trust; to get a sandbox: {SANDBOX_HOW})",
                SandboxWarning,
                stacklevel=4,
            )
            self._scratch = tempfile.TemporaryDirectory(prefix="refinelab-")
            return [self._unsandboxed(i) for i in range(count)]
        reasons: list[str] = []
        for mode, probe, make in self._isolations():
            if self.mode not in ("auto", mode):
                continue
            reason = probe()
            if reason is None:
                self._chosen, self._passed_over = mode, reasons
                return make(count)
            reasons.append(f"{mode}: {reason}")
        raise self._refusal(reasons)

    def _refusal(self, reasons: list[str]) -> MissingDependency:
        """The error when the isolation asked for does not work here (``auto``: none does)."""
        if self.mode != "auto":
            return MissingDependency(reasons[-1])
        return MissingDependency(f"no sandbox works here ({'; '.join(reasons)}); {SANDBOX_HELP}")

    def _isolations(
        self,
    ) -> list[tuple[IsolationMode, Callable[[], str | None], Callable[[int], list[WorkerCommand]]]]:
        """The sandboxes ``auto`` tries, strongest first: each with its probe and its commands."""
        return [
            ("bwrap", lambda: probe_bwrap(self.limits), self._bwrap),
            ("landlock", self._probe_landlock, self._landlock),
        ]

    def _probe_landlock(self) -> str | None:
        """The kernel's side only: whether what the workers enforce is enforced, each proves as it starts
        (``confine.verify``), and a worker that cannot is this isolation's refusal (:meth:`start`)."""
        self._identity = identity(base_interpreter())
        return kernel_problem()

    def _say_what_it_got(self) -> None:
        if self._chosen != "landlock":
            return
        assert self._identity is not None
        self.note = what_it_got(self._identity)
        if self._passed_over:  # auto fell through: say what the run gets instead, and why
            message = f"isolation landlock ({self.note}): {'; '.join(self._passed_over)}"
            warnings.warn(message, SandboxWarning, stacklevel=5)

    def _bwrap(self, count: int) -> list[WorkerCommand]:
        return [bwrap_command(i, self.limits, packages=self.packages) for i in range(count)]

    def _landlock(self, count: int) -> list[WorkerCommand]:
        assert self._identity is not None
        self._layout = Layout(self.packages)
        return [landlock_command(i, self._layout, self._identity) for i in range(count)]

    def _unsandboxed(self, index: int) -> WorkerCommand:
        """A worker without isolation, in its own scratch directory: each worker empties its own."""
        assert self._scratch is not None
        scratch = os.path.join(self._scratch.name, f"worker{index}")
        os.mkdir(scratch, 0o700)
        return unsandboxed_command(scratch=scratch, packages=self.packages)

    async def start(self, count: int) -> list[WorkerProcess]:
        """Start ``count`` workers; if any fails, stop the others and raise its error (a confined worker's
        refusal to start is this isolation's: see :meth:`_probe_landlock`)."""
        workers = [WorkerProcess(command) for command in self.commands(count)]
        started = await asyncio.gather(*(worker.start() for worker in workers), return_exceptions=True)
        failures = [
            (worker, outcome) for worker, outcome in zip(workers, started) if isinstance(outcome, BaseException)
        ]
        if failures:
            await asyncio.gather(*(worker.stop() for worker in workers))
            self.cleanup()  # no pool will close: its directories go now (the landlock layout, none's scratch)
            worker, error = failures[0]
            refused = confinement_refused(worker.stderr_tail)
            if refused is not None:
                raise self._refusal([*self._passed_over, f"landlock: {refused}"]) from error
            raise error
        self._say_what_it_got()
        return workers

    def cleanup(self) -> None:
        """Remove the workers' scratch directories (after they stopped)."""
        if self._scratch is not None:
            self._scratch.cleanup()
        if self._layout is not None:
            self._layout.cleanup()
