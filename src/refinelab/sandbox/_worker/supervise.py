"""The worker's side of one child: fork it, watch its pipes and its CPU time, kill it, clean up.

Time is judged on the child's CPU time, read from ``/proc`` (the child cannot lie about it), with a
wall-clock backstop; the worker SIGKILLs the child, so catching ``BaseException`` buys nothing. Output
is read while the child runs (no pipe-full deadlock) and capped. A batch child marks where each
program's printing starts (``child.program_mark``), and the output is split there: the result pipe
and the output pipes are read separately, so the order they are read in says nothing.

The backstop is there for programs that sleep or block, so time a thread of the child spent ready to
run but waiting for a CPU (``/proc/<pid>/task/<tid>/schedstat``, second field) does not count
towards it: on a busy machine a correct CPU-bound program would otherwise time out. A test that has
lasted ``protocol.WALL_CEILING`` times the backstop in plain wall time ends anyway.
"""

from __future__ import annotations

import json
import math
import os
import select
import signal
import time
from collections.abc import Callable
from typing import Any, TypeGuard

from . import confine
from . import protocol as wire
from .child import child_main, program_mark
from .codec import within
from .protocol import Step

TIMEOUT_MESSAGE = "CPU time limit exceeded"
_CLK_TCK = os.sysconf("SC_CLK_TCK")
_CHUNK = 65536
_TICK = 0.02
_POLL = 0.002
"""Seconds between reads of the result pipe while reports come in (:func:`watch_child`)."""
_EAGER = 32768
"""Bytes of reports in one read past which the result pipe is read as they come (half a pipe's buffer)."""
_LOOK = 0.05
"""Seconds into a step before the worker looks at its limits (reading ``/proc`` costs about what a quick test
does, and a test reports on every pipe write): only where no step of the job has a shorter limit
(``Watch.look``). The first look takes the run-queue baseline, and excuses the wall time before it."""
_MARK_DIGITS = 20


class Control:
    """What the host says while a job runs (:data:`~protocol.WITHDRAW`): the programs of the job under way whose
    tests lost their grace. :func:`watch_child` reads the protocol's input between its looks at the child."""

    def __init__(self) -> None:
        self.fd: int | None = None
        """The protocol's input while a job runs (None between jobs, and once the host closed it)."""
        self.job: object = None
        self.withdrawn: set[int] = set()

    def begin(self, fd: int, job: object) -> None:
        """Job ``job`` starts; the host's frames come on ``fd``."""
        self.fd, self.job = fd, job
        self.withdrawn.clear()

    def end(self) -> None:
        self.fd = None

    def read(self) -> None:
        """Read the frame waiting on the input (small, written at once); at its end, stop reading it."""
        assert self.fd is not None
        message = read_frame(self.fd)
        if message is None:
            self.fd = None
            return
        found = message.get(wire.WITHDRAW)
        if type(found) is list and len(found) == 2 and found[0] == self.job and type(found[1]) is int:
            self.withdrawn.add(found[1])


CONTROL = Control()


def read_frame(fd: int) -> dict[str, Any] | None:
    """One frame from the host (its JSON object); None at the end of the input."""
    header = read_exact(fd, wire.HEADER.size)
    body = read_exact(fd, wire.HEADER.unpack(header)[0]) if header is not None else None
    if body is None:
        return None
    found = json.loads(body)
    assert isinstance(found, dict), "the host sends JSON objects"
    return found


def read_exact(fd: int, size: int) -> bytes | None:
    """``size`` bytes from ``fd``; None where it ends before."""
    data = bytearray()
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return bytes(data)


class Watch:
    """What the worker learns about one child while it runs."""

    def __init__(
        self,
        nonce: str,
        limits: dict[str, object],
        *,
        stdio: bool = False,
        seconds: Callable[[Step], float] | None = None,
        shortest: float = 0.0,
    ) -> None:
        self.nonce = nonce
        self.look = max(0.0, min(_LOOK, shortest))
        """Seconds into a step before its limits are looked at: :data:`_LOOK`, or less where a step's CPU
        limit (the job's ``shortest``) is; 0 when not told."""
        self.stdio = stdio
        default = float(str(limits.get(wire.CPU_SECONDS, 4.0)))
        self.seconds: Callable[[Step], float] = seconds or (lambda key: default)
        """The CPU limit of a step: a test's own limit, else the job's."""
        self.wall_factor = float(str(limits.get(wire.WALL_FACTOR, 3.0)))
        grace = limits.get(wire.TIMEOUT_GRACE)
        self.grace = float(grace) if _finite(grace) and grace > 0 else 0.0
        """How far past its CPU limit a test may run, as a fraction of it (:data:`~protocol.TIMEOUT_GRACE`), unless
        the host withdrew its program's (:meth:`grace_of`)."""
        self.sure = False
        """The test was stopped at the grace's end (a timeout the host takes without a rerun)."""
        self.late: Step | None = None
        """A step that ended within the grace (a CPU timeout): the child is stopped, and what it reported after
        that step is not taken."""
        self.stopping = False
        """The child is being stopped on a look at its CPU (:func:`_over_limit`): reports that steps had ended
        before then may still be on their way (:meth:`_stopped_after`)."""
        self._mark = program_mark(nonce, 0)[:-2]  # up to the program number
        self._carry: dict[str, bytes] = {}
        self._stream_program: dict[str, int | None] = {"out": None, "err": None}
        self._tails: dict[tuple[str, int], bytes] = {}
        self.output_cap = int(str(limits[wire.OUTPUT_BYTES]))
        self.stdout_cap = int(str(limits.get(wire.STDIO_OUTPUT_BYTES, self.output_cap))) if stdio else self.output_cap
        """A stdio program's standard output is its answer, and may be large; anything else stays small."""
        self.result_cap = int(str(limits[wire.RESULT_BYTES]))
        self.out = bytearray()
        self.err = bytearray()
        self.res = bytearray()
        self.res_received = 0
        """Bytes read from the result pipe so far (``res`` only holds the unparsed tail)."""
        self.outputs: dict[int, bytes] = {}
        self.events: dict[Step, dict[str, object]] = {}
        self.current: Step | None = None
        self.program: int | None = None
        self.started: set[int] = set()
        self.begin_wall = time.monotonic()
        self.begin_cpu = 0.0
        self.begin_waits: dict[str, int] | None = None
        """Run-queue wait (ns) of each thread when the current test's limits were first looked at."""
        self.excused = 0.0
        """Wall seconds of the current test before that first look: counted as waited (generous)."""
        self.program_cpu: dict[int, float] = {}
        """The child's CPU seconds on each program's steps, each step from its begin to the next's (the last
        to the child's end, :meth:`ended`): what each program of a batch cost, not an even share."""
        self._step: tuple[Step, float] | None = None
        """The step under way and the child's CPU seconds when it began."""
        self.killed: str | None = None

    def grace_of(self, program: int) -> float:
        """The grace of ``program``'s tests: the job's, or none once the host withdrew it."""
        return 0.0 if program in CONTROL.withdrawn else self.grace

    def take_results(self) -> None:
        """Parse complete lines from the result pipe; lines without the nonce are ignored."""
        end = self.res.rfind(b"\n")
        if end < 0:
            return
        lines = self.res[:end].split(b"\n")
        del self.res[: end + 1]  # in place: the pump holds a reference to this buffer
        for line in lines:
            self._take_line(line)

    def _take_line(self, line: bytes | bytearray) -> None:
        """One report (a line per test: this runs hundreds of thousands of times in a benchmark's check)."""
        if self.late is not None:
            return  # the child went on past a test that timed out: it is stopped there
        try:
            text = line.decode()
            message, end = _scan(text, 0)
        except (ValueError, StopIteration, RecursionError):  # not JSON, not UTF-8, or nested past the C stack's depth
            return
        if end != len(text) or type(message) is not dict or message.get(wire.NONCE) != self.nonce:
            return
        if text.count("[") + text.count("{") > _DEEPEST and not within(message, _DEEPEST):
            return  # fewer brackets than that cannot nest deeper (counted at C speed: a million numbers' line too)
        program, index = message.get(wire.PROGRAM), message.get(wire.INDEX)
        if type(program) is not int or type(index) is not int:
            return
        if wire.BEGIN in message:
            self._begin(Step(program, index), message[wire.BEGIN])
            return
        step = Step(program, index)
        if step not in self.events:
            self.events[step] = message
            self.current = None
        following = message.get(wire.NEXT)
        if type(following) is list and len(following) == 3:
            next_program, next_index, cpu = following
            if _finite(next_program) and _finite(next_index) and _finite(cpu):
                self._begin(Step(int(next_program), int(next_index)), cpu)

    def _begin(self, key: Step, cpu: object) -> None:
        began = float(cpu) if _finite(cpu) else 0.0
        self._charge(began, reported=True)
        if self.late is not None:
            return
        self.program = key.program
        self.started.add(key.program)
        self.current = key
        self.begin_wall = time.monotonic()
        self.begin_cpu = began
        self.begin_waits = None
        self._step = (key, began)

    def ended(self, cpu: float) -> None:
        """The child ended having used ``cpu`` seconds: the step it was on ends there."""
        self._charge(cpu)
        self._step = None

    def _charge(self, cpu: float, *, reported: bool = False) -> None:
        """The step under way ends at the child's ``cpu`` seconds (``reported``: the child said so; else it
        ended): its program is charged for it, and, with a grace, a step that took longer than its limit is a CPU
        timeout (:meth:`_late`)."""
        if self._step is not None:
            step, began = self._step
            spent = max(cpu - began, 0.0)
            self.program_cpu[step.program] = self.program_cpu.get(step.program, 0.0) + spent
            if self.killed is None and spent > self.seconds(step) and self.grace_of(step.program):
                self._late(step)
            elif reported and self.killed == "timeout" and self.stopping:
                self._stopped_after(step, spent)

    def _stopped_after(self, step: Step, spent: float) -> None:
        """The child was being stopped, on a look at its CPU, when its report that ``step`` had ended (after
        ``spent`` seconds) was still in the pipe: the look counted the CPU of the steps after it, which the child
        had begun, as ``step``'s. Past its limit the timeout is ``step``'s own (sure past the grace), not a later
        step's; within it, ``step``'s report stands, and the step the child is stopped in was stopped too soon to
        tell: its timeout is not sure (the host runs it again). On a loaded machine the look and the report are
        seconds apart: the next test of a looping one had been judged the timeout, and the looping one passed."""
        limit, grace = self.seconds(step), self.grace_of(step.program)
        if spent > limit:
            self.stopping = False
            self._late(step, sure=grace > 0 and spent > limit * (1.0 + grace))
        else:
            self.sure = False

    def _late(self, step: Step, *, sure: bool = False) -> None:
        """``step`` ended past its CPU limit, within the grace (however it ended: a report, an error, the child's
        exit): a CPU timeout, as if the child had been stopped at the limit (the host runs it again; not where
        it is ``sure``, past the grace), and the child is stopped now, where it went on."""
        self.late, self.killed, self._step, self.current = step, "timeout", None, None
        self.events[step] = {wire.STATUS: wire.S_TIMEOUT, wire.MESSAGE: TIMEOUT_MESSAGE, wire.LIMIT: wire.CPU_LIMIT}
        if sure:
            self.events[step][wire.SURE] = True

    def take_output(self, sink: bytearray, chunk: bytes) -> None:
        """Add printed bytes to ``sink`` (``out`` or ``err``); in a batch, split at program marks."""
        if self.stdio:
            self._append(sink, chunk)
            return
        stream = "out" if sink is self.out else "err"
        data = self._carry.pop(stream, b"") + chunk
        while (start := data.find(self._mark)) >= 0:
            digits = start + len(self._mark)
            end = data.find(b"\0", digits, digits + _MARK_DIGITS)
            if end < 0 and len(data) < digits + _MARK_DIGITS:
                break  # the rest of the mark is still in the pipe
            if end < 0 or not data[digits:end].isdigit():
                self._append(sink, data[: start + 1])  # not a mark after all
                data = data[start + 1 :]
                continue
            self._append(sink, data[:start])
            self._switch(stream, sink, int(data[digits:end]))
            data = data[end + 1 :]
        cut = _unfinished_mark(data, self._mark)
        self._carry[stream] = data[cut:]
        self._append(sink, data[:cut])

    def _append(self, sink: bytearray, data: bytes) -> None:
        room = (self.stdout_cap if sink is self.out else self.output_cap) - len(sink)
        sink += data[: max(room, 0)]
        if room < len(data) and self.killed is None:
            self.killed = "output_limit"

    def _switch(self, stream: str, sink: bytearray, program: int) -> None:
        """A program starts printing: what came before belongs to the one before it."""
        previous = self._stream_program[stream]
        if previous is not None:
            self._tails[stream, previous] = bytes(sink[-4096:])
            sink.clear()
        self._stream_program[stream] = program

    def finish(self) -> None:
        """Assign what remains printed to the program that printed it (the last one the child was on)."""
        self.take_results()
        for stream, sink in (("out", self.out), ("err", self.err)):
            sink += self._carry.pop(stream, b"")[: max(self.output_cap - len(sink), 0)]
            program = self._stream_program[stream]
            program = self.program if program is None else program
            if program is not None:
                self._tails[stream, program] = bytes(sink[-4096:])
            sink.clear()
        for program in sorted({program for _, program in self._tails}):
            self.outputs[program] = self._tails.get(("out", program), b"") + self._tails.get(("err", program), b"")


_scan: Callable[[str, int], tuple[object, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
"""``json.loads`` without its per-call work (finding the encoding of bytes, choosing a decoder, two regular
expressions for the whitespace around the value): a report is one JSON object from its first character to its
last, as the child writes it (a line that is not is not the child's; ``StopIteration`` where it is no JSON)."""


_DEEPEST = 320
"""Containers a report may nest: ``codec.encode`` stops at 100 levels of the program's value, a dict taking
three (the report itself one more), so the child's own reports nest at most about 306. A program that found
the nonce can write deeper ones, which this worker reads but the host could not: the host read such a value
past Python's recursion limit while judging it (600 levels: the whole check stopped) or its worker's reply
(990: every program of the job was judged crashed)."""


def _finite(value: object) -> TypeGuard[int | float]:
    """A number the child may report (its step, its CPU clock); the program in it could send ``NaN``, which
    ``int()`` refuses (the worker stopped, and with it every program of the job), or an integer too large for
    a float, which ``math.isfinite`` refuses."""
    if type(value) is int:
        return True
    return type(value) is float and math.isfinite(value)


def _unfinished_mark(data: bytes, mark: bytes) -> int:
    """Where a program mark that is not complete yet starts at the end of ``data`` (else its length)."""
    start = data.find(mark)
    if start >= 0:
        return start
    for size in range(min(len(mark) - 1, len(data)), 0, -1):
        if data.endswith(mark[:size]):
            return len(data) - size
    return len(data)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process, from /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def spawn(job: dict[str, object], position: Step, stdin_data: bytes | None) -> tuple[int, dict[str, int], str]:
    """Fork a child for ``job`` starting at ``position``; return its pid, our pipe ends and the nonce."""
    nonce = os.urandom(16).hex()
    child_fds: dict[str, int] = {}
    parent_fds: dict[str, int] = {}
    for name in ("out", "err", "res"):
        read_end, write_end = os.pipe()
        child_fds[name], parent_fds[name] = write_end, read_end
    child_fds["input"] = _stdin_fd(stdin_data)
    pid = os.fork()
    if pid == 0:
        child_main(job, position, child_fds, nonce)
    for fd in child_fds.values():
        os.close(fd)
    for fd in parent_fds.values():
        os.set_blocking(fd, False)
    return pid, parent_fds, nonce


def _stdin_fd(data: bytes | None) -> int:
    """A real file descriptor for standard input: /dev/null, or a memfd holding the test's input."""
    if data is None:
        return os.open(os.devnull, os.O_RDONLY)
    fd = os.memfd_create("stdin", 0)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def watch_child(pid: int, fds: dict[str, int], watch: Watch) -> tuple[int, float]:
    """Follow the child until it exits or is killed; return its wait status and CPU seconds.

    The result pipe is read every :data:`_POLL` seconds while reports come in (every ``_TICK`` once none
    has for a while), not woken for: a child reports each test, and a worker woken by every report spent
    about as much CPU per quick test as the child. While reports fill the pipe (a large value) it is read
    as they come. The end of the child, and anything printed, still wake the worker at once, and so does a frame
    from the host (:data:`CONTROL`).
    """
    pidfd = os.pidfd_open(pid)
    results = fds["res"]
    sinks = {fds["out"]: watch.out, fds["err"]: watch.err, results: watch.res}
    open_fds = set(sinks)
    killed = False
    eager, wait = False, _POLL
    try:
        while True:
            waited = [fd for fd in open_fds if eager or fd != results]
            control = [] if CONTROL.fd is None else [CONTROL.fd]
            ready, _, _ = select.select([*waited, pidfd, *control], [], [], _TICK if eager else wait)
            received = watch.res_received
            _read_ready([fd for fd in ready if fd != pidfd], sinks, open_fds, watch)
            if results in open_fds and results not in ready and not _pump(results, watch.res, watch):
                open_fds.discard(results)
            read = watch.res_received - received
            eager, wait = read >= _EAGER, _POLL if read else min(2 * wait, _TICK)
            watch.take_results()
            if pidfd in ready:
                break
            if watch.killed is None:
                watch.killed = _over_limit(pid, watch)
            if watch.killed is not None and not killed:
                kill_child(pid)
                killed = True
        for fd in open_fds:
            _pump(fd, sinks[fd], watch)
        _, status, usage = os.wait4(pid, 0)
        return status, usage.ru_utime + usage.ru_stime
    finally:
        os.close(pidfd)
        for fd in fds.values():
            os.close(fd)


def _read_ready(ready: list[int], sinks: dict[int, bytearray], open_fds: set[int], watch: Watch) -> None:
    """Read the child's pipes that are ready (one that ended leaves ``open_fds``), and the host's frame."""
    for fd in ready:
        if fd == CONTROL.fd:
            CONTROL.read()
        elif not _pump(fd, sinks[fd], watch):
            open_fds.discard(fd)


def _pump(fd: int, sink: bytearray, watch: Watch) -> bool:
    """Read what is available into sink; False at end of file. Enforces the output caps.

    Past an output cap nothing more is read from stdout or stderr: a child flooding them then blocks on its
    next write and is killed before it can report the test it was on (draining them instead lets it finish
    and report a pass on a loaded machine). The result pipe is still read, for the tests reported before.
    """
    while sink is watch.res or watch.killed != "output_limit":
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        if sink is watch.res:
            _take_result_bytes(chunk, watch)
            continue
        watch.take_output(sink, chunk)
    return True


def _take_result_bytes(chunk: bytes, watch: Watch) -> None:
    """Keep result bytes up to the cap, counted over everything the child sent.

    Counting what was received, not what is still buffered, matters: once parsed lines leave the
    buffer, bytes past the cap appended to a cut line could splice together a well-formed report of
    a value the program never returned. Past the cap nothing more is kept; the cut line has no end
    and is never parsed.
    """
    room = watch.result_cap - watch.res_received
    watch.res_received += len(chunk)
    watch.res += chunk[: max(room, 0)]
    if room < len(chunk) and watch.killed is None:
        watch.killed = "output_limit"


def run_queue_waits(pid: int) -> dict[str, int]:
    """Nanoseconds each thread of a process has spent runnable but waiting for a CPU, by thread id."""
    waits: dict[str, int] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return waits
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as handle:
                waits[tid] = int(handle.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return waits


def _waited(pid: int, watch: Watch, elapsed: float) -> float:
    """Seconds the current test has waited for a CPU: the longest wait of any one of its threads since the
    first look, plus the wall time before it (``Watch.excused``)."""
    now = run_queue_waits(pid)
    if watch.begin_waits is None:
        watch.begin_waits, watch.excused = now, elapsed
        return elapsed
    begin = watch.begin_waits
    return watch.excused + max((wait - begin.get(tid, 0) for tid, wait in now.items()), default=0) / 1e9


def _over_limit(pid: int, watch: Watch) -> str | None:
    """Judge the running test on CPU time (its own limit); wall time is only a backstop (fair under load)."""
    if watch.current is None:
        return None
    elapsed = time.monotonic() - watch.begin_wall
    if elapsed < watch.look:
        return None
    cpu_limit = watch.seconds(watch.current)
    wall_limit = cpu_limit * watch.wall_factor + 1.0
    waited = _waited(pid, watch, elapsed)
    if elapsed - waited > wall_limit or elapsed > wall_limit * wire.WALL_CEILING:
        return "wall_timeout"
    if elapsed > cpu_limit:
        used = cpu_seconds(pid)
        grace = watch.grace_of(watch.current.program)
        if used - min(watch.begin_cpu, used) > cpu_limit * (1.0 + grace):
            watch.sure, watch.stopping = grace > 0, True
            return "timeout"
    return None


def kill_child(pid: int) -> None:
    """SIGKILL the child's process group and the child."""
    for target, kill in ((pid, os.killpg), (pid, os.kill)):
        try:
            kill(target, signal.SIGKILL)
        except ProcessLookupError:
            pass


def sweep(child_pid: int) -> None:
    """End every process the job started.

    Inside the sandbox the worker is PID 1 of its own namespace, so every other process in it belongs
    to the job and all are killed. Confined by Landlock (no namespace), the worker is the subreaper of
    every process the job started, and kills its own descendants. Anywhere else (the unsandboxed
    fallback) only the job's process group is killed: a namespace-wide sweep there would hit unrelated
    processes.
    """
    if os.getpid() == 1:
        _sweep_namespace()
    elif confine.ACTIVE is not None:
        confine.sweep_descendants()
    else:
        _kill_quietly(-child_pid)


def _sweep_namespace() -> None:
    """Kill every other process in this PID namespace, pass after pass, until none is left: a process
    forked after a pass listed ``/proc`` (a daemon's double fork, a chain of forks) is found by the next,
    instead of being left for a reap that would wait on it for as long as it lives."""
    while others := [int(name) for name in os.listdir("/proc") if name.isdigit() and name != "1"]:
        for pid in others:
            _kill_quietly(pid)
        try:
            os.waitpid(-1, 0)  # one of them, killed, is ours to reap (orphans come to PID 1)
        except ChildProcessError:
            return


def _kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
