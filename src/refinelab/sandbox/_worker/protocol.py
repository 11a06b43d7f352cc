"""The host/worker wire format: framing, the keys of jobs, replies and reports, and the statuses.

Both sides import this module: the host as ``refinelab.sandbox._worker.protocol``, the worker (which
sees only the ``_worker`` package) as ``_worker.protocol``. It imports nothing but the standard library.

Framing: a 4-byte big-endian length, then a JSON object, in both directions; in a reply, the JSON may be
followed by a newline (JSON as ``json.dumps`` writes it holds none) and the texts of its values rows
(:data:`VALUES_TEXT`). The worker writes :data:`READY` once, before its first reply, when it is ready for jobs.
While a job runs the host may send :data:`WITHDRAW` frames, and nothing else.

A job (host to worker) holds :data:`JOB_ID`, :data:`MODE`, :data:`PROGRAMS`, :data:`SUITES`,
:data:`SUITE_OF` (the suite each program runs against), :data:`ISOLATE` and :data:`LIMITS` (the
limit keys); a suite holds :data:`ENTRY_POINT`, :data:`SETUP`, :data:`PRELUDE`, :data:`TESTS` and, where
values must come back whole, :data:`WHOLE_VALUES`. The host writes a suite's tests in columns (:data:`INPUTS`),
which the worker makes into a list of tests when it reads the job; a test holds :data:`TEST_KIND`, its input
(:data:`EXPR` or :data:`ARGS`, :data:`CODE` or :data:`STDIN`) and, when it has a CPU limit of its own,
:data:`TEST_LIMIT`; never the expected value. A reply (worker to host) holds
:data:`RESULTS` (one row of reports per program, or, where every test of a program returned a value,
``{VALUES_TEXT: [start, end]}``; fewer rows than programs where a job that spent its :data:`DEFER_AFTER` handed
the rest back unrun), :data:`OUTPUTS` (what each program printed) and :data:`STATS`.

A report (one per test) holds :data:`STATUS` and, depending on it, :data:`VALUE`, :data:`MESSAGE`,
:data:`ERROR_TYPE`, :data:`TRACEBACK`, :data:`STDOUT`, :data:`STDERR`, :data:`CPU` and, for a timeout,
:data:`LIMIT` (which limit it hit: :data:`CPU_LIMIT` or :data:`WALL_LIMIT`) and perhaps :data:`SURE`. The child's
event lines (on its result pipe) add :data:`NONCE`, :data:`PROGRAM`, :data:`INDEX`, :data:`BEGIN`,
:data:`NEXT` and :data:`TAINT`; the worker strips those before replying (:data:`EVENT_KEYS`).
"""

from __future__ import annotations

import struct
from typing import NamedTuple

HEADER = struct.Struct(">I")
"""The frame header: the length of the JSON body that follows."""
READY = b"R"
"""Written once by the worker when it is ready for jobs."""
WITHDRAW = "withdraw"
"""The one frame the host sends while a job runs, ``{WITHDRAW: [job id, program]}``: that program's tests get no
grace from now on (the host has started its confirming rerun beside it). The worker reads it between its looks
at the child; one that comes after its job ended is read before the next job and dropped."""

# Job keys
JOB_ID = "id"
MODE = "mode"
PROGRAMS = "programs"
SUITES = "suites"
SUITE_OF = "suite_of"
ISOLATE = "isolate"
LIMITS = "limits"
CWD = "cwd"
"""Added by the worker: the job's own scratch directory."""

# Limit keys (under LIMITS)
CPU_SECONDS = "cpu_seconds"
"""CPU seconds per test, for a test without a :data:`TEST_LIMIT` of its own (and a program's load)."""
WALL_FACTOR = "wall_factor"
"""The wall-clock backstop of a test, as a multiple of its CPU limit (plus one second)."""
WALL_CEILING = 10.0
"""How many times its wall-clock backstop a test may last in plain wall time on a loaded machine (the time it
waited for a CPU is excused up to there): the worker's rule for each test, and the most the host stretches its
wait for a job's reply by the machine's load."""
CPU_TOTAL = "cpu_total"
"""The hard RLIMIT_CPU of a child: every CPU limit it may spend, summed (a backstop for the backstop)."""
STOP_AT_FAILURE = "stop_at_failure"
"""True: a program's remaining tests are not run once one of them ended in a failure status (its
verdict is already known); they are reported :data:`S_SKIPPED`."""
AFTER_TIMEOUT = "after_timeout"
"""What follows a test that timed out: :data:`SKIP_REST` (the program's remaining tests are skipped) or
:data:`CONTINUE` (a fresh child runs the next test; every test gets its own verdict)."""
SKIP_REST = "skip"
CONTINUE = "continue"
TIMEOUT_GRACE = "grace"
"""How far past its CPU limit a test may run before it is stopped, as a fraction of that limit (absent or 0: not
at all). A test that ends within the grace is reported a CPU timeout (the host runs it again); one stopped at
the grace's end is reported a timeout with :data:`SURE`."""
DEFER_AFTER = "defer_after"
"""CPU seconds a program may spend in one child, from its load, before its later tests are reported
:data:`S_DEFERRED` (not run: the host runs them in other jobs), and a job's children together before it hands
back the programs none of them has started; absent or ``None``: never."""
MEMORY_BYTES = "memory_bytes"
FILE_BYTES = "file_bytes"
OPEN_FILES = "open_files"
PROCESSES = "processes"
"""A child's RLIMIT_NPROC: the processes and threads it may have."""
PROCESSES_SHARED = "processes_shared"
"""True where the jobs run under a uid that processes outside them share (the ``landlock`` and ``none``
isolations: no private uid, no user namespace). The kernel counts every task of a uid against RLIMIT_NPROC, so
there the worker sets :data:`PROCESSES` on top of the tasks the uid has (counted at most once a second): a
program's first thread had failed once the user ran 64 tasks elsewhere (the host's workers among them)."""
OUTPUT_BYTES = "output_bytes"
STDIO_OUTPUT_BYTES = "stdio_output_bytes"
RESULT_BYTES = "result_bytes"

# Suite keys
ENTRY_POINT = "entry_point"
SETUP = "setup"
PRELUDE = "prelude"
TESTS = "tests"
WHOLE_VALUES = "whole_values"
"""True: every value a test returns comes back whole (a trusted program's, computing expected values); else a
long string comes back as its digest (``codec.digested``)."""

# A suite's tests in columns (``tests_listed`` makes them a list of tests)
INPUT_KEYS = "keys"
"""What each test's input is (:data:`EXPR`, :data:`ARGS`, :data:`CODE` or :data:`STDIN`): one for every test, or a
list of one per test."""
INPUTS = "inputs"
"""Each test's input, a string."""
TEST_LIMITS = "test_limits"
"""Each test's own CPU limit (:data:`TEST_LIMIT`), or null where it has none."""

# Test keys and kinds
TEST_KIND = "k"
TEST_LIMIT = "l"
"""CPU seconds this test may take (instead of the job's :data:`CPU_SECONDS`)."""
EXPR = "expr"
ARGS = "args"
"""A call test's arguments, a JSON array in a string, instead of :data:`EXPR`: the child calls ``candidate``
on them without compiling anything (read once per child, a fresh copy for each program)."""
CODE = "code"
STDIN = "stdin"
CALL = "call"
ASSERT = "assert"
STDIO = "stdio"
"""Also the job mode of whole stdin/stdout programs (the other mode is ``function``)."""
FUNCTION = "function"

# Reply keys
RESULTS = "results"
VALUES = "values"
"""A row of :data:`RESULTS` in which every test returned a value: ``{VALUES: [value, ...]}``, the values in test
order, instead of a report per test (the host compares them with the expected values in one step)."""
VALUES_TEXT = "vt"
"""A row of :data:`RESULTS` as it crosses to the host: ``{VALUES_TEXT: [start, end]}``, where bytes ``start`` to
``end`` of the texts after the reply's JSON are the :data:`VALUES` row's list as JSON. The host reads the text
only when it is not one it already judged right on the same tests (``_judge.judged``): a benchmark's right
programs return the same values, and their rows are most of what a check's replies hold."""
OUTPUTS = "outputs"
STATS = "stats"

# Report keys
STATUS = "s"
VALUE = "v"
MESSAGE = "m"
ERROR_TYPE = "t"
TRACEBACK = "tb"
STDOUT = "stdout"
STDERR = "stderr"
CPU = "cpu"
LIMIT = "limit"
CPU_LIMIT = "cpu"
"""A :data:`LIMIT`: the test used more CPU time than allowed (the host runs it again to confirm)."""
WALL_LIMIT = "wall"
"""A :data:`LIMIT`: the test outlasted the wall-clock backstop (it slept or blocked)."""
SURE = "sure"
"""True in a CPU timeout's report where the test ran past its limit and the job's :data:`TIMEOUT_GRACE` too:
the host takes it without running it again."""

# Event keys (child to worker only)
NONCE = "n"
PROGRAM = "p"
INDEX = "i"
BEGIN = "b"
NEXT = "next"
TAINT = "taint"
LOAD_INDEX = -1
"""The :data:`INDEX` of a program's load (running its source and the suite's setup)."""
END_INDEX = -2
"""The :data:`INDEX` of the event saying the child ends after this program (with :data:`TAINT`)."""
EVENT_KEYS = (NONCE, PROGRAM, INDEX, NEXT)
"""Keys of an event that are not part of the test's report."""


class Step(NamedTuple):
    """Where a child is in a job: a program and one of its tests (:data:`LOAD_INDEX` for loading it,
    :data:`END_INDEX` for the child's last word on it). A tuple, so events are keyed by it cheaply."""

    program: int
    """The program's index in the job."""
    test: int
    """The test's index in the program's suite."""


# Statuses
S_VALUE = "value"
"""A call test's value (under :data:`VALUE`)."""
S_OK = "ok"
"""An assert test (or a program's load) ran without raising."""
S_DONE = "done"
"""A stdin/stdout program ended normally (its output under :data:`STDOUT`)."""
S_ERROR = "error"
S_MEMORY = "memory"
S_TIMEOUT = "timeout"
S_OUTPUT_LIMIT = "output_limit"
S_CRASHED = "crashed"
S_SKIPPED = "skipped"
S_DEFERRED = "deferred"
"""Not run in this job: the program had spent its :data:`DEFER_AFTER` (not a failure)."""
FAILURE_STATUSES = (S_ERROR, S_MEMORY, S_TIMEOUT, S_OUTPUT_LIMIT, S_CRASHED, S_SKIPPED)
"""Statuses that end a test without a result; each is also the verdict's name on the host."""


KIND_OF_INPUT = {EXPR: CALL, ARGS: CALL, CODE: ASSERT, STDIN: STDIO}
"""The kind of test each input key makes."""


def tests_listed(tests: object) -> object:
    """A suite's tests as a list of tests, where they came in columns (:data:`INPUTS`); a ``ValueError`` where the
    columns do not make one."""
    if not isinstance(tests, dict):
        return tests
    keys, inputs, limits = tests.get(INPUT_KEYS), tests.get(INPUTS), tests.get(TEST_LIMITS)
    if not isinstance(inputs, list) or not isinstance(limits, list):
        raise ValueError("a suite's columns are not lists")
    listed = [keys] * len(inputs) if isinstance(keys, str) else keys
    if not isinstance(listed, list) or not len(listed) == len(inputs) == len(limits):
        raise ValueError("a suite's columns differ in length")
    if not _known(listed):
        raise ValueError(f"a suite's input keys are not all of {sorted(KIND_OF_INPUT)}")
    return [_test(key, text, limit) for key, text, limit in zip(listed, inputs, limits)]


def _known(keys: list[object]) -> bool:
    try:
        return set(keys) <= KIND_OF_INPUT.keys()
    except TypeError:  # a key that is no string (a list, a dict)
        return False


def _test(key: str, text: object, limit: object) -> dict[str, object]:
    test = {TEST_KIND: KIND_OF_INPUT[key], key: text}
    if limit is not None:
        test[TEST_LIMIT] = limit
    return test
