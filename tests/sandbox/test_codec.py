"""The child-side encoding: exact builtin types only, so faked equality cannot cross to the host."""

from __future__ import annotations

import collections
from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction

import pytest

from refinelab.sandbox._compare import values_match
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


@pytest.mark.parametrize("kind", [list, tuple, set, frozenset])
def test_plain_rebuilds_every_container_whose_items_are_not_all_exact(kind: type) -> None:
    rebuilt = plain(kind([1, 2.5, "x", SneakyInt(4)]))
    assert type(rebuilt) is kind
    assert {type(item) for item in rebuilt} == {int, float, str}  # type: ignore[attr-defined]
    assert plain({1: SneakyInt(4)}) != {1: 5} and plain({SneakyInt(4): 1}) != {5: 1}
    assert type(next(iter(plain({1: SneakyInt(4)}).values()))) is int  # type: ignore[attr-defined]


def test_plain_gives_a_mutable_container_of_exact_items_as_a_copy() -> None:
    numbers = [float(i) for i in range(10_000)]
    rebuilt = plain(numbers)
    numbers[0] = SneakyInt(4)  # what the program does to its own list afterwards does not reach the test
    assert rebuilt == [float(i) for i in range(10_000)] and type(rebuilt[0]) is float
    counts = {"a": 1, 2: None}
    copied = plain(counts)
    counts["a"] = SneakyInt(4)
    assert copied == {"a": 1, 2: None} and type(copied["a"]) is int
    members = {1, 2}
    assert plain(members) == {1, 2} and plain(members) is not members


def test_huge_integers_and_special_floats_survive() -> None:
    big = 7**5000
    assert decode(encode(big)) == big
    assert decode(encode(float("-inf"))) == float("-inf")
    nan = decode(encode(float("nan")))
    assert isinstance(nan, float) and nan != nan


def _item_by_item(value: object, depth: int = 0) -> object:
    """What encode returned before lists of scalars took a way of their own: a call per item."""
    if depth > 100:
        return {"O": "<too deep>"}
    if type(value) is list:
        return [_item_by_item(item, depth + 1) for item in value]
    return encode(value, depth)


@pytest.mark.parametrize(
    "value",
    [
        [],
        list(range(-5, 5)),
        [2**53 - 1, -(2**53) + 1],
        [2**53, 1],
        [1, -(2**53)],
        [10**400, 1],
        [0.5, 1e300, -2.0],
        [1.5, float("nan")],
        [float("inf"), 1],
        [1, 2.5, 2.0**60],
        ["a", True, None, "b"],
        [True, 1],
        [None, 1.5],
        [SneakyInt(3), 4],
        ["x", [1, 2]],
        [(1, 2), 3],
    ],
)
def test_a_list_of_scalars_encodes_as_item_by_item(value: list[object]) -> None:
    encoded = encode(value)
    assert encoded == _item_by_item(value) and repr(encoded) == repr(_item_by_item(value))  # 1 and 1.0 differ
    assert encoded is not value  # a copy: the candidate's threads may change the list after it is encoded
    assert isinstance(encoded, list)
    decoded = decode(encoded)
    assert repr(decoded) == repr([decode(item) for item in encoded]) and decoded is not encoded
    nested: list[object] = value
    for depth in range(1, 103):
        nested = [nested]
        if depth >= 98:  # the depth cut (items below 100 levels) falls where it did
            assert repr(encode(nested)) == repr(_item_by_item(nested)), depth


def test_deep_nesting_is_cut_off_not_a_crash() -> None:
    value: list[object] = []
    for _ in range(300):
        value = [value]
    assert "O" in str(encode(value))


def test_numpy_scalars_are_the_python_scalars_they_hold() -> None:
    numpy = pytest.importorskip("numpy")
    values = [numpy.int64(3), numpy.float64(0.5), numpy.bool_(True), numpy.int32(-2), [numpy.uint8(7)]]
    assert [decode(encode(v)) for v in values] == [3, 0.5, True, -2, [7]]
    assert [type(plain(v)) for v in values[:4]] == [int, float, bool, int]
    assert plain(numpy.bool_(False)) is False


class PosesAsNumpy:
    """A class written in Python claiming to be numpy's: it must not be trusted."""

    def item(self) -> int:
        return 3


PosesAsNumpy.__module__ = "numpy"
PosesAsNumpy.__name__ = PosesAsNumpy.__qualname__ = "int64"


def test_a_python_class_posing_as_a_numpy_scalar_stays_opaque() -> None:
    assert decode(encode(PosesAsNumpy())) != 3
    assert plain(PosesAsNumpy()) != 3


def test_decimal_and_fraction_compare_by_value() -> None:
    assert decode(encode(Decimal("0.5"))) == 0.5
    assert decode(encode(Decimal("0.1"))) != 0.1  # exactly as the interpreter compares them
    assert decode(encode([Fraction(1, 3)])) == [Fraction(2, 6)]
    assert decode(encode(Fraction(7**40, 3))) == Fraction(7**40, 3)
    assert plain(Fraction(1, 2)) == 0.5 and plain(Decimal("2")) == 2
    assert values_match(decode(encode(Fraction(1, 3))), 0.3333333333, atol=1e-6)


def test_a_fraction_whose_class_was_tampered_with_is_not_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Fraction, "__eq__", lambda self, other: True)
    assert decode(encode(Fraction(1, 2))) != 5
    assert plain(Fraction(1, 2)) != 5


def test_iterables_stay_iterable_with_plain_items_and_no_borrowed_equality() -> None:
    assert list(plain(x for x in [SneakyInt(1), 2])) == [1, 2]  # type: ignore[call-overload]
    assert sorted(plain(map(int, "312"))) == [1, 2, 3]  # type: ignore[call-overload]
    assert next(plain(iter(range(5)))) == 0  # type: ignore[call-overload]
    assert plain(x for x in [5]) != [5]  # a generator equals no list, as in the interpreter
    assert plain({1: 2, 3: 4}.keys()) == {1, 3} and list(plain({1: 2, 3: 4}.keys())) == [1, 3]  # type: ignore[call-overload]
    assert plain({1: 2}.items()) == {(1, 2)}
    assert list(plain({1: 2}.values())) == [2]  # type: ignore[call-overload]
    assert plain(collections.deque([1, 2])) == collections.deque([1, 2])
    assert plain(range(3)) == range(3) and plain(bytearray(b"a")) == b"a"
    assert decode(encode({1: 2}.keys())) == {1}
    assert decode(encode(x for x in [1])) != [1]


def test_an_iterable_that_claims_equality_gets_none() -> None:
    class Listish:
        def __iter__(self) -> Iterator[int]:
            return iter([1, 2])

        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return 0

    assert plain(Listish()) != [9]
    assert list(plain(Listish())) == [1, 2]  # type: ignore[call-overload]
    assert decode(encode(Listish())) != [9]
