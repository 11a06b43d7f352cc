"""Jobs: what the worker does with one request.

A function job runs one or more programs against the same tests, in as few children as possible: a
child goes on to the next program unless the job asks for isolation or the previous program tainted
it. When a child dies on a test, the worker records why and starts a new child at the next test (or,
after a timeout, skips the program's remaining tests unless the job asks for every test's verdict,
:data:`~protocol.AFTER_TIMEOUT`). When the job only needs verdicts (:data:`~protocol.STOP_AT_FAILURE`), a
program's tests after one that ended in a failure status are skipped. A stdio job forks one child per
(program, test). Each test is judged on its own CPU limit (:data:`~protocol.TEST_LIMIT`) when it has one.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

from . import confine
from . import protocol as wire
from .child import suite_of
from .protocol import Step
from .supervise import TIMEOUT_MESSAGE, Watch, spawn, sweep, watch_child

Result = dict[str, object]
SKIPPED_AFTER_TIMEOUT: Result = {wire.STATUS: wire.S_SKIPPED, wire.MESSAGE: "not run: an earlier test timed out"}
SKIPPED_AFTER_FAILURE: Result = {wire.STATUS: wire.S_SKIPPED, wire.MESSAGE: "not run: an earlier test failed"}


@dataclass(frozen=True)
class Ended:
    """How a child ended."""

    status: int
    """Its wait status."""
    cpu: float
    """CPU seconds it used."""
    cpu_total: float
    """Its CPU budget (the hard RLIMIT_CPU)."""
    stop_at_failure: bool = False
    """The job only needs verdicts (:data:`~protocol.STOP_AT_FAILURE`)."""
    continue_after_timeout: bool = False
    """The job wants every test's verdict after a timeout (:data:`~protocol.AFTER_TIMEOUT`)."""


def _limits(job: dict[str, object]) -> dict[str, object]:
    limits = job[wire.LIMITS]
    assert isinstance(limits, dict)
    return limits


def test_seconds(job: dict[str, object], key: Step) -> float:
    """The CPU limit of step ``key``: the test's own, else the job's (a load uses the job's, and so does a step
    of no program of the job: a program that found the child's nonce can announce any step, and a step it made
    up must not stop the worker, and with it every program of the job)."""
    default = float(str(_limits(job)[wire.CPU_SECONDS]))
    programs = job[wire.PROGRAMS]
    if key.test < 0 or not isinstance(programs, list) or not 0 <= key.program < len(programs):
        return default
    tests = suite_of(job, key.program)[wire.TESTS]
    assert isinstance(tests, list)
    if key.test >= len(tests) or not isinstance(tests[key.test], dict):
        return default
    own = tests[key.test].get(wire.TEST_LIMIT)
    return float(own) if isinstance(own, (int, float)) else default


def shortest_seconds(job: dict[str, object]) -> float:
    """The shortest CPU limit any step of ``job`` has: the job's, or a test's own."""
    shortest = float(str(_limits(job)[wire.CPU_SECONDS]))
    programs = job[wire.PROGRAMS]
    assert isinstance(programs, list)
    seen: set[int] = set()
    for program in range(len(programs)):
        tests = suite_of(job, program)[wire.TESTS]
        if id(tests) in seen or not isinstance(tests, list):
            continue
        seen.add(id(tests))
        for test in tests:
            own = test.get(wire.TEST_LIMIT) if isinstance(test, dict) else None
            if isinstance(own, (int, float)) and own < shortest:
                shortest = float(own)
    return shortest


def _run_child(
    job: dict[str, object], position: Step, stdin: bytes | None, test: int | None = None, *, shortest: float = 0.0
) -> tuple[Watch, Ended]:
    """Fork a child at ``position`` and follow it; ``test``: a stdio child's test (its limit applies);
    ``shortest``: the job's :func:`shortest_seconds` (no step's limit is looked at sooner)."""
    limits = _limits(job)
    pid, fds, nonce = spawn(job, position, stdin)

    def seconds(key: Step) -> float:
        return test_seconds(job, Step(key.program, test if test is not None else key.test))

    watch = Watch(nonce, limits, stdio=job[wire.MODE] == wire.STDIO, seconds=seconds, shortest=shortest)
    status, cpu = watch_child(pid, fds, watch)
    sweep(pid)
    if _confinement_failed(watch, int(status)):
        # never a verdict: the worker stops, and the host replaces it and reports the job crashed
        raise RuntimeError(watch.err.decode(errors="replace").strip())
    return watch, Ended(
        int(status),
        float(cpu),
        float(str(limits[wire.CPU_TOTAL])),
        stop_at_failure=limits.get(wire.STOP_AT_FAILURE) is True,
        continue_after_timeout=limits.get(wire.AFTER_TIMEOUT) == wire.CONTINUE,
    )


def _confinement_failed(watch: Watch, status: int) -> bool:
    """Whether the child could not confine itself (``confine.failed``). Only before it reported anything:
    it announces each program before running it, so a program that exits the same way is its own end."""
    exited = os.WIFEXITED(status) and os.WEXITSTATUS(status) == confine.FAILED
    return exited and watch.res_received == 0 and watch.err.startswith(confine.FAILED_MARK)


def death(watch: Watch, info: Ended) -> Result:
    """Describe why a child stopped without reporting the step it was on.

    A SIGKILL the worker did not send comes from the hard RLIMIT_CPU when the child used up its CPU
    budget; otherwise the child killed itself, which is a crash.
    """
    if watch.killed == "timeout":
        found: Result = {wire.STATUS: wire.S_TIMEOUT, wire.MESSAGE: TIMEOUT_MESSAGE, wire.LIMIT: wire.CPU_LIMIT}
        return {**found, wire.SURE: True} if watch.sure else found
    if watch.killed == "wall_timeout":
        message = "wall-clock limit exceeded (the program slept or waited)"
        return {wire.STATUS: wire.S_TIMEOUT, wire.MESSAGE: message, wire.LIMIT: wire.WALL_LIMIT}
    if watch.killed == "output_limit":
        return {wire.STATUS: wire.S_OUTPUT_LIMIT, wire.MESSAGE: "output limit exceeded"}
    status = info.status
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        exhausted = info.cpu >= info.cpu_total - 0.5
        if number == signal.SIGXCPU or (number == signal.SIGKILL and exhausted):
            message = f"killed by {signal.Signals(number).name} (CPU limit)"
            return {wire.STATUS: wire.S_TIMEOUT, wire.MESSAGE: message, wire.LIMIT: wire.CPU_LIMIT}
        return {wire.STATUS: wire.S_CRASHED, wire.MESSAGE: f"killed by signal {signal.Signals(number).name}"}
    return {
        wire.STATUS: wire.S_CRASHED,
        wire.MESSAGE: f"exited with status {os.WEXITSTATUS(status)} before reporting a result",
    }


def _clean(message: dict[str, object]) -> Result:
    """The test's report: the event without its :data:`~protocol.EVENT_KEYS` (a copy, then a few deletions:
    twice as quick as filtering every key, and this runs once per test)."""
    found = dict(message)
    for key in wire.EVENT_KEYS:
        found.pop(key, None)
    return found


def run_function_job(job: dict[str, object]) -> dict[str, object]:
    """Run every (program, test) of a function job, restarting children as needed; a job that has spent its
    programs' :data:`~protocol.DEFER_AFTER` hands back, unrun, the programs no child has started yet (their
    rows are left out of the reply: the host queues them again), so programs batched behind one that loops
    do not wait for it."""
    programs = job[wire.PROGRAMS]
    assert isinstance(programs, list)
    results: list[list[Result | None]] = [[None] * _test_count(job, p) for p in range(len(programs))]
    outputs: list[str] = [""] * len(programs)
    position = Step(0, 0)
    children, cpu = 0, 0.0
    program_cpu = [0.0] * len(programs)
    shortest = shortest_seconds(job)
    budget = _limits(job).get(wire.DEFER_AFTER)
    while position.program < len(programs):
        if position.program > 0 and _handed_back(position, results, cpu, budget):
            del results[position.program :], outputs[position.program :], program_cpu[position.program :]
            break
        watch, info = _run_child(job, position, None, shortest=shortest)
        children, cpu = children + 1, cpu + info.cpu
        watch.finish()
        watch.ended(info.cpu)
        for program, spent in watch.program_cpu.items():
            if 0 <= program < len(programs):
                program_cpu[program] += spent
        for program, text in watch.outputs.items():
            if 0 <= program < len(outputs):
                outputs[program] += text.decode("utf-8", "replace")
        position = _collect(watch, info, results, position)
    stats = {"children": children, "child_cpu": cpu, "program_cpu": program_cpu}
    return {wire.RESULTS: [_compact(row) for row in results], wire.OUTPUTS: outputs, wire.STATS: stats}


def _handed_back(position: Step, results: list[list[Result | None]], cpu: float, budget: object) -> bool:
    """Whether the job hands back the programs from ``position`` on: its children have spent ``budget`` CPU
    seconds, and no child has started that program (a program is never cut in two here)."""
    if not isinstance(budget, (int, float)) or cpu <= budget or position.test != 0:
        return False
    return all(report is None for report in results[position.program])


def _compact(row: list[Result | None]) -> list[Result | None] | Result:
    """A program's row as just its values where every test returned one (:data:`~protocol.VALUES`): most rows
    of a benchmark's check, which the host then judges in one comparison instead of one per test."""
    values = [r.get(wire.VALUE) for r in row if r is not None and r.get(wire.STATUS) == wire.S_VALUE]
    return {wire.VALUES: values} if row and len(values) == len(row) else row


def _collect(watch: Watch, info: Ended, results: list[list[Result | None]], position: Step) -> Step:
    """Store what one child reported, from ``position`` on; return where the next child starts."""
    program, start = position.program, position.test
    while program < len(results):
        stopped_at = _collect_program(watch, info, results[program], program, start)
        if stopped_at is not None:
            return stopped_at
        if Step(program, wire.END_INDEX) in watch.events:
            return Step(program + 1, 0)
        program, start = program + 1, 0
    return Step(program, 0)


def _collect_program(watch: Watch, info: Ended, row: list[Result | None], program: int, start: int) -> Step | None:
    """Fill one program's row; return None if the child finished it and may have gone on."""
    load = watch.events.get(Step(program, wire.LOAD_INDEX))
    if load is None and program not in watch.started and watch.started:
        return Step(program, start)  # the child ended between programs: start this one afresh
    if load is None or load.get(wire.STATUS) != wire.S_OK:
        failure = _clean(load) if load is not None else death(watch, info)
        for index in range(start, len(row)):
            row[index] = dict(failure)
        return None if load is not None else Step(program + 1, 0)
    index = start
    deferred: Result | None = None
    events = watch.events
    while index < len(row) and deferred is None and (event := events.get(Step(program, index))) is not None:
        found = row[index] = _clean(event)
        if watch.late == Step(program, index):  # it ran past its limit, within the grace: the child was stopped
            return _after_timeout(row, index, info, program)
        deferred = found if found.get(wire.STATUS) == wire.S_DEFERRED else None
        index += 1
    if deferred is not None:  # it spent its budget: the rest are deferred too (whatever came after), and it went on
        return _skip_rest(row, index, deferred, None)
    if index == len(row):
        return None
    if info.stop_at_failure and index > start and _failed(row[index - 1]):
        return _skip_rest(row, index, SKIPPED_AFTER_FAILURE, None)  # the child stopped here on purpose
    return _died(row, index, death(watch, info), info, program)


def _died(row: list[Result | None], index: int, report: Result, info: Ended, program: int) -> Step:
    """The child died on test ``index`` (``report`` says how): where the next child starts."""
    row[index] = report
    if report[wire.STATUS] == wire.S_TIMEOUT:
        return _after_timeout(row, index, info, program)
    if info.stop_at_failure:
        _skip_rest(row, index + 1, SKIPPED_AFTER_FAILURE, None)
        return Step(program + 1, 0)
    return Step(program, index + 1) if index + 1 < len(row) else Step(program + 1, 0)


def _after_timeout(row: list[Result | None], index: int, info: Ended, program: int) -> Step:
    """Where the next child starts after test ``index`` of ``program`` timed out: its next test where every test
    gets a verdict, else the next program (this one's later tests skipped)."""
    if info.continue_after_timeout:
        return Step(program, index + 1) if index + 1 < len(row) else Step(program + 1, 0)
    _skip_rest(row, index + 1, SKIPPED_AFTER_TIMEOUT, None)
    return Step(program + 1, 0)


def _failed(report: Result | None) -> bool:
    return report is not None and report.get(wire.STATUS) in wire.FAILURE_STATUSES


def _skip_rest(row: list[Result | None], start: int, skipped: Result, then: Step | None) -> Step | None:
    for later in range(start, len(row)):
        row[later] = dict(skipped)
    return then


def _test_count(job: dict[str, object], program: int) -> int:
    tests = suite_of(job, program)[wire.TESTS]
    assert isinstance(tests, list)
    return len(tests)


def _stdio_result(watch: Watch, info: Ended) -> Result:
    """How a whole program ended: its report, or, without one, what its exit says.

    A program that ends itself with ``os._exit(0)`` (fast-output templates do) has ended normally,
    as a judge running it would see; its output is judged like any other. Any other unreported end
    is a death.
    """
    event = watch.events.get(Step(0, 0))
    if watch.killed is not None:
        return death(watch, info)
    if event is not None:
        return _clean(event)
    status = info.status
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and 0 in watch.started:
        return {wire.STATUS: wire.S_DONE}
    return death(watch, info)


def run_stdio_job(job: dict[str, object]) -> dict[str, object]:
    """Run a stdin/stdout program once per test, each in a fresh child (each on its own CPU limit).

    When the job only needs verdicts, the tests after one that ended in a failure status are skipped
    (a wrong output is judged on the host, so only statuses stop the program here).
    """
    tests = suite_of(job, 0)[wire.TESTS]
    assert isinstance(tests, list)
    stop = _limits(job).get(wire.STOP_AT_FAILURE) is True
    row: list[Result] = []
    cpu = 0.0
    shortest = shortest_seconds(job)
    for index, test in enumerate(tests):
        if stop and row and row[-1].get(wire.STATUS) in wire.FAILURE_STATUSES:
            skipped = SKIPPED_AFTER_TIMEOUT if row[-1].get(wire.STATUS) == wire.S_TIMEOUT else SKIPPED_AFTER_FAILURE
            row += [dict(skipped) for _ in range(index, len(tests))]
            break
        watch, info = _run_child(job, Step(0, 0), str(test[wire.STDIN]).encode(), test=index, shortest=shortest)
        watch.ended(info.cpu)
        result = _stdio_result(watch, info)
        result[wire.STDOUT] = watch.out.decode("utf-8", "replace")
        result[wire.STDERR] = watch.err[-4096:].decode("utf-8", "replace")
        result[wire.CPU] = info.cpu
        cpu += info.cpu
        row.append(result)
    children = sum(wire.CPU in result for result in row)
    return {wire.RESULTS: [row], wire.OUTPUTS: [""], wire.STATS: {"children": children, "child_cpu": cpu}}
