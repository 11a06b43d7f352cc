"""The seccomp filter of the ``landlock`` isolation: system calls a candidate program may not make.

Landlock (``landlock.py``) confines files, TCP and, from ABI 6, signals and abstract sockets; what it
does not reach is denied here: every socket but a Unix stream pair or listener, ``connect`` (so no
Unix socket of the host can be reached either), ``ptrace`` and the calls that read or write another
process's memory, mounts, namespaces, System V and POSIX message IPC (objects that outlive the job),
io_uring (it makes socket and file calls the filter cannot see), the kernel's keyring, BPF, modules,
clocks and reboot, file metadata (mode, owner, times, attributes: Landlock guards contents, not these), and
limits or priorities of any process but the caller. Without Landlock's signal
scope (ABI < 6), signals may only go to the job's own process group.

The filter is classic BPF, written here with the system call numbers of each architecture (checked
against the kernel headers in ``tests/sandbox/test_landlock.py`` where they are installed). A call made
through another architecture's ABI (x86_64's 32-bit ``int 0x80``, x32) is refused outright: its numbers
mean other calls. Built in the worker once; each child installs it (``install``).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

# Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_AND = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_NR, _ARCH, _ARGS = 0, 4, 16  # offsets in struct seccomp_data (the low 32 bits of argument i at 16 + 8i)

_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2

AF_UNIX = 1
_SOCK_STREAM, _SOCK_SEQPACKET, _SOCK_TYPE_MASK = 1, 5, 0xF
_CLONE_NAMESPACES = 0x20000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
"""CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (``clone``'s low byte is its exit signal)."""
_F_SETOWN, _F_SETOWN_EX = 8, 15
_FIOSETOWN, _SIOCSPGRP = 0x8901, 0x8902
_FS_IOC_SETFLAGS, _FS_IOC32_SETFLAGS, _FS_IOC_FSSETXATTR = 0x40086602, 0x40046602, 0x401C5820
"""Inode flags and project attributes: settable on a file opened read-only by its owner."""


def _errno(number: int) -> int:
    return _ERRNO | number


# fmt: off
DENIED = (
    # mounts and namespaces
    "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
    "open_tree", "mount_setattr", "unshare", "setns",
    # other processes' memory and descriptors
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise",
    # the kernel itself
    "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "kexec_load", "kexec_file_load", "init_module",
    "finit_module", "delete_module", "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname", "userfaultfd",
    "open_by_handle_at", "name_to_handle_at", "lookup_dcookie", "fanotify_init", "syslog", "vhangup",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    # IPC objects that outlive the job, shared with every process of the machine (or container)
    "shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semctl", "semtimedop", "msgget", "msgsnd", "msgrcv",
    "msgctl", "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
    # metadata Landlock does not guard: a program that owns a file (a container's root owns them all) could
    # change its mode, owner, times or attributes through any path, or a descriptor opened read-only
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime", "utimes",
    "futimesat", "utimensat", "setxattr", "lsetxattr", "fsetxattr", "setxattrat", "removexattr", "lremovexattr",
    "fremovexattr", "removexattrat",
    # every connection: the only sockets left are Unix ones (below), and they may not connect anywhere
    "connect",
)
# fmt: on
"""Refused with EPERM (``connect`` with EACCES), whatever the arguments."""

X86_64_ONLY = ("iopl", "ioperm")
"""Denied too where the architecture has them."""

# fmt: off
SYSCALLS: dict[str, dict[str, int]] = {
    "x86_64": {
        "ioctl": 16, "shmget": 29, "shmat": 30, "shmctl": 31, "socket": 41, "connect": 42, "socketpair": 53,
        "clone": 56, "kill": 62, "semget": 64, "semop": 65, "semctl": 66, "shmdt": 67, "msgget": 68, "msgsnd": 69,
        "msgrcv": 70, "msgctl": 71, "fcntl": 72, "ptrace": 101, "syslog": 103, "rt_sigqueueinfo": 129,
        "setpriority": 141, "sched_setparam": 142, "sched_setscheduler": 144, "vhangup": 153, "pivot_root": 155,
        "adjtimex": 159, "chroot": 161, "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166,
        "swapon": 167, "swapoff": 168, "reboot": 169, "sethostname": 170, "setdomainname": 171, "iopl": 172,
        "ioperm": 173, "init_module": 175, "delete_module": 176, "quotactl": 179, "tkill": 200,
        "sched_setaffinity": 203, "lookup_dcookie": 212, "semtimedop": 220, "clock_settime": 227, "tgkill": 234,
        "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244,
        "mq_getsetattr": 245, "kexec_load": 246, "add_key": 248, "request_key": 249, "keyctl": 250,
        "ioprio_set": 251, "migrate_pages": 256, "unshare": 272, "move_pages": 279, "rt_tgsigqueueinfo": 297,
        "perf_event_open": 298, "fanotify_init": 300, "prlimit64": 302, "name_to_handle_at": 303,
        "open_by_handle_at": 304, "clock_adjtime": 305, "setns": 308, "process_vm_readv": 310,
        "process_vm_writev": 311, "kcmp": 312, "finit_module": 313, "sched_setattr": 314, "kexec_file_load": 320,
        "bpf": 321, "userfaultfd": 323, "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
        "fsmount": 432, "fspick": 433, "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440,
        "mount_setattr": 442, "quotactl_fd": 443, "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93,
        "lchown": 94, "utime": 132, "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "removexattr": 197,
        "lremovexattr": 198, "fremovexattr": 199, "utimes": 235, "fchownat": 260, "futimesat": 261,
        "fchmodat": 268, "utimensat": 280, "fchmodat2": 452, "setxattrat": 463, "removexattrat": 466,
    },
    "aarch64": {
        "lookup_dcookie": 18, "fcntl": 25, "ioctl": 29, "ioprio_set": 30, "umount2": 39, "mount": 40,
        "pivot_root": 41, "chroot": 51, "vhangup": 58, "quotactl": 60, "acct": 89, "unshare": 97, "kexec_load": 104,
        "init_module": 105, "delete_module": 106, "clock_settime": 112, "syslog": 116, "ptrace": 117,
        "sched_setparam": 118, "sched_setscheduler": 119, "sched_setaffinity": 122, "kill": 129, "tkill": 130,
        "tgkill": 131, "rt_sigqueueinfo": 138, "setpriority": 140, "reboot": 142, "sethostname": 161,
        "setdomainname": 162, "settimeofday": 170, "adjtimex": 171, "mq_open": 180, "mq_unlink": 181,
        "mq_timedsend": 182, "mq_timedreceive": 183, "mq_notify": 184, "mq_getsetattr": 185, "msgget": 186,
        "msgctl": 187, "msgrcv": 188, "msgsnd": 189, "semget": 190, "semctl": 191, "semtimedop": 192, "semop": 193,
        "shmget": 194, "shmctl": 195, "shmat": 196, "shmdt": 197, "socket": 198, "socketpair": 199, "connect": 203,
        "add_key": 217, "request_key": 218, "keyctl": 219, "clone": 220, "swapon": 224, "swapoff": 225,
        "migrate_pages": 238, "move_pages": 239, "rt_tgsigqueueinfo": 240, "perf_event_open": 241,
        "prlimit64": 261, "fanotify_init": 262, "name_to_handle_at": 264, "open_by_handle_at": 265,
        "clock_adjtime": 266, "setns": 268, "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272,
        "finit_module": 273, "sched_setattr": 274, "bpf": 280, "userfaultfd": 282, "kexec_file_load": 294,
        "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
        "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442, "quotactl_fd": 443,
        "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15, "fremovexattr": 16,
        "fchmod": 52, "fchmodat": 53, "fchownat": 54, "fchown": 55, "utimensat": 88, "fchmodat2": 452,
        "setxattrat": 463, "removexattrat": 466,
    },
}
# fmt: on
"""System call numbers, per architecture (``platform.machine()``)."""

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
"""The architecture tag the kernel puts in ``seccomp_data.arch`` for the native ABI."""
_X32_BIT = 0x40000000


class Program:
    """A classic BPF program being written, with labels for forward jumps."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int | str, int | str, int]] = []
        self.labels: dict[str, int] = {}

    def op(self, code: int, k: int = 0, jt: int | str = 0, jf: int | str = 0) -> None:
        """One instruction; ``jt``/``jf`` are offsets or labels placed later."""
        self.code.append((code, jt, jf, k))

    def label(self, name: str) -> None:
        """Place ``name`` at the next instruction."""
        self.labels[name] = len(self.code)

    def load(self, offset: int) -> None:
        """Load a 32-bit word of ``seccomp_data``."""
        self.op(_LD_ABS, offset)

    def ret(self, action: int) -> None:
        """End with ``action``."""
        self.op(_RET, action)

    def assemble(self) -> bytes:
        """The program as ``struct sock_filter`` entries, labels resolved."""
        out = bytearray()
        for index, (code, jt, jf, k) in enumerate(self.code):
            out += struct.pack("=HBBI", code, self._offset(index, jt), self._offset(index, jf), k & 0xFFFFFFFF)
        return bytes(out)

    def _offset(self, index: int, target: int | str) -> int:
        if isinstance(target, int):
            return target
        offset = self.labels[target] - index - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"seccomp jump to {target} out of range ({offset})")
        return offset


def _allow_if_arg(program: Program, name: str, arg: int, values: tuple[int, ...], deny: int) -> None:
    """Allow the call only when its argument ``arg`` (low 32 bits) is one of ``values``."""
    program.load(_ARGS + 8 * arg)
    for value in values:
        program.op(_JEQ, value & 0xFFFFFFFF, f"{name}.allow", 0)
    program.ret(deny)
    program.label(f"{name}.allow")
    program.ret(ALLOW)


def _deny_if_arg(program: Program, name: str, arg: int, values: tuple[int, ...]) -> None:
    """Refuse the call when its argument ``arg`` (low 32 bits) is one of ``values``."""
    program.load(_ARGS + 8 * arg)
    for value in values:
        program.op(_JEQ, value, f"{name}.deny", 0)
    program.ret(ALLOW)
    program.label(f"{name}.deny")
    program.ret(_errno(errno.EPERM))


def _unix_stream(program: Program, name: str) -> None:
    """``socket``/``socketpair``: a Unix socket of a connection-oriented type only (no datagram socket
    can address a host socket, and ``connect`` is refused)."""
    program.load(_ARGS)
    program.op(_JEQ, AF_UNIX, 0, f"{name}.deny")
    program.load(_ARGS + 8)
    program.op(_AND, _SOCK_TYPE_MASK)
    program.op(_JEQ, _SOCK_STREAM, f"{name}.allow", 0)
    program.op(_JEQ, _SOCK_SEQPACKET, f"{name}.allow", 0)
    program.label(f"{name}.deny")
    program.ret(_errno(errno.EACCES))
    program.label(f"{name}.allow")
    program.ret(ALLOW)


def _no_namespaces(program: Program, name: str) -> None:
    program.load(_ARGS)
    program.op(_JSET, _CLONE_NAMESPACES, 0, 1)
    program.ret(_errno(errno.EPERM))
    program.ret(ALLOW)


def _blocks(group: int | None) -> dict[str, object]:
    """The calls allowed with conditions: how each is checked. ``group``: the job's process group when
    signals must be confined by the filter (no Landlock signal scope), else None."""
    own = (0,)  # "this process" (or its own group, for setpriority's who)
    blocks: dict[str, object] = {
        "socket": _unix_stream,
        "socketpair": _unix_stream,
        "clone": _no_namespaces,
        "clone3": errno.ENOSYS,  # its flags are in memory the filter cannot read: the C library falls back to clone
        "prlimit64": (0, own),
        "setpriority": (1, own),
        "sched_setaffinity": (0, own),
        "sched_setparam": (0, own),
        "sched_setscheduler": (0, own),
        "sched_setattr": (0, own),
        "ioprio_set": (1, own),
        "migrate_pages": (0, own),
        "move_pages": (0, own),
        "ioctl": ("deny", 1, (_FS_IOC_SETFLAGS, _FS_IOC32_SETFLAGS, _FS_IOC_FSSETXATTR)),
    }
    if group is not None:
        blocks.update(
            kill=(0, (0, group, -group)),
            tgkill=(0, (group,)),
            rt_sigqueueinfo=(0, (group,)),
            rt_tgsigqueueinfo=(0, (group,)),
            tkill=errno.EPERM,
            pidfd_send_signal=errno.EPERM,
            fcntl=("deny", 1, (_F_SETOWN, _F_SETOWN_EX)),  # SIGIO to a process of one's choosing
            ioctl=("deny", 1, (_FS_IOC_SETFLAGS, _FS_IOC32_SETFLAGS, _FS_IOC_FSSETXATTR, _FIOSETOWN, _SIOCSPGRP)),
        )
    return blocks


def build(machine: str | None = None, group: int | None = None) -> bytes:
    """The filter for this machine's architecture; ``group``: see :func:`_blocks`.

    Raises:
        ValueError: the architecture has no system call table here.
    """
    arch = machine or platform.machine()
    if arch not in SYSCALLS:
        raise ValueError(f"no seccomp filter for the {arch} architecture")
    numbers = SYSCALLS[arch]
    program = Program()
    program.load(_ARCH)
    program.op(_JEQ, AUDIT_ARCH[arch], 1, 0)
    program.ret(_errno(errno.EPERM))  # another ABI's numbers mean other calls
    program.load(_NR)
    if arch == "x86_64":
        program.op(_JGE, _X32_BIT, 0, 1)
        program.ret(_errno(errno.EPERM))
    for name, how in _blocks(group).items():
        _conditional(program, numbers[name], name, how)
    denied = [name for name in (*DENIED, *X86_64_ONLY) if name in numbers]
    for name in denied:
        program.op(_JEQ, numbers[name], f"deny.{name}", 0)
    program.ret(ALLOW)
    for name in denied:
        program.label(f"deny.{name}")
        program.ret(_errno(errno.EACCES if name == "connect" else errno.EPERM))
    return program.assemble()


def _conditional(program: Program, number: int, name: str, how: object) -> None:
    """``if nr == number: <block>`` (every block ends in a return, so nothing follows it)."""
    block = Program()
    if isinstance(how, int):
        block.ret(_errno(how))
    elif callable(how):
        how(block, name)
    elif isinstance(how, tuple) and how[0] == "deny":
        _deny_if_arg(block, name, how[1], how[2])
    else:
        assert isinstance(how, tuple)
        _allow_if_arg(block, name, how[0], how[1], _errno(errno.EPERM))
    program.op(_JEQ, number, 0, len(block.code))
    base = len(program.code)
    program.labels.update({key: base + at for key, at in block.labels.items()})
    program.code.extend(block.code)


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(filter_code: bytes) -> None:
    """Load the filter into this process (after ``PR_SET_NO_NEW_PRIVS``); it is inherited by every
    process this one starts and can never be removed.

    Raises:
        OSError: the kernel refused it.
    """
    buffer = ctypes.create_string_buffer(filter_code, len(filter_code))
    prog = _Fprog(len(filter_code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"seccomp filter refused: {os.strerror(number)}")
