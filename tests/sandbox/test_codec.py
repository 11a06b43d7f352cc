"""The child-side encoding: exact builtin types only, so faked equality cannot cross to the host."""

from __future__ import annotations

import collections

from refinelab.sandbox._worker.codec import decode, encode, plain


class AlwaysEqual:
    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0


class SneakyInt(int):
    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0


def test_builtins_round_trip() -> None:
    value = {"k": [1, 2.5, (None, True)], 3: {frozenset({1}), "x"}, "b": b"\x01"}
    assert decode(encode(value)) == value


def test_an_object_that_equals_everything_is_encoded_as_opaque() -> None:
    assert decode(encode(AlwaysEqual())) != 5
    assert encode(AlwaysEqual()) == {"O": "AlwaysEqual"}


def test_builtin_subclasses_become_their_base_without_calling_overrides() -> None:
    encoded = encode(SneakyInt(4))
    assert encoded == 4
    assert decode(encode([SneakyInt(4)])) != [5]
    counter = collections.Counter("aab")
    assert decode(encode(counter)) == {"a": 2, "b": 1}


def test_plain_rebuilds_values_from_exact_builtins() -> None:
    rebuilt = plain([SneakyInt(4), AlwaysEqual()])
    assert isinstance(rebuilt, list)
    assert type(rebuilt[0]) is int
    assert rebuilt[1] != 5


def test_huge_integers_and_special_floats_survive() -> None:
    big = 7**5000
    assert decode(encode(big)) == big
    assert decode(encode(float("-inf"))) == float("-inf")
    nan = decode(encode(float("nan")))
    assert isinstance(nan, float) and nan != nan


def test_deep_nesting_is_cut_off_not_a_crash() -> None:
    value: list[object] = []
    for _ in range(300):
        value = [value]
    assert "O" in str(encode(value))
