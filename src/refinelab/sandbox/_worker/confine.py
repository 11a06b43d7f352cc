"""The ``landlock`` isolation inside the worker: confining each child without any namespace.

The host starts the worker with the policy in ``$REFINELAB_CONFINE`` (``sandbox/_landlock.py``). Once
its imports are done, the worker gives up every capability and binds *itself* to the Landlock file
ruleset (:func:`prepare`): neither it nor anything it forks can open what the policy does not list. It
proves on a forked probe that the kernel enforces what it must (:meth:`Confinement.verify`), and becomes
the *subreaper* of every process its jobs start: one that outlives its parent (a daemon's double fork)
is re-parented to the worker rather than to the machine's init. Each child, before it runs a
candidate, makes itself a subreaper too (so a batch child sees a daemon its program left, and is
replaced), adds a Landlock layer of its own that keeps its signals within itself and its descendants
(ABI >= 6), and installs the seccomp filter (:meth:`Confinement.enter`). After each job the worker kills
its own children, generation by generation, until none is left (:func:`sweep_descendants`): without a
PID namespace, "every process of the job" is exactly "every descendant of the worker", and a child's
PID cannot be reused before its parent reaps it, so nothing else can be hit.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import signal
import socket
from collections.abc import Callable
from dataclasses import dataclass

from . import seccomp
from .landlock import MIN_ABI, SCOPE_ABI, Policy, Ruleset, abi_version, path_rules

ENVIRONMENT = "REFINELAB_CONFINE"
"""The variable the host passes the description in (removed before any candidate runs)."""
FAILED = 126
"""Exit status of a child that could not confine itself (it never runs the candidate)."""
FAILED_MARK = b"refinelab: confinement failed: "

_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_CAPABILITY_VERSION_3 = 0x20080522


@dataclass(frozen=True)
class Confinement:
    """What each child adds to the worker's own confinement before it runs a candidate."""

    scope: Ruleset | None
    """A Landlock layer keeping signals and abstract sockets within the child's own processes (ABI >= 6);
    None: the seccomp filter confines signals to the child's process group instead."""
    filter_code: bytes | None
    """The seccomp filter, when it does not depend on the child (``scope`` is set); else built per child."""
    scratch: str
    """The worker's scratch directory (writable)."""
    canary: str
    """A file outside everything allowed: the probe must fail to read it."""

    def enter(self) -> None:
        """Confine this (freshly forked child) process for good; raises OSError if the kernel refuses."""
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the worker's own handler is not the program's
        libc = _libc()
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        if self.scope is not None:
            self.scope.restrict_self()
        seccomp.install(self.filter_code or seccomp.build(group=os.getpid()))

    def verify(self) -> str | None:
        """Fork a probe child that enters the confinement and tries what it forbids; return what was not
        refused (None: everything was)."""
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            try:
                self.enter()
                report = _probe(self.canary, self.scratch)
            except BaseException as exc:  # noqa: BLE001 - reported to the worker, which refuses to start
                report = f"could not confine a process: {exc}"
            os.write(write_end, report.encode())
            os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            report = pipe.read().decode()
        os.waitpid(pid, 0)
        return report or None


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> None:
    if _libc().prctl(option, value, 0, 0, 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"prctl({option}): {os.strerror(code)}")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> None:
    """Give up every capability (root keeps its uid but none of its powers): the bounding set (where
    allowed), the ambient set, and the effective, permitted and inheritable sets."""
    libc = _libc()
    if has_capabilities():
        for number in range(_last_capability() + 1):
            libc.prctl(_PR_CAPBSET_DROP, number, 0, 0, 0)  # needs CAP_SETPCAP; without it there is none to drop
        libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
        data = (_CapData * 2)()
        if libc.capset(ctypes.byref(_CapHeader(_CAPABILITY_VERSION_3, 0)), data) != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"capset: {os.strerror(code)}")


def has_capabilities() -> bool:
    """Whether this process holds any capability (effective or permitted)."""
    with open("/proc/self/status") as status:
        fields = dict(line.split(":", 1) for line in status if ":" in line)
    return any(int(fields.get(key, "0").strip(), 16) for key in ("CapEff", "CapPrm"))


def _last_capability() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return 63


def _probe(canary: str, scratch: str) -> str:
    """In a confined child: try what must be refused; describe any that was not."""
    failures = []
    outside = os.path.dirname(canary)
    attempts: tuple[tuple[str, Callable[[], object]], ...] = (
        ("reading a file outside the sandbox", lambda: os.close(os.open(canary, os.O_RDONLY))),
        (
            "creating a file outside the sandbox",
            lambda: os.close(os.open(f"{outside}/probe", os.O_CREAT | os.O_WRONLY)),
        ),
        ("opening a network socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()),
        ("signalling the worker", lambda: os.kill(os.getppid(), signal.SIGCONT)),
    )
    for what, attempt in attempts:
        try:
            attempt()
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM):
                continue
            failures.append(f"{what} failed with {exc.strerror} instead of being refused")
        else:
            failures.append(f"{what} was allowed")
    try:
        path = os.path.join(scratch, ".probe")
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        os.unlink(path)
    except OSError as exc:
        failures.append(f"the scratch directory is not writable ({exc.strerror})")
    return "; ".join(failures)


ACTIVE: Confinement | None = None
"""This worker's confinement, once :func:`activate` ran (None: another isolation, or none)."""


def activate(description: str) -> None:
    """Confine this worker (:func:`prepare`) and keep what its children add in :data:`ACTIVE`."""
    global ACTIVE
    ACTIVE = prepare(description)


def prepare(description: str) -> Confinement:
    """Confine this worker as the host described (JSON) and make it every job's subreaper; return what
    each child adds.

    The worker gives up every capability and binds itself to the file ruleset: from here on neither it
    nor any child can open what the policy does not list.

    Raises:
        OSError: the kernel lacks what it needs (the message says what).
        ValueError: no seccomp filter for this architecture.
    """
    spec = json.loads(description)
    abi, why = abi_version()
    abi = min(abi, int(spec.get("abi") or abi))  # the host may ask for an older ABI's confinement
    if abi < MIN_ABI:
        raise OSError(errno.ENOSYS, why or f"Landlock ABI {abi} is too old (ABI {MIN_ABI}, Linux 6.2, is needed)")
    policy = Policy(**{key: tuple(spec[key]) for key in ("read", "hidden", "write", "devices", "packages")})
    files = Ruleset.for_files(abi, path_rules(policy, abi))
    scope = Ruleset.for_scope(abi) if abi >= SCOPE_ABI else None
    code = seccomp.build() if scope is not None else None
    if code is None:
        seccomp.build(group=1)  # fails here, not in a child, on an architecture without a table
    drop_capabilities()
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    files.restrict_self()
    os.close(files.fd)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    return Confinement(scope, code, str(spec["write"][0]), str(spec["canary"]))


def sweep_descendants() -> None:
    """Kill every process below this one (the subreaper), children first, until none is left.

    Only this process's own children are signalled: their PIDs stay theirs until this process reaps
    them. A child's own children come to this process when it dies, and the next pass kills them.
    """
    while pids := children():
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in pids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def children() -> list[int]:
    """This process's children (alive or not yet reaped)."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as handle:
            return [int(pid) for pid in handle.read().split()]
    except FileNotFoundError:  # a kernel without CONFIG_PROC_CHILDREN: find them by parent
        return [pid for pid in _all_pids() if _parent(pid) == me]


def _all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def on_termination() -> None:
    """When the worker is told to stop (SIGTERM, also its parent-death signal), end its job's processes
    first: without a PID namespace nothing else would."""

    def stop(number: int, frame: object) -> None:
        sweep_descendants()
        os._exit(1)

    signal.signal(signal.SIGTERM, stop)
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def failed(message: str) -> None:
    """In a child that could not confine itself: say why on stderr and exit without running anything."""
    try:
        os.write(2, FAILED_MARK + message.encode(errors="replace")[:500] + b"\n")
    finally:
        os._exit(FAILED)
