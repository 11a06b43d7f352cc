"""A program whose every test returned a value comes back as its values alone, and is judged in one step
with the same outcomes as test by test."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from operator import eq, ne

import pytest

from refinelab.problems import AssertTest, CallTest
from refinelab.sandbox import RunResult, Suite, WorkerPool
from refinelab.sandbox import _judge as judge_module
from refinelab.sandbox._judge import TEXT_KEPT, ProgramReports, judged, reports_of
from refinelab.sandbox._packed import Packed
from refinelab.sandbox._suite import JUDGED_ALONE, RIGHT_TEXTS
from refinelab.sandbox._worker import protocol as wire
from refinelab.sandbox._worker.codec import (
    DIGEST_CHARS,
    HEAD_CHARS,
    JSON_TEXT,
    decode,
    digested,
    encode,
    string_digest,
)
from refinelab.sandbox._worker.server import framed
from tests.conftest import with_pool

BIG = 2**60
CASES = [
    (3, 3, None),
    (3, 4, None),
    (1.0, 1, None),  # equal as the asserts mean it
    (1, True, None),
    ([1, 2], (1, 2), None),  # a tuple is not a list
    ([1, [2, 3]], [1, [2, 3]], None),
    ("a", "a", None),
    (0.3, 0.1 + 0.2, None),
    (0.3, 0.1 + 0.2, 1e-6),  # within the tolerance, judged as sent (a number is its own encoding)
    (0.3, 0.3 + 2e-6, 1e-6),  # past it
    (1e9, 1e9 + 50, 1e-6),  # within the relative tolerance
    (2.0, 2, 1e-6),
    (2.5, 2, 1e-6),
    (2.0, True, 1e-6),  # a boolean is no number here
    ([0.3, 1.0], [0.1 + 0.2, 1], 1e-6),
    ([0.3, 1.0], [0.1 + 0.2, 1.1], 1e-6),
    ([0.3, 1.0], [0.1 + 0.2], 1e-6),  # not the same shape
    ([0.3, "a"], [0.1 + 0.2, "a"], 1e-6),  # a string is never within a tolerance, as the judge has it
    ([[0.3]], [[0.1 + 0.2]], 1e-6),  # nested: decoded first
    ([0.3], (0.1 + 0.2,), 1e-6),
    (0.3, [0.1 + 0.2], 1e-6),
    (0.3, float("inf"), 1e-6),
    (float("nan"), float("nan"), None),  # a NaN is never equal
    ([float("nan")], [float("nan")], 1e-6),
    (BIG, BIG, None),  # beyond 2**53 an integer travels as a tag
    (encode(BIG), BIG, None),  # a dict shaped like that tag is not the integer
    ({"a": 1}, {"a": 1}, None),
    ((1, 2), (1, 2), None),
    ({1, 2}, {2, 1}, None),
]


def _both_ways(expected: object, returned: object, atol: float | None) -> tuple[list[str], list[str]]:
    suite = Suite.of([CallTest("f()", expected, atol=atol), CallTest("f()", 7)])
    values = (encode(returned), 7)
    listed = tuple({wire.STATUS: wire.S_VALUE, wire.VALUE: value} for value in values)
    fast = judged(suite, ProgramReports((), "", values), "none")
    slow = judged(suite, ProgramReports(listed, ""), "none")
    return [o.verdict for o in fast.outcomes], [o.verdict for o in slow.outcomes]


@pytest.mark.parametrize(("expected", "returned", "atol"), CASES)
def test_values_alone_are_judged_as_a_report_per_test_would_be(
    expected: object, returned: object, atol: float | None
) -> None:
    fast, slow = _both_ways(expected, returned, atol)
    assert fast == slow


def _as_text(values: Sequence[object]) -> bytes:
    """A values row's text as a worker writes it (``server.framed``)."""
    return JSON_TEXT(list(values)).encode()


@pytest.mark.parametrize(("expected", "returned", "atol"), CASES)
def test_a_values_row_as_text_is_judged_as_its_values_are_the_first_time_and_after(
    expected: object, returned: object, atol: float | None
) -> None:
    suite = Suite.of([CallTest("f()", expected, atol=atol), CallTest("f()", 7)])
    values = (encode(returned), 7)
    by_values = judged(suite, ProgramReports((), "", values), "none").outcomes
    first = judged(suite, ProgramReports((), "", _as_text(values)), "none").outcomes
    again = judged(suite, ProgramReports((), "", _as_text(values)), "none").outcomes
    assert first == by_values == again  # a NaN is never equal: its row is never kept as right


def test_a_row_judged_right_once_is_right_again_without_being_read() -> None:
    suite = Suite.of([CallTest("f(1)", [1, 2]), CallTest("f(2)", (3, "a")), CallTest("f(3)", {"k": 1.5})])
    text = _as_text([encode([1, 2]), encode((3, "a")), encode({"k": 1.5})])
    first, second = ProgramReports((), "one", text), ProgramReports((), "two", text)
    assert [o.verdict for o in judged(suite, first, "none").outcomes] == ["pass"] * 3
    assert suite.right_texts == {hashlib.sha256(text).digest()}
    result = judged(suite, second, "none")
    assert result.passed and len(result.outcomes) == 3 and result.output == "two"
    assert "values" not in second.__dict__  # never read
    wrong = ProgramReports((), "", _as_text([encode([1, 2]), encode((3, "b")), encode({"k": 1.5})]))
    assert [o.verdict for o in judged(suite, wrong, "none").outcomes] == ["pass", "fail", "pass"]
    assert suite.right_texts == {hashlib.sha256(text).digest()}  # a wrong row is never kept
    assert suite.subset([0, 1]).right_texts == frozenset()  # other tests: learned anew
    for extra in range(2 * RIGHT_TEXTS):
        suite.judged_right(b"%d" % extra)
    assert len(suite.right_texts) == RIGHT_TEXTS and hashlib.sha256(text).digest() in suite.right_texts


def test_a_reply_carries_its_values_rows_as_texts_that_read_as_the_values() -> None:
    rows: list[object] = [{wire.VALUES: [1, "a", {"T": [2.5]}]}, [{wire.STATUS: wire.S_SKIPPED}], {wire.VALUES: []}]
    body = framed({wire.RESULTS: rows, wire.OUTPUTS: ["", "", ""], wire.STATS: {}})
    head, _, _ = body.partition(b"\n")
    sent = json.loads(head)[wire.RESULTS]
    found = [reports_of(row, "", memoryview(body)[len(head) + 1 :]) for row in sent]  # as the pool reads it
    assert [r.text for r in found] == [b'[1, "a", {"T": [2.5]}]', None, b"[]"]
    assert [r.values for r in found] == [(1, "a", {"T": [2.5]}), None, ()]
    assert found[1].listed == ({wire.STATUS: wire.S_SKIPPED},)


def test_a_long_values_row_is_read_as_it_comes() -> None:
    values = [encode("x" * TEXT_KEPT), 1, 2]
    body = framed({wire.RESULTS: [{wire.VALUES: values}], wire.OUTPUTS: [""], wire.STATS: {}})
    head, _, texts = body.partition(b"\n")
    found = reports_of(json.loads(head)[wire.RESULTS][0], "", texts)
    assert found.text is None and found.values == tuple(values)
    short = framed({wire.RESULTS: [{wire.VALUES: values[1:]}], wire.OUTPUTS: [""], wire.STATS: {}})
    head, _, texts = short.partition(b"\n")
    assert reports_of(json.loads(head)[wire.RESULTS][0], "", texts).text == b"[1, 2]"


@pytest.mark.parametrize("at", [[0, 99], [3, 1], [-1, 2], ["0", "6"], [0], [0, 6.0], [True, 6], "0:6"])
def test_a_values_row_whose_place_is_not_in_the_texts_reads_as_no_values(at: object) -> None:
    texts = b"[1, 2][3]" + b"[" * 5000 + b"]" * 5000
    assert reports_of({wire.VALUES_TEXT: [0, 6]}, "", texts).values == (1, 2)
    assert reports_of({wire.VALUES_TEXT: [6, 9]}, "", texts).values == (3,)
    assert reports_of({wire.VALUES_TEXT: [9, len(texts)]}, "", texts).values == ()  # too deep to read
    assert reports_of({wire.VALUES_TEXT: [0, 4]}, "", b'["\xff"]').values == ()  # not the ASCII a worker writes
    assert reports_of({wire.VALUES_TEXT: at}, "", texts).values == ()
    assert reports_of({wire.VALUES: [1]}, "", texts).values == ()  # a row only the worker's own code holds
    suite = Suite.of([CallTest("f()", 1)])
    assert not judged(suite, reports_of({wire.VALUES_TEXT: at}, "", texts), "none").passed


def test_the_one_step_is_taken_only_where_equal_encodings_mean_equal_values() -> None:
    assert Suite.of([CallTest("f()", [1, "a", None, [2.5]]), CallTest("f()", (1, 2))]).plain_expected == (
        [1, "a", None, [2.5]],
        (1, 2),
    )
    assert Suite.of([CallTest("f()", {"I": "1"})]).plain_expected is None  # a dict could equal a tag
    assert Suite.of([CallTest("f()", [1, {"a": 2}])]).plain_expected is None
    assert Suite.of([CallTest("f()", 1), AssertTest("assert True")]).plain_expected is None
    big = "x" * 100_000
    assert Suite.of([CallTest("f()", Packed.of(big, big)), CallTest("f()", 1)]).plain_expected == (JUDGED_ALONE, 1)
    assert not any(map(eq, [JUDGED_ALONE, [], 1], [JUDGED_ALONE] * 3)) and all(map(ne, [[], 1], [JUDGED_ALONE] * 2))


LONG_LIST = list(range(2000))
PACKED_CASES = [
    (LONG_LIST, LONG_LIST, None),
    (LONG_LIST, digested(LONG_LIST), None),  # as text: by its digest
    (LONG_LIST, [*LONG_LIST[:-1], 0], None),
    (LONG_LIST, digested([*LONG_LIST[:-1], 0]), None),
    (LONG_LIST, [float(i) for i in LONG_LIST], None),  # equal as == means it
    ([i + 0.5 for i in LONG_LIST], [i + 0.5 + 1e-9 for i in LONG_LIST], 1e-6),
    ([i + 0.5 for i in LONG_LIST], digested([i + 0.5 + 1e-3 for i in LONG_LIST]), 1e-6),
    ("y" * DIGEST_CHARS, digested("y" * DIGEST_CHARS), None),
    ("y" * DIGEST_CHARS, digested("z" * DIGEST_CHARS), None),
]


@pytest.mark.parametrize(("expected", "sent", "atol"), PACKED_CASES)
def test_a_packed_value_among_plain_ones_is_judged_alone_as_a_report_per_test_would_be(
    expected: object, sent: object, atol: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    packed = Packed.of(encode(expected), expected, atol=atol)
    suite = Suite.of([CallTest("f()", 1), CallTest("f()", packed, atol=atol), CallTest("f()", [2, 3])])
    values = (1, sent, [2, 3])
    listed = tuple({wire.STATUS: wire.S_VALUE, wire.VALUE: value} for value in values)
    slow = judged(suite, ProgramReports(listed, ""), "none")
    alone: list[object] = []
    judge = judge_module.judge

    def counted(test: object, report: object) -> object:
        alone.append(test)
        return judge(test, report)  # type: ignore[arg-type]

    monkeypatch.setattr(judge_module, "judge", counted)
    fast = judged(suite, ProgramReports((), "", values), "none")
    assert fast.outcomes == slow.outcomes and fast.outcomes[0].verdict == fast.outcomes[2].verdict == "pass"
    assert alone == [suite.tests[1]]  # the plain values compared at C speed; the packed one judged alone


def test_a_tag_shaped_dict_does_not_pass_as_the_integer_it_encodes() -> None:
    fast, _ = _both_ways(encode(BIG), BIG, None)
    assert fast == ["fail", "pass"]


def test_the_worker_sends_values_alone_only_for_a_program_whose_every_test_returned_one() -> None:
    code = "def f(x):\n    return 10 // x\n"
    tests = [CallTest("f(1)", 10), CallTest("f(2)", 5), CallTest("f(0)", 0), CallTest("f(5)", 2)]
    suite = Suite.of(tests, entry_point="f")
    right = suite.subset([0, 1, 3])

    async def go(pool: WorkerPool) -> tuple[list[ProgramReports], list[RunResult]]:
        found = await pool.reports([(code, right.inputs(pool.limits)), (code, suite.inputs(pool.limits))])
        return found, await pool.run_items([(code, right), (code, suite)])

    (whole, failing), runs = with_pool(go)
    assert whole.values == (10, 5, 2)
    assert failing.values is None
    assert [[o.verdict for o in r.outcomes] for r in runs] == [["pass"] * 3, ["pass", "pass", "error", "pass"]]


LONG = "def f(n, c='7'):\n    return c * n\n"


def test_a_long_string_travels_as_its_digest_and_is_judged_on_it() -> None:
    size = DIGEST_CHARS + 5
    right = "7" * size
    tests = [
        CallTest("f(3)", "777"),
        CallTest(f"f({size})", right),
        CallTest(f"f({size})", Packed.of(right, right)),
        CallTest(f"f({size}, '8')", right),
        CallTest(f"f({size})", Packed.of(right[:-1] + "8", right[:-1] + "8")),
        CallTest(f"f({size})", [1]),
    ]
    suite = Suite.of(tests, entry_point="f")

    async def go(pool: WorkerPool) -> tuple[list[ProgramReports], RunResult, list[object]]:
        (found,) = await pool.reports([(LONG, suite.inputs(pool.limits))])
        result = await pool.run(LONG, suite)
        values = await pool.values(LONG, [f"f({size})"], entry_point="f")
        return [found], result, values

    (found,), result, values = with_pool(go)
    sent = found.values
    assert sent is not None and sent[0] == "777"
    assert sent[1] == {"H": [string_digest(right), size, right[:HEAD_CHARS]]}
    assert [o.verdict for o in result.outcomes] == ["pass", "pass", "pass", "fail", "fail", "fail"]
    assert (result.outcomes[3].actual or "").startswith("'888")  # what it returned, from the digest's head
    assert values == [right]  # a trusted program's values come back whole


def test_a_digest_equals_only_the_string_it_was_made_from() -> None:
    text = "ab" * DIGEST_CHARS
    digest = digested(text)
    assert isinstance(digest, dict)
    value: object = decode(digest)
    listed: object = [text]
    assert value != text[:-1] + "c" and value != listed
    assert value == text
    assert value == Packed.of(text, text) and value != Packed.of(text + "x", text + "x")
    assert decode({"H": ["not hex", len(text), ""]}) != Packed.of(text, text)
    assert digested("short") == "short" and digested([text]) == [text]


def test_a_subset_is_the_same_from_a_run_or_a_list_and_keeps_what_its_suite_worked_out() -> None:
    big = "x" * 100_000
    tests = [CallTest(f"f({i})", i) for i in range(5)] + [CallTest("f()", Packed.of(big, big))]
    suite = replace(Suite.of(tests), reference_seconds=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6))
    run, listed = suite.subset(range(1, 4)), suite.subset([1, 2, 3])
    assert run == listed and run.tests == tuple(tests[1:4]) and run.reference_seconds == (0.2, 0.3, 0.4)
    assert run.plain_expected == listed.plain_expected == (1, 2, 3) and run.packed_bytes == 0
    assert suite.subset([5, 0]).tests == (tests[5], tests[0]) and suite.subset([5, 0]).reference_seconds == (0.6, 0.1)
    assert suite.plain_expected == (0, 1, 2, 3, 4, JUDGED_ALONE)  # worked out: a subset takes its part
    assert suite.subset(range(3, 6)).__dict__["plain_expected"] == (3, 4, JUDGED_ALONE)
    assert suite.subset(range(4, 6)).packed_bytes == suite.packed_bytes > 0
    mixed = Suite.of([CallTest("f()", 1), AssertTest("assert True")])
    assert mixed.plain_expected is None and mixed.subset(range(1)).plain_expected == (1,)  # its own, not None
