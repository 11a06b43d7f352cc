"""The forked child: sets its limits, runs candidate programs, and reports on the result pipe (fd 3).

Every report is one JSON line carrying the job's nonce; the worker ignores lines without it. A pass is
never inferred from how the child ends: only these reports count, and the host judges values and
output itself.

A program has ended when the interpreter would have ended it: its non-daemon threads joined (and, for
a whole program, its ``atexit`` functions run and its output flushed). Competitive-programming code
often runs ``main`` in a thread with a large stack; reporting before that thread ends would judge
whatever it had printed so far. The join happens inside the step being timed, so a thread that never
ends is a timeout like any other.
"""

from __future__ import annotations

import atexit
import builtins
import gc
import json
import os
import resource
import signal
import sys
import threading
import time
import traceback
import types
from typing import cast

from . import codec, confine
from .protocol import (
    ARGS,
    BEGIN,
    CALL,
    CODE,
    CPU_TOTAL,
    CWD,
    DEFER_AFTER,
    END_INDEX,
    ENTRY_POINT,
    ERROR_TYPE,
    EXPR,
    FILE_BYTES,
    INDEX,
    ISOLATE,
    LIMITS,
    LOAD_INDEX,
    MEMORY_BYTES,
    MESSAGE,
    MODE,
    NEXT,
    NONCE,
    OPEN_FILES,
    PRELUDE,
    PROCESSES,
    PROGRAM,
    PROGRAMS,
    S_DEFERRED,
    S_DONE,
    S_ERROR,
    S_MEMORY,
    S_OK,
    S_VALUE,
    SETUP,
    STATUS,
    STDIO,
    STOP_AT_FAILURE,
    SUITE_OF,
    SUITES,
    TAINT,
    TEST_KIND,
    TESTS,
    TRACEBACK,
    VALUE,
    WHOLE_VALUES,
    Step,
)
from .state import Snapshot

CANDIDATE_FILE = "<candidate>"
SNAPSHOT: Snapshot | None = None


def take_snapshot() -> None:
    """Record the interpreter's clean state, in the worker, for every child to restore to."""
    global SNAPSHOT
    SNAPSHOT = Snapshot()
    _, saved = SNAPSHOT.saved[id(sys.modules[__name__])]
    saved["SNAPSHOT"] = SNAPSHOT  # restoring this module must keep the snapshot it was taken with


class Reporter:
    """Writes one JSON line per event to the result pipe, with the job's nonce."""

    def __init__(self, fd: int, nonce: str) -> None:
        self._fd = fd
        self._nonce = nonce
        self._dumps = codec.JSON_TEXT
        self._write = os.write

    def send(self, message: dict[str, object]) -> None:
        """Write one event."""
        message[NONCE] = self._nonce
        view = memoryview((self._dumps(message) + "\n").encode())
        while view:
            view = view[self._write(self._fd, view) :]

    def mark(self, program: int) -> None:
        """Mark on stdout and stderr where ``program``'s printing starts (``program_mark``).

        The worker reads the output pipes and the result pipe separately, so only a mark inside the
        output itself tells it which program of a batch printed what.
        """
        _flush_stdout()
        try:
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001, S110 - a broken stderr is the previous program's problem
            pass
        for fd in (1, 2):
            try:
                self._write(fd, program_mark(self._nonce, program))
            except OSError:
                pass


def program_mark(nonce: str, program: int) -> bytes:
    """The bytes that start a program's output in a batch child (one write, shorter than a pipe's atomic size)."""
    return b"\x00\x01" + nonce.encode() + b":" + str(program).encode() + b"\x00"


def error_message(exc: BaseException) -> dict[str, object]:
    """Describe an exception, with the traceback trimmed to the candidate's own lines."""
    if isinstance(exc, MemoryError):
        return {STATUS: S_MEMORY, ERROR_TYPE: "MemoryError", MESSAGE: _safe_str(exc)[:2000]}
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == CANDIDATE_FILE]
    lines = "".join(traceback.format_list(frames[-8:]))
    try:
        text = "".join(traceback.format_exception_only(type(exc), exc))
    except BaseException:  # noqa: BLE001 - a candidate's exception may fail to format
        text = type(exc).__name__ + "\n"
    return {
        STATUS: S_ERROR,
        ERROR_TYPE: type(exc).__name__,
        MESSAGE: _safe_str(exc)[:2000],
        TRACEBACK: (lines + text)[-4000:],
    }


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except BaseException:  # noqa: BLE001 - a candidate's __str__ may raise anything
        return "<unprintable>"


def _checked(function: object) -> object:
    """The entry point as tests see it: results rebuilt from exact builtins."""

    def checked(*args: object, **kwargs: object) -> object:
        return codec.plain(function(*args, **kwargs))  # type: ignore[operator]

    return checked


def entry_point(namespace: dict[str, object], entry: str) -> object:
    """The entry point as the tests call it (``candidate``): found by :func:`_resolve_entry`, its results
    rebuilt from exact builtins. The fake sandbox calls this too, so both judge the same values."""
    return _checked(_resolve_entry(namespace, entry))


def _resolve_entry(namespace: dict[str, object], entry: str) -> object:
    """Find the function to test: ``name`` or ``Class.method`` (LeetCode's ``Solution.f``)."""
    class_name, _, method = entry.rpartition(".")
    if not class_name:
        if entry not in namespace:
            raise NameError(f"the program does not define {entry!r}")
        return namespace[entry]
    if class_name not in namespace:
        raise NameError(f"the program does not define class {class_name!r}")
    return getattr(namespace[class_name](), method)  # type: ignore[operator]


_COMPILED: dict[tuple[str, str], object] = {}


def _compiled(source: str, filename: str, mode: str) -> object:
    """Compile test code once per child: every program in a batch runs the same tests."""
    key = (source, mode)
    code = _COMPILED.get(key)
    if code is None:
        code = _COMPILED[key] = compile(source, filename, mode, dont_inherit=True)
    return code


def suite_of(job: dict[str, object], program: int) -> dict[str, object]:
    """The suite (tests, entry point, setup) program ``program`` of the job runs against."""
    suites, index = job[SUITES], job[SUITE_OF]
    assert isinstance(suites, list) and isinstance(index, list)
    suite = suites[index[program]]
    assert isinstance(suite, dict)
    return suite


def run_source(suite: dict[str, object], source: str, namespace: dict[str, object]) -> None:
    """Run the suite's prelude, then the program, in the program's namespace.

    Compiled with ``dont_inherit``: this module's ``from __future__ import annotations`` must not
    leak into the program (it would let annotations name things the program never imported).
    """
    prelude = suite.get(PRELUDE)
    if prelude:
        exec(_compiled(str(prelude), "<prelude>", "exec"), namespace)  # type: ignore[arg-type]  # noqa: S102
    exec(compile(source, CANDIDATE_FILE, "exec", dont_inherit=True), namespace)  # noqa: S102 - sandboxed


def _test_scope(suite: dict[str, object], namespace: dict[str, object]) -> dict[str, object]:
    scope = dict(namespace)
    scope.update(inf=float("inf"), nan=float("nan"))
    entry = suite.get(ENTRY_POINT)
    if isinstance(entry, str) and entry:
        scope["candidate"] = entry_point(namespace, entry)
        if "." not in entry:
            scope[entry] = scope["candidate"]
    setup = suite.get(SETUP)
    if setup:
        exec(_compiled(str(setup), "<tests>", "exec"), scope)  # type: ignore[arg-type]  # noqa: S102
    return scope


def _run_test(test: dict[str, object], scope: dict[str, object], whole: bool) -> dict[str, object]:
    """Run one test; ``whole``: its value comes back whole, else a long string as its digest."""
    try:
        if test[TEST_KIND] == CALL:
            args = test.get(ARGS)
            if type(args) is str:
                value = _call(scope, args)
            else:
                value = eval(_compiled(str(test[EXPR]), "<test>", "eval"), scope)  # type: ignore[arg-type]  # noqa: S307
            encoded = codec.encode(value)
            return {STATUS: S_VALUE, VALUE: encoded if whole else codec.digested(encoded)}
        exec(_compiled(str(test[CODE]), "<test>", "exec"), scope)  # type: ignore[arg-type]  # noqa: S102
        return {STATUS: S_OK}
    except BaseException as exc:  # noqa: BLE001 - candidate code may raise anything
        return error_message(exc)


def _call(scope: dict[str, object], args: str) -> object:
    """``candidate(*args)`` as evaluating ``candidate(<the arguments as literals>)`` in ``scope`` would run it:
    ``candidate`` looked up now, and the arguments fresh (a program may change what it is given)."""
    if "candidate" not in scope:
        raise NameError("name 'candidate' is not defined")
    return scope["candidate"](*_arguments(args))  # type: ignore[operator]


_ARGUMENTS: dict[str, tuple[list[object], bool]] = {}
_SCALARS = (str, int, float, bool, type(None))


def _arguments(text: str) -> list[object]:
    """Fresh arguments from their JSON (a JSON array, made by the host), read once per child: every program
    of a batch runs the same tests. Arguments that are scalars, or lists or dicts of scalars (most inputs,
    a list of 10,000 numbers among them) are copied; anything nested is read again."""
    found = _ARGUMENTS.get(text)
    if found is None:
        parsed = cast("list[object]", json.loads(text))
        found = _ARGUMENTS[text] = (parsed, all(map(_shallow, parsed)))
    arguments, shallow = found
    if not shallow:
        return cast("list[object]", json.loads(text))
    return [list(a) if type(a) is list else dict(a) if type(a) is dict else a for a in arguments]


def _shallow(value: object) -> bool:
    """A scalar, or a list or dict holding only scalars: a shallow copy of it is a whole one."""
    if type(value) is list:
        return all(type(item) in _SCALARS for item in value)
    if type(value) is dict:
        return all(type(item) in _SCALARS for item in value.values())
    return type(value) in _SCALARS


_TASKS = "/proc/self/task"
_THREAD_EXIT_POLLS = 200


def join_threads() -> None:
    """Wait for every non-daemon thread, as the interpreter does before it exits.

    Threads may start threads, so this repeats until none is left. After the last join the kernel
    thread may still be exiting; waiting for it briefly keeps a batch child that ran a finished
    thread from being judged tainted ("a thread is still running").
    """
    try:
        current = threading.current_thread()
        while pending := [t for t in threading.enumerate() if t is not current and not t.daemon]:
            for thread in pending:
                thread.join()
    except BaseException:  # noqa: BLE001 - a program may break threading; the join is then its own
        return
    for _ in range(_THREAD_EXIT_POLLS):
        if len(os.listdir(_TASKS)) <= threading.active_count():
            return
        time.sleep(0.001)


def _finish_program() -> None:
    """End a whole program as ``Py_FinalizeEx`` does: join threads, run ``atexit`` functions, flush."""
    join_threads()
    try:
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001, S110 - the interpreter reports these and exits anyway
        pass
    _flush_stdout()


def _flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001, S110 - a closed or broken stdout is the program's problem
        pass


def _run_program(job: dict[str, object], program: int, start: int, report: Reporter) -> dict[str, object]:
    """Load one program and run its tests from ``start``; every step is reported. Returns its namespace."""
    codes, suite = job[PROGRAMS], suite_of(job, program)
    tests = suite[TESTS]
    assert isinstance(codes, list) and isinstance(tests, list)
    indices = range(start, len(tests))  # before the program runs: it may rebind builtins
    limits = job[LIMITS]
    stop = isinstance(limits, dict) and limits.get(STOP_AT_FAILURE) is True
    budget = limits.get(DEFER_AFTER) if isinstance(limits, dict) else None
    whole = suite.get(WHOLE_VALUES) is True
    namespace: dict[str, object] = {"__name__": "__candidate__", "__builtins__": builtins}
    report.mark(program)
    report.send({PROGRAM: program, INDEX: LOAD_INDEX, BEGIN: time.process_time()})
    try:
        run_source(suite, str(codes[program]), namespace)
        scope = _test_scope(suite, namespace)
    except BaseException as exc:  # noqa: BLE001 - candidate code may raise anything
        join_threads()
        _flush_stdout()
        report.send({PROGRAM: program, INDEX: LOAD_INDEX, **error_message(exc)})
        return namespace
    # Each report also announces the next step ("next"), so a step costs one write, not two.
    previous: dict[str, object] = {PROGRAM: program, INDEX: LOAD_INDEX, STATUS: S_OK}
    clock: float | None = None  # the budget runs from the end of the first test run here (not its warm-up)
    for index in indices:
        previous[NEXT] = [program, index, time.process_time()]
        report.send(previous)
        if clock is not None and _spent(budget, clock):  # one test ran here at least: each job makes headway
            previous = {PROGRAM: program, INDEX: index, STATUS: S_DEFERRED}
            break  # announced as a step: a thread that never ends still times out within its limit
        previous = {PROGRAM: program, INDEX: index, **_run_test(tests[index], scope, whole)}
        clock = time.process_time() if clock is None else clock
        _flush_stdout()
        if stop and previous[STATUS] not in (S_VALUE, S_OK):
            break  # its verdict is known: the worker reports the rest as skipped
    join_threads()  # within the last step: a thread that never ends times it out
    _flush_stdout()
    report.send(previous)
    return namespace


def _spent(budget: object, since: float) -> bool:
    """Whether a program has spent its :data:`DEFER_AFTER` ``budget`` since CPU second ``since``."""
    return isinstance(budget, (int, float)) and time.process_time() - since > budget


def run_function_child(job: dict[str, object], first: int, start: int, report: Reporter) -> None:
    """Run programs from ``first`` (its tests from ``start``) until done, isolated, or tainted.

    The interpreter is put back only between two programs of this child, not after its last one: the child
    exits then. Putting it back reads every loaded module, and each object read copies a page of the
    worker's memory into the child: about 600 pages, 2 of a one-test job's 5 ms of child CPU.

    A child that has spent the job's :data:`DEFER_AFTER` ends after the program it is on: the worker then
    hands back the programs after it (``jobs._handed_back``), so programs batched behind slow ones that
    finish within their limits do not wait for them either.
    """
    codes, limits = job[PROGRAMS], job[LIMITS]
    assert isinstance(codes, list)
    budget = limits.get(DEFER_AFTER) if isinstance(limits, dict) else None
    snapshot = SNAPSHOT
    if snapshot is None:
        raise RuntimeError("take_snapshot() must run in the worker before children are forked")
    last = first if job.get(ISOLATE) else len(codes) - 1
    if first < last:
        snapshot.bind(in_own_namespace=os.getppid() == 1)
    for program in range(first, last + 1):
        namespace = _run_program(job, program, start if program == first else 0, report)
        if program == last:
            if job.get(ISOLATE):
                report.send({PROGRAM: program, INDEX: END_INDEX, TAINT: "isolated"})
            return
        if _spent(budget, 0.0):  # between two programs: the worker starts no child for the next one
            return
        reason = snapshot.restore(namespace)
        if reason:
            report.send({PROGRAM: program, INDEX: END_INDEX, TAINT: reason})
            return


def run_stdio_child(job: dict[str, object], report: Reporter) -> None:
    """Run a whole program with the test's input on a real fd 0."""
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False, buffering=1)  # noqa: SIM115
    for name in ("stdin", "stdout", "stderr"):  # programs that use sys.__stdout__ get the same streams
        setattr(sys, f"__{name}__", getattr(sys, name))
    codes = job[PROGRAMS]
    assert isinstance(codes, list)
    namespace = _main_module(str(codes[0]))
    atexit._clear()  # only the program's own exit functions run when it ends
    report.send({PROGRAM: 0, INDEX: 0, BEGIN: time.process_time()})
    outcome: dict[str, object] = {STATUS: S_DONE}
    try:
        run_source(suite_of(job, 0), str(codes[0]), namespace)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            outcome = {STATUS: S_ERROR, ERROR_TYPE: "SystemExit", MESSAGE: f"exit status {exc.code!r}", TRACEBACK: ""}
    except BaseException as exc:  # noqa: BLE001 - candidate code may raise anything
        outcome = error_message(exc)
    _finish_program()
    report.send({PROGRAM: 0, INDEX: 0, **outcome})


STDIO_ARGV = ["main.py"]
"""``sys.argv`` of a stdio program, as if run as ``python main.py`` (not the worker's own arguments)."""


def _main_module(source: str) -> dict[str, object]:
    """A fresh ``__main__`` module for a whole program, as ``python main.py`` gives it; its namespace.

    ``if __name__ == "__main__": main()`` runs, and ``import __main__`` (pickle, multiprocessing,
    ``sys.modules["__main__"]``) finds the program's own module rather than the worker's. ``__file__``
    is the absolute path of ``main.py`` in the working directory, which holds the program.
    """
    path = os.path.join(os.getcwd(), STDIO_ARGV[0])
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source)
    except OSError:  # a full scratch disk: the program still runs, only reading its own file fails
        pass
    module = types.ModuleType("__main__")
    module.__dict__.update(__builtins__=builtins, __file__=path, __cached__=None)
    sys.modules["__main__"] = module
    sys.argv = list(STDIO_ARGV)
    return module.__dict__


def child_main(job: dict[str, object], position: Step, fds: dict[str, int], nonce: str) -> None:
    """Entry of the forked child; never returns."""
    try:
        _prepare(job, fds)
        report = Reporter(3, nonce)
        if job[MODE] == STDIO:
            run_stdio_child(job, report)
        else:
            run_function_child(job, position.program, position.test, report)
    finally:
        os._exit(0)


def _prepare(job: dict[str, object], fds: dict[str, int]) -> None:
    os.setsid()
    for target, source in ((0, fds["input"]), (1, fds["out"]), (2, fds["err"]), (3, fds["res"])):
        os.dup2(source, target)
    if confine.ACTIVE is not None:
        try:
            confine.ACTIVE.enter()  # before the descriptors close: its Landlock layer is one
        except BaseException as exc:  # noqa: BLE001 - nothing runs unconfined
            confine.failed(str(exc))
    os.closerange(4, 1 << 16)
    limits = job[LIMITS]
    assert isinstance(limits, dict)
    set_limits(limits)
    os.chdir(str(job[CWD]))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # an unsandboxed worker's handler is not the program's
    gc.enable()


def set_limits(limits: dict[str, object]) -> None:
    """Apply the job's rlimits to this process (soft = hard, so they cannot be raised)."""

    def cap(which: int, value: object) -> None:
        number = int(str(value))
        resource.setrlimit(which, (number, number))

    with open("/proc/self/statm", "rb") as handle:
        vm_bytes = int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    cap(resource.RLIMIT_AS, vm_bytes + int(str(limits[MEMORY_BYTES])))  # on top of what exists
    cap(resource.RLIMIT_CPU, limits[CPU_TOTAL])
    cap(resource.RLIMIT_FSIZE, limits[FILE_BYTES])
    cap(resource.RLIMIT_NOFILE, limits[OPEN_FILES])
    cap(resource.RLIMIT_CORE, 0)
    if limits.get(PROCESSES):
        cap(resource.RLIMIT_NPROC, limits[PROCESSES])
