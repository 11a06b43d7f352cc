"""Value encoding, run in the child: exact builtin types only.

An object that overrides ``__eq__`` cannot pass for the expected value, because what crosses to the host
is data rebuilt from exact builtins; subclasses of builtins are converted to their base type without
calling their overridden methods.

Values of a few trusted non-builtin types compare as the interpreter compares them: numpy scalars
(``numpy.int64(3) == 3``) become the Python scalar they hold, ``Decimal`` and ``Fraction`` keep their
value, dict views and other iterables stay iterable (``list(candidate(x)) == [...]``). Trust rests on
the type, never on the value's own methods: numpy's scalar types are static C types, ``Decimal`` is
immutable, and ``Fraction`` is used only while its class is as the worker found it.
"""

from __future__ import annotations

import collections
import decimal
import fractions
from collections.abc import Iterator
from typing import Any

_HEAP_TYPE = 1 << 9
"""``Py_TPFLAGS_HEAPTYPE``: set on every class made by Python code, clear on C extensions' static types."""
_SCALARS = (bool, int, float, complex, str, bytes)
_DECIMAL = decimal.Decimal
_FRACTION = fractions.Fraction
_FRACTION_CLASS = dict(vars(_FRACTION))  # as the worker found it, before any candidate ran
_NUMERATOR, _DENOMINATOR = _FRACTION_CLASS["_numerator"], _FRACTION_CLASS["_denominator"]
_DEQUE = collections.deque
_EMPTY: dict[object, object] = {}
_KEYS: type = type(_EMPTY.keys())
_VALUES: type = type(_EMPTY.values())
_ITEMS: type = type(_EMPTY.items())


def encode(value: Any, depth: int = 0) -> object:
    """Encode a value as JSON-safe data tagged by its exact builtin type."""
    if depth > 100:
        return {"O": "<too deep>"}
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if -(2**53) < value < 2**53 else {"I": hex(value)}
    if kind is float:
        return value if value == value and value not in (float("inf"), float("-inf")) else {"F": repr(value)}
    if kind is list:
        return [encode(item, depth + 1) for item in value]
    return _encode_other(value, kind, depth)


def _encode_other(value: Any, kind: type, depth: int) -> object:
    tags = {tuple: "T", set: "S", frozenset: "Z"}
    if kind in tags:
        return {tags[kind]: [encode(item, depth + 1) for item in value]}
    if kind is dict:
        return {"D": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if kind is bytes:
        return {"B": value.hex()}
    if kind is complex:
        return {"C": [encode(value.real, depth + 1), encode(value.imag, depth + 1)]}
    base = _builtin_base(value)
    if base is not None:
        return encode(base, depth)
    return _encode_trusted(value, kind, depth)


def _encode_trusted(value: Any, kind: type, depth: int) -> object:
    """Numpy scalars, ``Decimal``, ``Fraction``, set-like dict views and ``bytearray`` by value."""
    scalar = numpy_scalar(value, kind)
    if scalar is not None:
        return encode(scalar, depth)
    if kind is _DECIMAL:
        return {"M": str(value)}
    if kind is _FRACTION and fraction_intact():
        return {"Q": [hex(_NUMERATOR.__get__(value)), hex(_DENOMINATOR.__get__(value))]}
    if kind is _KEYS or kind is _ITEMS:  # equal to sets, as the views are
        return {"S": [encode(item, depth + 1) for item in value]}
    if kind is bytearray:
        return {"B": bytes(value).hex()}
    return {"O": kind.__qualname__}


def numpy_scalar(value: Any, kind: type) -> object:
    """The Python scalar a numpy scalar holds (``numpy.generic.item``); None for anything else.

    Only numpy's own static types qualify (a class written in Python cannot pose as one), and the
    conversion is numpy's C method, not one the value could override.
    """
    if kind.__flags__ & _HEAP_TYPE or kind.__module__ != "numpy":
        return None
    generic = next((k for k in kind.__mro__ if k.__name__ == "generic" and not k.__flags__ & _HEAP_TYPE), None)
    if generic is None or generic.__module__ != "numpy":
        return None
    item = vars(generic)["item"](value)
    return item if type(item) in _SCALARS else None


def fraction_intact() -> bool:
    """True while ``fractions.Fraction`` is the class the worker imported (no method replaced)."""
    current = vars(_FRACTION)
    return len(current) == len(_FRACTION_CLASS) and all(current.get(k) is v for k, v in _FRACTION_CLASS.items())


def _builtin_base(value: Any) -> object:
    """Convert an instance of a builtin subclass to the builtin, bypassing overridden methods."""
    converters: tuple[tuple[type, Any], ...] = (
        (bool, bool.__bool__),
        (int, int.__int__),
        (float, float.__float__),
        (str, str.__str__),
        (bytes, bytes),
        (tuple, tuple.__iter__),
        (list, list.__iter__),
        (dict, dict.items),
        (frozenset, frozenset.__iter__),
        (set, set.__iter__),
    )
    for base, convert in converters:
        if isinstance(value, base):
            converted = convert(value)
            if base in (tuple, list, frozenset, set):
                return base(list(converted))
            if base is dict:
                return dict(list(converted))
            return converted
    return None


class Opaque:
    """Stands in for a value of a non-builtin type; equal to nothing but itself."""

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


def plain(value: Any, depth: int = 0) -> object:
    """Rebuild a value from exact builtins (what a test sees when it calls the candidate)."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str, bytes, complex):
        return value
    if kind is list:
        return [plain(item, depth + 1) for item in value]
    if depth > 100:
        return Opaque("<too deep>")
    if kind in (tuple, set, frozenset):
        return kind(plain(item, depth + 1) for item in value)
    if kind is dict:
        return {plain(k, depth + 1): plain(v, depth + 1) for k, v in value.items()}
    base = _builtin_base(value)
    if base is not None:
        return plain(base, depth)
    return _plain_trusted(value, kind, depth)


def _plain_trusted(value: Any, kind: type, depth: int) -> object:
    """Numpy scalars as Python scalars, exact ``Decimal``/``Fraction``/``range`` as they are, dict
    views, deques and other iterables rebuilt from plain items; anything else opaque."""
    scalar = numpy_scalar(value, kind)
    if scalar is not None:
        return scalar
    if kind is _DECIMAL or kind is range or (kind is _FRACTION and fraction_intact()):
        return value
    if kind is bytearray:
        return bytearray(value)
    if kind is _KEYS:
        return dict.fromkeys(plain(k, depth + 1) for k in value).keys()
    if kind is _ITEMS:
        return {plain(k, depth + 1): plain(v, depth + 1) for k, v in value}.items()
    if kind is _VALUES:
        return dict(enumerate(plain(v, depth + 1) for v in value)).values()
    if kind is _DEQUE:
        return _DEQUE((plain(item, depth + 1) for item in value), value.maxlen)
    if hasattr(kind, "__iter__"):
        return _plain_items(value, depth)
    return Opaque(kind.__qualname__)


def _plain_items(value: Any, depth: int) -> Iterator[object]:
    """A generator, an iterator or another iterable, still lazy, yielding plain items: ``list()``,
    ``sorted()`` and ``next()`` work as on the original, and equality is never the candidate's."""
    for item in value:
        yield plain(item, depth + 1)
