"""Worker control: choosing the isolation, starting, talking to and stopping worker processes.

Each worker is started once and reused; it forks a child per job (``_worker/``). A worker that stops
answering is stopped and started again by the scheduler (``_pool.py``).
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import warnings
from collections.abc import Sequence
from typing import Literal

from refinelab.errors import InfrastructureError, MissingDependency
from refinelab.sandbox._bwrap import WorkerCommand, bwrap_command, probe_bwrap, unsandboxed_command
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._worker import protocol as wire

_START_TIMEOUT = 30.0

IsolationMode = Literal["auto", "bwrap", "none"]
"""``auto``: bubblewrap when it works, else the unsandboxed fallback with a warning; ``bwrap``: fail if
bubblewrap does not work; ``none``: no sandbox (trusted code only)."""


class SandboxWarning(UserWarning):
    """Candidate code is running without isolation."""


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
        self._stderr_task = asyncio.ensure_future(self._drain_stderr())
        assert self.process.stdout is not None
        ready = await asyncio.wait_for(self.process.stdout.read(len(wire.READY)), _START_TIMEOUT)
        if ready != wire.READY:
            await self.stop()
            raise InfrastructureError(
                f"sandbox worker failed to start: {self.stderr_tail.decode(errors='replace')[-500:]}"
            )

    async def _drain_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while chunk := await self.process.stderr.read(65536):
            self.stderr_tail = (self.stderr_tail + chunk)[-4096:]

    async def call(self, job: dict[str, object], timeout: float) -> dict[str, object]:
        """Send one job and wait (at most ``timeout`` per read) for its reply."""
        process = self.process
        assert process is not None and process.stdin is not None and process.stdout is not None
        body = json.dumps(job).encode()
        process.stdin.write(wire.HEADER.pack(len(body)) + body)
        await process.stdin.drain()
        header = await asyncio.wait_for(process.stdout.readexactly(wire.HEADER.size), timeout)
        data = await asyncio.wait_for(process.stdout.readexactly(wire.HEADER.unpack(header)[0]), timeout)
        reply = json.loads(data)
        assert isinstance(reply, dict)
        return reply

    async def stop(self) -> None:
        """End the process: close its input (it exits), kill it if it does not."""
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


class WorkerLauncher:
    """Chooses how workers run (bubblewrap or the unsandboxed fallback) and makes their commands."""

    def __init__(self, mode: IsolationMode, limits: Limits, packages: Sequence[str]) -> None:
        self.mode = mode
        self.limits = limits
        self.packages = tuple(packages)
        self._scratch: tempfile.TemporaryDirectory[str] | None = None

    def commands(self, count: int) -> list[WorkerCommand]:
        """Commands for ``count`` workers; warns (``SandboxWarning``) when they run unsandboxed."""
        if self.mode != "none":
            reason = probe_bwrap(self.limits)
            if reason is None:
                return [bwrap_command(i, self.limits, packages=self.packages) for i in range(count)]
            if self.mode == "bwrap":
                raise MissingDependency(reason)
            warnings.warn(f"UNSANDBOXED: {reason}; candidate code runs with rlimits only", SandboxWarning, stacklevel=4)
        else:
            warnings.warn(
                "UNSANDBOXED: isolation='none'; candidate code runs with rlimits only", SandboxWarning, stacklevel=4
            )
        self._scratch = tempfile.TemporaryDirectory(prefix="refinelab-")
        return [self._unsandboxed(i) for i in range(count)]

    def _unsandboxed(self, index: int) -> WorkerCommand:
        """A worker without isolation, in its own scratch directory: each worker empties its own."""
        assert self._scratch is not None
        scratch = os.path.join(self._scratch.name, f"worker{index}")
        os.mkdir(scratch, 0o700)
        return unsandboxed_command(scratch=scratch, packages=self.packages)

    async def start(self, count: int) -> list[WorkerProcess]:
        """Start ``count`` workers; if any fails, stop the others and raise its error."""
        workers = [WorkerProcess(command) for command in self.commands(count)]
        started = await asyncio.gather(*(worker.start() for worker in workers), return_exceptions=True)
        failures = [outcome for outcome in started if isinstance(outcome, BaseException)]
        if failures:
            await asyncio.gather(*(worker.stop() for worker in workers))
            raise failures[0]
        return workers

    def cleanup(self) -> None:
        """Remove the unsandboxed workers' scratch directories (after they stopped)."""
        if self._scratch is not None:
            self._scratch.cleanup()
