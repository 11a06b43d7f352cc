"""Judging on the host: a worker's report for one test becomes a :class:`TestOutcome`.

A pass needs the status that only the harness path produces for that kind of test *and*, for call and
stdio tests, a match judged here, on values the worker encoded and this side decoded from builtins.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from hashlib import sha256
from itertools import compress
from operator import ne
from typing import cast

from refinelab.problems import AssertTest, CallTest, StdioTest, Test
from refinelab.sandbox._compare import outputs_match, values_match
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._outcome import PASSED, IsolationLevel, RunResult, TestOutcome, Verdict
from refinelab.sandbox._packed import Packed
from refinelab.sandbox._suite import Suite
from refinelab.sandbox._worker import protocol as wire
from refinelab.sandbox._worker.codec import decode_sent, text_of

_STATUS_VERDICTS: dict[str, Verdict] = {
    wire.S_ERROR: "error",
    wire.S_MEMORY: "memory",
    wire.S_TIMEOUT: "timeout",
    wire.S_OUTPUT_LIMIT: "output_limit",
    wire.S_CRASHED: "crashed",
    wire.S_SKIPPED: "skipped",
}
DEFERRED = TestOutcome("skipped", "not run in this job: deferred to another (the program had spent its budget)")
"""A test a job did not run because its program had spent ``Limits.defer_after`` (the caller runs it)."""


TEXT_KEPT = 1 << 20
"""Bytes of a values row's text kept unread at most (:attr:`ProgramReports.text`); a longer one is read at once,
from the reply's bytes as they came. Such a row is a few long lists (HumanEval/130's right rows are 20 MB: lists
of a million numbers, as text with their digests, which the judge compares anyway); read later, from a copy of
its own, such rows had put 14 MB on the driver's peak memory."""


@dataclass(frozen=True)
class ProgramReports:
    """What one program did on each test of its suite, as the worker reported it (not yet judged)."""

    listed: tuple[object, ...]
    """One report per test, in test order; empty where :attr:`values` holds them (see :attr:`row`)."""
    output: str
    """Tail of what the program printed (function mode)."""
    sent: tuple[object, ...] | bytes | None = None
    """Where every test returned a value (the worker's :data:`~refinelab.sandbox._worker.protocol.VALUES`
    row): the values, encoded, in test order, or their list's JSON as the worker wrote it (:attr:`text`),
    read when :attr:`values` is first asked for."""

    @property
    def text(self) -> bytes | None:
        """The values row's JSON as the worker wrote it, unread (``protocol.VALUES_TEXT``); None otherwise."""
        return self.sent if type(self.sent) is bytes else None

    @cached_property
    def values(self) -> tuple[object, ...] | None:
        """Where every test returned a value: the values, encoded, in test order (read from :attr:`text` once)."""
        sent = self.sent
        return _values_in(sent) if type(sent) is bytes else cast("tuple[object, ...] | None", sent)

    @property
    def row(self) -> tuple[object, ...]:
        """One report per test, in test order."""
        if self.values is None:
            return self.listed
        return tuple({wire.STATUS: wire.S_VALUE, wire.VALUE: value} for value in self.values)

    @property
    def cpu_timeouts(self) -> list[int]:
        """Indices of the tests that exceeded the CPU limit and may pass when run again: not those that ran past
        their grace too (:data:`~refinelab.sandbox._worker.protocol.SURE`); none where every test returned a
        value."""
        if self.sent is not None:  # not read for this: a values row has no timeout
            return []
        return [i for i, report in enumerate(self.listed) if is_cpu_timeout(report) and not _sure(report)]


@dataclass(frozen=True)
class Ran:
    """What one program did, and where (not yet judged)."""

    reports: ProgramReports
    """The worker's reports, one per test."""
    node: str | None
    """The cluster node it ran on (:attr:`NodeInfo.name`); ``None``: this machine."""
    isolation: IsolationLevel
    """The isolation it ran with."""


def judged(
    suite: Suite,
    reports: ProgramReports,
    isolation: IsolationLevel,
    node: str | None = None,
    *,
    limits: Limits | None = None,
) -> RunResult:
    """A program's result: each report judged against its test of ``suite`` (where the expected values are);
    with ``limits``, a timeout records the CPU limit its test had (limits may differ from test to test).

    A values row whose text is one this suite already judged right passes without being read: the same text
    is the same values, and judging them gave every test a pass (:attr:`Suite.right_texts`, by SHA-256, as
    long values are compared anyway). A benchmark's right programs return the same values, and their rows are
    most of a check's replies."""
    text = reports.text
    digest = None if text is None else sha256(text).digest()
    if digest is not None and digest in suite.right_texts:
        return RunResult((PASSED,) * len(suite.tests), isolation, output=reports.output, node=node)
    result = _judged_anew(suite, reports, isolation, node, limits)
    if digest is not None and len(result.outcomes) == len(suite.tests) and result.passed:
        suite.judged_right(digest)
    return result


def _judged_anew(
    suite: Suite, reports: ProgramReports, isolation: IsolationLevel, node: str | None, limits: Limits | None
) -> RunResult:
    """:func:`judged`'s work on a row it has not seen right: each value or report judged."""
    plain = suite.plain_expected if reports.values is not None else None
    if plain is not None and reports.values == plain:
        # every value equal to its expected one: each test passes by the judge's first rule (see plain_expected)
        return RunResult((PASSED,) * len(plain), isolation, output=reports.output, node=node)
    if plain is not None and reports.values is not None and len(reports.values) == len(plain):
        outcomes = _judged_values(suite.tests, reports.values, plain)
    else:
        outcomes = [judge(test, report) for test, report in zip(suite.tests, reports.row)]
    if limits is not None and any(o.verdict == "timeout" for o in outcomes):
        seconds = suite.test_seconds(limits)
        outcomes = [replace(o, limit_seconds=s) if o.verdict == "timeout" else o for o, s in zip(outcomes, seconds)]
    return RunResult(tuple(outcomes), isolation, output=reports.output, node=node)


def _judged_values(tests: Sequence[Test], values: Sequence[object], plain: Sequence[object]) -> list[TestOutcome]:
    """Each value judged against its test, where ``plain`` is the suite's :attr:`~Suite.plain_expected`: the
    values equal to theirs (found at C speed) pass by the judge's first rule, and only the others are decoded
    and judged (a wrong program's row is nearly all right values)."""
    outcomes = [PASSED] * len(values)
    for index in compress(range(len(values)), map(ne, values, plain)):
        outcomes[index] = judge(tests[index], {wire.STATUS: wire.S_VALUE, wire.VALUE: values[index]})
    return outcomes


def judge(test: Test, report: object) -> TestOutcome:
    """Turn the worker's report for one test into an outcome.

    A pass needs the status that only the harness path produces for that kind of test (a value for a
    call test, ``ok`` with the job's nonce for an assert test, ``done`` for a stdio test) *and*, for
    call and stdio tests, a match judged here on the host.
    """
    if not isinstance(report, dict):
        return TestOutcome("crashed", "no report for this test")
    status = str(report.get(wire.STATUS))
    if status in _STATUS_VERDICTS:
        return _failure_outcome(_STATUS_VERDICTS[status], report)
    if status == wire.S_DEFERRED:
        return DEFERRED
    if isinstance(test, CallTest) and status == wire.S_VALUE:
        return _judge_value(test, report.get(wire.VALUE))
    if isinstance(test, AssertTest) and status == wire.S_OK:
        return PASSED
    if isinstance(test, StdioTest) and status == wire.S_DONE:
        return _judge_stdout(test, report)
    return TestOutcome("crashed", f"unexpected report {status!r} for this kind of test")


def value_tests(expressions: Sequence[str], arguments: Sequence[str] | None) -> list[CallTest]:
    """The call tests a sandbox's ``values`` runs: each expression, with its arguments where given."""
    if arguments is None:
        return [CallTest(expr, None) for expr in expressions]
    return [CallTest(expr, None, args=args) for expr, args in zip(expressions, arguments, strict=True)]


def is_cpu_timeout(report: object) -> bool:
    """Whether a worker's report is a CPU-limit timeout (not the wall-clock backstop)."""
    if not isinstance(report, dict):
        return False
    return report.get(wire.STATUS) == wire.S_TIMEOUT and report.get(wire.LIMIT) == wire.CPU_LIMIT


def _sure(report: object) -> bool:
    """Whether a CPU timeout's report says the test ran past its grace too (no rerun can change it)."""
    return isinstance(report, dict) and report.get(wire.SURE) is True


def reports_of(row: object, output: str, texts: bytes | memoryview = b"") -> ProgramReports:
    """A program's reports from a row of a worker's reply: a report per test, or its values alone, as their
    text's place in ``texts``, the reply's values texts (:data:`~refinelab.sandbox._worker.protocol.VALUES_TEXT`:
    kept unread); any other row reads as no values."""
    if isinstance(row, dict):
        text = _text_at(memoryview(texts), row.get(wire.VALUES_TEXT))
        return ProgramReports((), output, bytes(text) if len(text) <= TEXT_KEPT else _values_in(text))
    return ProgramReports(tuple(row) if isinstance(row, (list, tuple)) else (), output)


def _text_at(texts: memoryview, at: object) -> memoryview:
    """The bytes of ``texts`` a values row's place names (not copied); none where it names no place in them (a
    row that reads as no values)."""
    if type(at) is list and len(at) == 2 and type(at[0]) is int and type(at[1]) is int and 0 <= at[0] <= at[1]:
        return texts[at[0] : at[1]] if at[1] <= len(texts) else texts[:0]
    return texts[:0]


def _values_in(text: bytes | memoryview) -> tuple[object, ...]:
    """A values row's values from its text, read as ASCII (which the worker writes) without another copy of the
    bytes; none where it is no JSON list (a worker writes none such)."""
    try:
        values = json.loads(str(text, "ascii"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return ()
    return tuple(values) if isinstance(values, list) else ()


def value_or_outcome(test: CallTest, report: object) -> object:
    """The value a call test's expression returned, or, if it did not return one, its outcome."""
    if isinstance(report, dict) and report.get(wire.STATUS) == wire.S_VALUE:
        return decode_sent(report.get(wire.VALUE))
    return judge(test, report)


def values_of(tests: Sequence[CallTest], reports: ProgramReports | Sequence[object], *, encoded: bool) -> list[object]:
    """What each test's expression returned (``Sandbox.values``), or its outcome where it returned nothing: each
    value decoded, or with ``encoded`` as the worker encoded it (``codec.encode``: what the host stores of a
    trusted program's value; a row of values only, as it came, is taken whole)."""
    if isinstance(reports, ProgramReports):
        if encoded and reports.values is not None:
            return list(reports.values[: len(tests)])
        reports = reports.row
    if not encoded:
        return [value_or_outcome(test, report) for test, report in zip(tests, reports)]
    return [_encoded_or_outcome(test, report) for test, report in zip(tests, reports)]


def _encoded_or_outcome(test: CallTest, report: object) -> object:
    if isinstance(report, dict) and report.get(wire.STATUS) == wire.S_VALUE:
        return report.get(wire.VALUE)
    return judge(test, report)


def crash_report(message: str) -> dict[str, object]:
    """The report of a test whose worker stopped answering."""
    return {wire.STATUS: wire.S_CRASHED, wire.MESSAGE: message}


def _failure_outcome(verdict: Verdict, report: dict[str, object]) -> TestOutcome:
    traceback = report.get(wire.TRACEBACK)
    stdout = report.get(wire.STDOUT)
    return TestOutcome(
        verdict,
        str(report.get(wire.MESSAGE, "")),
        error_type=str(report[wire.ERROR_TYPE]) if wire.ERROR_TYPE in report else None,
        traceback=str(traceback) if traceback else None,
        actual=str(stdout)[:2000] if stdout else None,
        cpu_seconds=_float_or_none(report.get(wire.CPU)),
    )


def _judge_value(test: CallTest, encoded: object) -> TestOutcome:
    if isinstance(test.expected, Packed) and _own_encoding(test.expected, encoded):
        return PASSED  # a large value's own encoding: equal, nothing to decode
    actual = decode_sent(encoded)
    if values_match(actual, test.expected, test.atol):
        return PASSED
    expected_text, actual_text = _short_repr(test.expected), _short_repr(actual)
    return TestOutcome(
        "fail", f"{test.expr}: expected {expected_text}, got {actual_text}", expected=expected_text, actual=actual_text
    )


def _own_encoding(expected: Packed, encoded: object) -> bool:
    """Whether a test's value, as it came, is the packed expected value's own encoding: a list of numbers as
    its text and digest (``codec.digested``, :meth:`Packed.has_encoding`), or a container as it is
    (:meth:`Packed.encodes_as`)."""
    text = text_of(encoded)
    if text is not None:
        return expected.has_encoding(text[0], len(text[1]))
    return isinstance(encoded, (list, dict)) and expected.encodes_as(encoded)


def _judge_stdout(test: StdioTest, report: dict[str, object]) -> TestOutcome:
    stdout = str(report.get(wire.STDOUT, ""))
    cpu = _float_or_none(report.get(wire.CPU))
    if outputs_match(stdout, test.expected):
        return TestOutcome("pass", cpu_seconds=cpu)
    return TestOutcome("fail", "wrong output", expected=test.expected[:2000], actual=stdout[:2000], cpu_seconds=cpu)


def _short_repr(value: object, limit: int = 300) -> str:
    try:
        text = repr(value)
    except ValueError:  # an integer too long for decimal conversion
        text = f"<{type(value).__name__} too large to print>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _float_or_none(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None
