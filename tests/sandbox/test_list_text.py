"""A long list of numbers a test returned travels as its JSON text and that text's digest (``J``): the host
judges it against a packed expected value by the digest alone, and reads the text only when that does not
settle it, with the verdicts reading the list would give."""

from __future__ import annotations

import hashlib
import json

import pytest

from refinelab.problems import CallTest
from refinelab.sandbox import RunResult, Suite, WorkerPool, judge
from refinelab.sandbox import _judge as judge_module
from refinelab.sandbox._judge import ProgramReports
from refinelab.sandbox._outputs import PACK_BYTES
from refinelab.sandbox._packed import Packed
from refinelab.sandbox._worker import protocol as wire
from refinelab.sandbox._worker.codec import TEXT_CHARS, TEXT_ITEMS, decode, decode_sent, digested, text_of
from tests.conftest import with_pool

SIZE = 4 * TEXT_ITEMS
NUMBERS = list(range(SIZE))
TEXT = json.dumps(NUMBERS)
SENT = {"J": [hashlib.sha256(TEXT.encode()).hexdigest(), TEXT]}
PROGRAM = "def f(n, k=1):\n    return [i * k for i in range(n)]\n"


def test_a_long_list_of_numbers_is_sent_as_its_text_and_anything_else_as_it_is() -> None:
    assert len(TEXT) >= TEXT_CHARS == PACK_BYTES  # as long as the host's packed values begin
    assert digested(NUMBERS) == SENT and text_of(SENT) == (SENT["J"][0], TEXT)
    assert decode_sent(SENT) == NUMBERS
    floats = [i / 3 for i in range(SIZE)]
    assert decode_sent(digested(floats)) == floats
    short = list(range(TEXT_ITEMS - 1))
    small = [0] * TEXT_ITEMS  # enough items, but under TEXT_CHARS of JSON
    words = ["ab"] * SIZE  # its text would hold quotes: escaping them would make it longer
    tagged = {"T": NUMBERS}
    nested_words = [["ab"]] * SIZE
    for value in (short, small, words, tagged, nested_words):
        assert digested(value) is value


@pytest.mark.parametrize(
    "body",
    [
        ["0" * 64, "[1, 2"],  # no JSON
        ["0" * 64, '["a"]'],  # a quote: a child never sends one
        ["0" * 64, '{"J": ["x", "[1]"]}'],  # text in text
        ["0" * 64, "[" * 400 + "]" * 400],  # deeper than a child's encoding goes
        ["0" * 64, "[" * 200_000 + "]" * 200_000],  # deeper than the JSON reader's stack
        "[1, 2]",
        [1, "[1, 2]"],
    ],
)
def test_a_malformed_text_reads_as_a_value_equal_to_nothing(body: object) -> None:
    value = decode_sent({"J": body})
    assert value != [1, 2] and value != [] and value != value


def test_a_text_within_the_depth_a_child_writes_reads_whole() -> None:
    nested: object = 1
    for _ in range(300):
        nested = [nested]
    assert decode_sent({"J": ["0" * 64, "[" * 300 + "1" + "]" * 300]}) == nested


def test_a_packed_value_knows_its_own_encoding_by_digest_and_length() -> None:
    packed = Packed.of(NUMBERS, NUMBERS)
    digest = SENT["J"][0]
    assert packed.has_encoding(digest, len(TEXT))
    assert not packed.has_encoding(digest, len(TEXT) + 1)
    assert not packed.has_encoding("0" * 64, len(TEXT))
    nan = [float("nan"), *NUMBERS]
    holding_nan = Packed.of([{"F": "nan"}, *NUMBERS], nan)
    own = json.dumps([{"F": "nan"}, *NUMBERS])
    assert not holding_nan.has_encoding(hashlib.sha256(own.encode()).hexdigest(), len(own))  # a NaN equals nothing


def test_a_text_with_the_expected_digest_passes_without_being_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def unread(data: object) -> object:
        raise AssertionError("the text was read")

    report = {wire.STATUS: wire.S_VALUE, wire.VALUE: SENT}
    monkeypatch.setattr(judge_module, "decode_sent", unread)
    assert judge(CallTest("f(n)", Packed.of(NUMBERS, NUMBERS)), report).verdict == "pass"
    with pytest.raises(AssertionError, match="was read"):
        other = [*NUMBERS[:-1], 0]
        judge(CallTest("f(n)", Packed.of(other, other)), report)


def test_a_long_list_is_judged_on_its_text_through_the_pool() -> None:
    as_floats = [float(i) for i in NUMBERS]
    near = [i + 1e-9 for i in NUMBERS]
    tests = [
        CallTest(f"f({SIZE})", Packed.of(NUMBERS, NUMBERS)),  # its digest
        CallTest(f"f({SIZE})", NUMBERS),  # not packed: read and compared
        CallTest(f"f({SIZE})", Packed.of(as_floats, as_floats)),  # equal as == means it, another text
        CallTest(f"f({SIZE})", Packed.of(near, near, atol=1e-6)),  # within a tolerance
        CallTest(f"f({SIZE}, 2)", Packed.of(NUMBERS, NUMBERS)),  # wrong
        CallTest("f(3)", [0, 1, 2]),
    ]
    suite = Suite.of(tests, entry_point="f")

    async def go(pool: WorkerPool) -> tuple[ProgramReports, RunResult, list[object]]:
        (found,) = await pool.reports([(PROGRAM, suite.inputs(pool.limits))])
        return found, await pool.run(PROGRAM, suite), await pool.values(PROGRAM, [f"f({SIZE})"], entry_point="f")

    found, result, values = with_pool(go)
    sent = found.values
    assert sent is not None and sent[0] == SENT and sent[5] == [0, 1, 2]
    assert [o.verdict for o in result.outcomes] == ["pass", "pass", "pass", "pass", "fail", "pass"]
    assert (result.outcomes[4].actual or "").startswith("[0, 2, 4, 6")  # what it returned, read from the text
    assert values == [NUMBERS]  # a trusted program's values come back whole


def test_text_is_read_only_as_a_whole_value_so_its_depth_never_adds_to_the_rows() -> None:
    """The worker lets a report nest 320 levels and a text may nest 320 more: read inside a value, a forged
    report of both (200 lists around a deep text) went past the host's stack and stopped the whole check."""
    deep: object = {"J": ["0" * 64, "[" * 320 + "]" * 320]}
    for _ in range(200):
        deep = [deep]
    outcome = judge(CallTest("f(n)", [[]]), {wire.STATUS: wire.S_VALUE, wire.VALUE: deep})
    assert outcome.verdict == "fail"
    inside = decode([SENT])
    assert isinstance(inside, list) and inside != [NUMBERS] and inside[0] != NUMBERS  # inside a value: opaque
    assert decode_sent(SENT) == NUMBERS and decode_sent({"J": "text"}) != []
