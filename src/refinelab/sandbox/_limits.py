"""Resource limits for one run of candidate code."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from refinelab.sandbox._worker import protocol as wire

MIB = 1 << 20
EVALPLUS_FACTOR = 4.0
"""evalplus's ``gt_time_limit_factor``: a test may take this many times the reference solution's time."""
EVALPLUS_FLOOR = 1.0
"""evalplus's ``min_time_limit``: no test gets less than this many seconds."""

AfterTimeout = Literal["skip", "continue"]
"""After a test times out: ``skip`` the program's remaining tests (its verdict is known), or
``continue`` with the next test in a fresh process (every test gets a verdict: dual agreement needs
them)."""


@dataclass(frozen=True)
class Limits:
    """Limits applied to every test (time) or every run (everything else).

    Time is judged on CPU time so that a verdict does not depend on how busy the machine is; wall time
    is only a backstop against programs that sleep or block.
    """

    cpu_seconds: float = 4.0
    """CPU time allowed per test whose limit does not follow a reference (see ``reference_factor``);
    LiveCodeBench's grader allows 6 s."""
    reference_factor: float | None = None
    """When set, a test whose reference solution's CPU time ``t`` is known (HumanEval+, measured when its
    outputs were computed) may take ``max(reference_floor, reference_factor x t)``: evalplus's rule
    (factor 4, floor 1 s), on CPU time. ``None``: every test gets ``cpu_seconds``."""
    reference_floor: float = EVALPLUS_FLOOR
    """The least a test following its reference may take."""
    stop_at_failure: bool = False
    """Only verdicts are wanted: a program's tests after one that ended in a failure status (an error, a
    timeout, a crash) are not run (``skipped``), and a timeout is run again only when no other test
    failed (only then can the rerun change the verdict). Per-test outcomes after the first failure are
    then not known."""
    after_timeout: AfterTimeout = "skip"
    """What follows a test that timed out (see :data:`AfterTimeout`)."""
    defer_after: float | None = None
    """CPU seconds a program may spend in one job before its later tests are deferred, not run there
    (``deferred`` outcomes, which the caller runs elsewhere: the scorer does, in pieces, for a stage that
    turned out slower than foreseen). ``None``: a job runs every test it is given."""
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
    """Processes and threads (RLIMIT_NPROC) a program may have. Under a private uid (``bwrap-uid``,
    ``landlock-uid``) or a user namespace (``bwrap``) the job's own; under a uid others share (``landlock``,
    ``none``) on top of that uid's tasks when the job starts (the kernel counts them all); root is not bound."""
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
    timeout_grace: float = 0.5
    """How far past its CPU limit a test's first run may go, as a fraction of that limit. A test that ends within
    the grace is a CPU timeout, run again as ``timeout_reruns`` says; one still running at the grace's end is a
    timeout at once: load stretches a program's CPU time by less than half (1.375 times at most, measured beside
    a running test suite on a 2-vCPU machine), so no rerun could bring it within the limit, and a looping program
    costs one and a half limits instead of two. Reruns, isolated runs and runs without reruns
    (``timeout_reruns`` 0) get none, and where a worker idles the ``WorkerPool`` starts a long run's rerun beside
    it and takes the grace back, which ends sooner. ``0``: every CPU timeout is run again."""

    @property
    def wall_seconds(self) -> float:
        """The wall-clock backstop per test."""
        return self.cpu_seconds * self.wall_factor + 1.0

    def scaled(self, reference_seconds: float, *, factor: float = 4.0, floor: float = 1.0) -> Limits:
        """Limits whose time follows a reference solution's, as evalplus does: ``max(floor, factor x t)``."""
        return replace(self, cpu_seconds=max(floor, factor * reference_seconds))

    def following_reference(self, *, factor: float = EVALPLUS_FACTOR, floor: float = EVALPLUS_FLOOR) -> Limits:
        """These limits with each test's time following its reference's where that is known (evalplus's
        rule by default; see ``reference_factor``)."""
        return replace(self, reference_factor=factor, reference_floor=floor)

    def test_seconds(self, reference: float | None) -> float:
        """The CPU limit of a test whose reference took ``reference`` seconds (``None``: not known)."""
        if self.reference_factor is None or reference is None:
            return self.cpu_seconds
        return max(self.reference_floor, self.reference_factor * reference)

    def rule(self) -> str:
        """The time rule in words, for reports: ``4 CPU s per test`` or evalplus's rule."""
        if self.reference_factor is None:
            return f"{self.cpu_seconds:g} CPU s per test"
        return (
            f"max({self.reference_floor:g}, {self.reference_factor:g} x the reference's time) CPU s per test "
            f"({self.cpu_seconds:g} s without a reference time)"
        )

    def for_worker(self, cpu_total: float, *, grace: bool = False) -> dict[str, object]:
        """The limits as the worker protocol spells them; ``cpu_total``: every CPU limit a child may spend;
        ``grace``: the job's tests get ``timeout_grace`` (it counts in ``cpu_total`` then)."""
        fraction = self.timeout_grace if grace else 0.0
        return {
            wire.CPU_SECONDS: self.cpu_seconds,
            wire.TIMEOUT_GRACE: fraction,
            wire.WALL_FACTOR: self.wall_factor,
            wire.CPU_TOTAL: int(cpu_total * (1.0 + fraction) + 2),
            wire.STOP_AT_FAILURE: self.stop_at_failure,
            wire.AFTER_TIMEOUT: self.after_timeout,
            wire.DEFER_AFTER: self.defer_after,
            wire.MEMORY_BYTES: self.memory_bytes,
            wire.FILE_BYTES: self.file_bytes,
            wire.OPEN_FILES: self.open_files,
            wire.PROCESSES: self.processes,
            wire.OUTPUT_BYTES: self.output_bytes,
            wire.STDIO_OUTPUT_BYTES: self.stdio_output_bytes,
            wire.RESULT_BYTES: self.result_bytes,
        }
