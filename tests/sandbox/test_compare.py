from __future__ import annotations

import pytest

from refinelab.sandbox import outputs_match, values_match
from refinelab.sandbox._compare import holds_float
from refinelab.sandbox._worker.codec import Opaque, decode, encode_expected


@pytest.mark.parametrize(
    "value",
    [None, True, 3, -(2**70), 2.5, float("inf"), "s", b"\x00b", 1 + 2j, [1, (2, 3)], {"a": {1, 2}}, frozenset({1})],
)
def test_expected_values_round_trip_through_the_encoding(value: object) -> None:
    assert decode(encode_expected(value)) == value


def test_decoding_keeps_exact_container_types() -> None:
    assert type(decode({"T": [1, 2]})) is tuple
    assert type(decode({"S": [1]})) is set
    assert type(decode([1])) is list


def test_an_opaque_value_equals_nothing_not_even_itself() -> None:
    value = decode({"O": "Weird"})
    assert isinstance(value, Opaque)
    assert value != value
    assert not values_match(value, value)


def test_values_match_like_the_original_asserts() -> None:
    assert values_match(1, 1.0)
    assert values_match(True, 1)
    assert not values_match([1, 2], (1, 2))
    assert not values_match(0.1 + 0.2, 0.3)


def test_tolerance_applies_elementwise_with_matching_shapes() -> None:
    assert values_match(0.1 + 0.2, 0.3, atol=1e-9)
    assert values_match([1.0, 2.0000001], [1.0, 2.0], atol=1e-6)
    assert not values_match([1.0], [1.0, 2.0], atol=1e-6)
    assert not values_match((1.0,), [1.0], atol=1e-6)
    assert not values_match(1.1, 1.0, atol=1e-6)


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        ("3\n", "3"),
        ("3  \r\n", "3\n"),
        ("a b \nc\n\n\n", "a b\nc"),
        ("", "\n"),
        ("\n  a b\n", "a b\n"),
        ("1.0 2\n", "1 2.00\n"),
        ("2  3\n", "2 3\n"),
    ],
)
def test_outputs_match_ignoring_surrounding_whitespace_and_equal_decimals(actual: str, expected: str) -> None:
    """As LiveCodeBench's grader accepts them: a program it passes must pass here."""
    assert outputs_match(actual, expected)


def test_outputs_differ_on_content_and_inner_whitespace() -> None:
    assert not outputs_match("3\n4\n", "3\n")
    assert not outputs_match("a  b\n", "a b\n")
    assert not outputs_match("0.333\n", "0.3333\n")
    assert not outputs_match("1\n\n2\n", "1\n2\n")
    assert not outputs_match("1 2\n", "1\n2\n")


def test_float_tolerance_compares_numeric_tokens() -> None:
    assert outputs_match("0.333333\n", "0.3333331\n", float_tolerance=1e-6)
    assert not outputs_match("0.33\n", "0.3333331\n", float_tolerance=1e-6)
    assert not outputs_match("yes 0.5\n", "no 0.5\n", float_tolerance=1e-6)


class _Float(float):
    """A float of another type: still a float."""


@pytest.mark.parametrize(
    ("value", "floats"),
    [
        (1.5, True),
        (1, False),
        ([1, 2, "a", None, True], False),  # flat, seen at C speed
        ([1, 2.0], True),
        ([1, [2, [3, (4, 0.5)]]], True),  # nested
        ([1, [2, [3, (4, 5)]]], False),
        ((_Float(1.0),), True),
        ([{"a": 1.5}], False),  # evalplus looks into lists and tuples only
        ([], False),
    ],
)
def test_holds_float_finds_a_float_anywhere_in_lists_and_tuples(value: object, floats: bool) -> None:
    """Whether HumanEval+ compares an expected value with a tolerance (as evalplus decides it)."""
    assert holds_float(value) is floats
