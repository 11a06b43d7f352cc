"""The worker's main loop: read a job, run it, write the reply; clean the scratch space between jobs.

The protocol (``protocol.py``) runs on private copies of the descriptors the host gave as stdin and
stdout (0 and 1 then point at /dev/null and stderr, so children cannot reach it).
"""

from __future__ import annotations

import builtins
import ctypes
import gc
import json
import os
import shutil
import signal
import sys
import time

from . import codec, confine
from . import protocol as wire
from .child import CANDIDATE_FILE, error_message, take_snapshot
from .jobs import run_function_job, run_stdio_job
from .supervise import CONTROL, kill_child, read_frame

_M_ARENA_MAX = -8
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
PRELOADED = (
    "array",
    "bisect",
    "collections",
    "copy",
    "datetime",
    "decimal",
    "fractions",
    "functools",
    "hashlib",
    "heapq",
    "itertools",
    "math",
    "operator",
    "random",
    "re",
    "statistics",
    "string",
    "typing",
)
"""Imported once in the worker so that programs importing them pay nothing (HumanEval's prompts all
import ``typing``)."""


_UID_TASKS: list[float] = [-1.0, 0.0]
"""When the uid's tasks were last counted (monotonic seconds), and how many there were."""


def _on_top_of_the_uids_tasks(limits: dict[str, object]) -> None:
    """Where the job's uid is shared (:data:`~protocol.PROCESSES_SHARED`), its process limit on top of the tasks
    the uid has, counted at most once a second."""
    if limits.get(wire.PROCESSES_SHARED) is not True or not isinstance(limits.get(wire.PROCESSES), int):
        return
    now = time.monotonic()
    if now - _UID_TASKS[0] >= 1.0:
        _UID_TASKS[:] = [now, float(uid_tasks(os.getuid()))]
    limits[wire.PROCESSES] = int(str(limits[wire.PROCESSES])) + int(_UID_TASKS[1])


def uid_tasks(uid: int) -> int:
    """The tasks (processes and threads) whose real uid is ``uid``, as RLIMIT_NPROC counts them; those whose
    status cannot be read are not counted."""
    found = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", "rb") as handle:
                status = handle.read()
        except OSError:
            continue
        real = status.find(b"\nUid:\t")
        threads = status.find(b"\nThreads:\t")
        if real >= 0 and threads >= 0 and int(status[real + 6 :].split(None, 1)[0]) == uid:
            found += int(status[threads + 10 :].split(None, 1)[0])
    return found


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def clean_scratch(scratch: str) -> None:
    """Empty the scratch space so that nothing a job wrote is seen by the next one.

    Inside the sandbox (PID 1 of a private namespace) that is all of /tmp and /dev/shm, which are
    private to this worker, except the way to the interpreter when it is installed under /tmp (bound
    read-only on top of the private /tmp); unsandboxed it is only the worker's own scratch directory.
    """
    keep = _on_the_way_to(sys.base_prefix, sys.prefix, sys.executable)
    for root in ("/tmp", "/dev/shm") if os.getpid() == 1 else (scratch,):
        _empty(root, keep)


def _on_the_way_to(*paths: str) -> frozenset[str]:
    """Every directory from / down to each of ``paths``."""
    found: set[str] = set()
    for path in paths:
        while path not in ("", "/") and path not in found:
            found.add(path)
            path = os.path.dirname(path)
    return frozenset(found)


def _empty(root: str, keep: frozenset[str]) -> None:
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        path = os.path.join(root, name)
        if path in keep:
            if not os.path.ismount(path):
                _empty(path, keep)
        elif os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


def install_site_builtins() -> None:
    """``exit`` and ``quit``, which ``site`` would add; ``-S`` skips site, but programs call them."""
    import _sitebuiltins

    builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
    builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")


def warm_up() -> None:
    """Run the harness path once in the worker itself.

    The first compile, exec and encode in a fresh interpreter initialise lazily allocated state; done
    here once, every forked child inherits it (measured here: the first compile in a child took 2.7 ms
    cold and 0.8 ms warm).
    """
    for name in PRELOADED:
        __import__(name)
    program = "def _f(a, b=2):\n    return [a, (b, {a: b}), {1.5}]\n"
    namespace: dict[str, object] = {"__builtins__": builtins}
    exec(compile(program, CANDIDATE_FILE, "exec", dont_inherit=True), namespace)  # noqa: S102 - our own constant
    value = eval(compile("_f(1)", "<test>", "eval", dont_inherit=True), namespace)  # noqa: S307 - our own constant
    json.loads(json.dumps({wire.INDEX: 0, wire.VALUE: codec.encode(codec.plain(value))}))
    try:
        raise ValueError("warm-up")
    except ValueError as exc:
        error_message(exc)


def serve(proto_in: int, proto_out: int, scratch: str) -> None:
    """Answer jobs until the host closes the pipe."""
    counter = 0
    while (job := read_frame(proto_in)) is not None:
        if wire.WITHDRAW in job:
            continue  # about a job that ended before the worker read it
        for suite in job[wire.SUITES]:
            suite[wire.TESTS] = wire.tests_listed(suite[wire.TESTS])
        _on_top_of_the_uids_tasks(job[wire.LIMITS])
        counter += 1
        job[wire.CWD] = os.path.join(scratch, f"job{counter}")
        os.mkdir(job[wire.CWD], 0o700)
        gc.freeze()  # keep the worker's objects out of the children's collections (fewer copied pages)
        started, started_cpu = time.monotonic(), time.process_time()
        CONTROL.begin(proto_in, job[wire.JOB_ID])
        try:
            reply = run_stdio_job(job) if job[wire.MODE] == wire.STDIO else run_function_job(job)
        finally:
            CONTROL.end()
            clean_scratch(scratch)
        stats = reply.get(wire.STATS)
        reply[wire.STATS] = {
            **(stats if isinstance(stats, dict) else {}),
            "wall": time.monotonic() - started,
            "worker_cpu": time.process_time() - started_cpu,
        }
        reply[wire.JOB_ID] = job[wire.JOB_ID]
        data = framed(reply)
        _write_all(proto_out, wire.HEADER.pack(len(data)) + data)


def framed(reply: dict[str, object]) -> bytes:
    """A reply as it crosses (``protocol``'s framing): its JSON, then a newline and its values rows' texts, each
    row in the JSON standing as its place among them (:data:`~protocol.VALUES_TEXT`). The texts are written as
    the JSON would have held them, so the worker's work is the same; the host reads a text only when it is
    not a row it already judged right."""
    rows = reply.get(wire.RESULTS)
    texts: list[bytes] = []
    at = 0
    for index, row in enumerate(rows if isinstance(rows, list) else ()):
        if isinstance(row, dict) and wire.VALUES in row:
            texts.append(codec.JSON_TEXT(row[wire.VALUES]).encode())
            rows[index] = {wire.VALUES_TEXT: [at, at + len(texts[-1])]}  # type: ignore[index]
            at += len(texts[-1])
    return b"\n".join([json.dumps(reply).encode(), b"".join(texts)])


def main() -> None:
    """Set the worker up and serve: protocol on private fds, stdio pointed away from them."""
    proto_in, proto_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    try:
        libc = ctypes.CDLL(None)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)  # children cannot ptrace us or read our memory
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # setpriv's uid change cleared bwrap's
        # One malloc arena: a thread would otherwise reserve its own 64 MiB arena, which outlives the
        # thread and would count against the next program's address space in the same child.
        libc.mallopt(_M_ARENA_MAX, 1)
    except (OSError, AttributeError):
        pass
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    scratch = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
    sys.path.extend(sys.argv[2:])  # packages the user allowed candidates to import
    install_site_builtins()
    warm_up()
    description = os.environ.pop(confine.ENVIRONMENT, None)
    if description is not None:
        _confine(description, scratch)
    elif os.getpid() != 1:  # unsandboxed: no namespace dies with us, no subreaper sweeps
        _end_jobs_on_termination()
    take_snapshot()
    gc.collect()
    _write_all(proto_out, wire.READY)
    serve(proto_in, proto_out, scratch)


def _end_jobs_on_termination() -> None:
    """Unsandboxed, when told to stop (SIGTERM: the host's stop of a busy worker, and now the parent-death
    signal), kill each running job's process group first (every job child leads its own, ``setsid``):
    before, the worker died alone and its program, re-parented to init, ran on to its CPU limit."""

    def stop(number: int, frame: object) -> None:
        for pid in confine.children():
            kill_child(pid)
        os._exit(1)

    signal.signal(signal.SIGTERM, stop)
    try:
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _confine(description: str, scratch: str) -> None:
    """The ``landlock`` isolation: confine this worker, prove a child is confined, or exit saying why
    (one line on stderr: the host falls through to the next isolation with it)."""
    try:
        confine.activate(description)
        failure = confine.ACTIVE.verify() if confine.ACTIVE is not None else "not confined"
    except (OSError, ValueError) as exc:
        failure = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    if failure:
        sys.stderr.write(f"refinelab: landlock: {failure}\n")
        sys.exit(3)
    confine.on_termination()
    os.chdir(scratch)
