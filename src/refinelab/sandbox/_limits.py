"""Resource limits for one run of candidate code."""

from __future__ import annotations

from dataclasses import dataclass, replace

from refinelab.sandbox._worker import protocol as wire

MIB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """Limits applied to every test (time) or every run (everything else).

    Time is judged on CPU time so that a verdict does not depend on how busy the machine is; wall time
    is only a backstop against programs that sleep or block.
    """

    cpu_seconds: float = 4.0
    """CPU time allowed per test (evalplus's floor is 4 s; LiveCodeBench uses 6 s)."""
    wall_factor: float = 3.0
    """Wall-clock backstop per test, as a multiple of ``cpu_seconds`` (plus one second). Time the
    program spent waiting for a CPU (the machine busy) does not count towards it."""
    memory_bytes: int = 1024 * MIB
    """Address space the candidate may add on top of the interpreter's own (RLIMIT_AS)."""
    file_bytes: int = 16 * MIB
    """Largest file the candidate may write (RLIMIT_FSIZE)."""
    open_files: int = 256
    """Open file descriptors (RLIMIT_NOFILE)."""
    processes: int = 64
    """Processes and threads (RLIMIT_NPROC); enforced only under a private uid (``bwrap-uid``)."""
    output_bytes: int = 1 * MIB
    """Standard error, and what function-call programs print, captured per run before ``output_limit``."""
    stdio_output_bytes: int = 64 * MIB
    """Standard output of a stdin/stdout program per test before ``output_limit``: its answer, which
    for LiveCodeBench or CodeContests problems can be several megabytes."""
    result_bytes: int = 64 * MIB
    """Encoded return values per run before ``output_limit``."""
    scratch_bytes: int = 256 * MIB
    """Size of the private writable ``/tmp``."""
    timeout_reruns: int = 1
    """How many more times a program whose test exceeded the CPU limit is run, alone in a fresh
    process, before the timeout stands: the first run that stays within the limit is the verdict. CPU
    time only grows with load (a busy sibling hyperthread, caches shared with other workers), so
    without this a program near the limit passed or timed out depending on what else ran. ``0``
    takes every timeout at its first run."""

    @property
    def wall_seconds(self) -> float:
        """The wall-clock backstop per test."""
        return self.cpu_seconds * self.wall_factor + 1.0

    def scaled(self, reference_seconds: float, *, factor: float = 4.0, floor: float = 1.0) -> Limits:
        """Limits whose time follows a reference solution's, as evalplus does: ``max(floor, factor x t)``."""
        return replace(self, cpu_seconds=max(floor, factor * reference_seconds))

    def for_worker(self, test_count: int) -> dict[str, object]:
        """The limits as the worker protocol spells them."""
        return {
            wire.CPU_SECONDS: self.cpu_seconds,
            wire.WALL_SECONDS: self.wall_seconds,
            wire.CPU_TOTAL: int(self.cpu_seconds * max(test_count, 1) + 2),
            wire.MEMORY_BYTES: self.memory_bytes,
            wire.FILE_BYTES: self.file_bytes,
            wire.OPEN_FILES: self.open_files,
            wire.PROCESSES: self.processes,
            wire.OUTPUT_BYTES: self.output_bytes,
            wire.STDIO_OUTPUT_BYTES: self.stdio_output_bytes,
            wire.RESULT_BYTES: self.result_bytes,
        }
