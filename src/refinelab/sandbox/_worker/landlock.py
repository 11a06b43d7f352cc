"""Landlock, through its three system calls: what a candidate program may read, write and signal.

Landlock lets an unprivileged process give up access for itself and every process it starts, with no
namespace and no capability, so it works inside containers whose default profiles forbid bubblewrap.
A *ruleset* lists what stays allowed; ``landlock_restrict_self`` makes it binding, for good. Rights
arrived with ABI versions: 1 files (Linux 5.13), 2 linking across directories, 3 truncation (6.2), 4
TCP bind and connect (6.7), 6 scoping signals and abstract Unix sockets to the sandbox (6.12). The
``landlock`` isolation needs ABI 3 (without truncation control a program could empty any file it may
open); on older ABIs the seccomp filter confines signals instead of Landlock (``seccomp.py``).

The worker binds itself to the file ruleset built from a :class:`Policy` (once: applying several
hundred rules costs milliseconds), so neither it nor anything it forks can open what the policy does
not list; each child then adds a small layer of its own that scopes signals to itself and its
descendants (``confine.py``).
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same number on every architecture
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

MIN_ABI = 3
SCOPE_ABI = 6
NET_ABI = 4

FILE_RIGHTS = READ_FILE | EXECUTE
"""Reading (and running) a file."""
TREE_RIGHTS = FILE_RIGHTS | READ_DIR
"""Reading a directory tree."""
DEVICE_RIGHTS = READ_FILE | WRITE_FILE | TRUNCATE
"""``/dev/null`` and its like."""
SCRATCH_RIGHTS = (
    (TREE_RIGHTS | WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO | MAKE_SYM)
    | REFER
    | TRUNCATE
)
"""Everything in the job's own directory but making device nodes."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _syscall(number: int, *args: object) -> int:
    libc = _libc()
    result = int(libc.syscall(number, *args))
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def abi_version() -> tuple[int, str]:
    """The Landlock ABI this kernel offers (0 when none) and, when none, why."""
    try:
        return _syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)), ""
    except OSError as exc:
        if exc.errno == 95:  # EOPNOTSUPP
            return 0, "Landlock is built into this kernel but not enabled (add landlock to the lsm= boot parameter)"
        if exc.errno == 1:  # EPERM: the kernel never answers so; a seccomp filter around this process does
            return 0, (
                "a seccomp filter refuses Landlock's system calls (Operation not permitted), as the default "
                "profiles of container runtimes before 2022 do: allow landlock_create_ruleset, landlock_add_rule "
                "and landlock_restrict_self in the container's seccomp profile, or use a newer Docker or Podman"
            )
        return 0, f"this kernel has no Landlock ({exc.strerror})"


def handled_rights(abi: int) -> int:
    """The file rights ABI ``abi`` knows (device ioctls are left alone: no device a program can open
    here has any worth guarding)."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


@dataclass(frozen=True)
class Policy:
    """What a confined program may touch, as paths the host chose (``sandbox/_landlock.py``)."""

    read: tuple[str, ...]
    """Trees readable (and executable): ``/usr``, the interpreter's prefix, allowed packages, ``/proc``."""
    hidden: tuple[str, ...]
    """Directories inside ``read`` whose files stay unreadable: site-packages, which may hold
    benchmark data and its hidden tests."""
    write: tuple[str, ...]
    """Trees writable: the worker's scratch directory."""
    devices: tuple[str, ...]
    """Files readable and writable: ``/dev/null``, ``/dev/zero``, ``/dev/full``, ``/dev/urandom``..."""
    packages: tuple[str, ...] = ()
    """Trees readable even inside a hidden directory: the packages the user let candidates import."""


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def path_rules(policy: Policy, abi: int) -> Iterator[tuple[str, int]]:
    """Every (path, rights) rule the policy needs under ABI ``abi``.

    Landlock rules cover whole trees and cannot carve a hole in one, so a readable tree holding a hidden
    directory gets a rule per entry instead, down to the hidden one (whose name stays listable; its
    files do not open).
    """
    known = handled_rights(abi)
    hidden = tuple(os.path.realpath(path) for path in policy.hidden)
    for root in policy.read:
        yield from _readable(os.path.realpath(root), hidden)
    for root in policy.packages:
        yield os.path.realpath(root), TREE_RIGHTS
    for root in policy.write:
        yield root, SCRATCH_RIGHTS & known
    for device in policy.devices:
        yield device, DEVICE_RIGHTS & known


def _readable(root: str, hidden: tuple[str, ...]) -> Iterator[tuple[str, int]]:
    if any(_within(root, h) for h in hidden):
        return
    if not any(_within(h, root) for h in hidden):
        yield root, TREE_RIGHTS if os.path.isdir(root) else FILE_RIGHTS
        return
    yield root, READ_DIR
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        yield from _readable(os.path.realpath(os.path.join(root, name)), hidden)


class Ruleset:
    """A Landlock ruleset, made binding by :meth:`restrict_self` (each call adds a layer to the caller's
    domain: a process's restrictions only ever grow)."""

    def __init__(self, abi: int, files: int, net: int, scope: int) -> None:
        self.abi = abi
        size = 24 if scope else 16 if net else 8
        attr = ctypes.create_string_buffer(struct.pack("=QQQ", files, net, scope)[:size], size)
        self.fd = _syscall(_CREATE_RULESET, attr, ctypes.c_size_t(size), ctypes.c_uint32(0))
        os.set_inheritable(self.fd, False)
        self.rules = 0

    @classmethod
    def for_files(cls, abi: int, rules: Iterable[tuple[str, int]]) -> Ruleset:
        """Files and TCP (ABI >= 4: no bind or connect at all), allowed only as ``rules`` say."""
        ruleset = cls(abi, handled_rights(abi), NET_BIND_TCP | NET_CONNECT_TCP if abi >= NET_ABI else 0, 0)
        for path, rights in rules:
            ruleset.rules += ruleset._add(path, rights)
        return ruleset

    @classmethod
    def for_scope(cls, abi: int) -> Ruleset:
        """Signals and abstract Unix sockets kept within the domain of the process that applies it (ABI >= 6)."""
        return cls(abi, 0, 0, SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)

    def _add(self, path: str, rights: int) -> int:
        """Allow ``rights`` under ``path``; 0 when the path cannot be opened (absent, or not ours to see)."""
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return 0
        try:
            if not os.path.isdir(f"/proc/self/fd/{fd}"):
                rights &= WRITE_FILE | FILE_RIGHTS | TRUNCATE  # a file takes file rights only
            attr = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
            _syscall(_ADD_RULE, ctypes.c_int(self.fd), ctypes.c_int(_RULE_PATH_BENEATH), attr, ctypes.c_uint32(0))
            return 1
        finally:
            os.close(fd)

    def restrict_self(self) -> None:
        """Bind this process (and everything it starts) to the ruleset, irrevocably; needs
        ``PR_SET_NO_NEW_PRIVS`` first."""
        _syscall(_RESTRICT_SELF, ctypes.c_int(self.fd), ctypes.c_uint32(0))
