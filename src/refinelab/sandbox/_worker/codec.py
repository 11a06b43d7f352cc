"""The value codec, both sides: values as JSON-safe data tagged by exact builtin type.

The child encodes what a test's expression returned (:func:`encode`) and rebuilds what tests see from
exact builtins (:func:`plain`); the host decodes (:func:`decode`) and encodes trusted expected values
the same way for storage (:func:`encode_expected`). An object that overrides ``__eq__`` cannot pass for
the expected value, because what crosses to the host is data rebuilt from exact builtins; subclasses of
builtins are converted to their base type without calling their overridden methods, and decoding builds
builtins only, so it never runs candidate code.

Tags (a one-key object): ``I`` an integer beyond 2**53 (hex), ``F`` a non-finite float (repr), ``T``
tuple, ``S`` set, ``Z`` frozenset, ``D`` dict (a list of pairs), ``B`` bytes (hex), ``C`` complex,
``O`` a value of another type (its type's name). This module imports only the standard library: the
worker runs it inside the sandbox.
"""

from __future__ import annotations

from typing import Any


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
    return {"O": kind.__qualname__}


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


class StandIn:
    """Stands in, inside the child, for a value of a non-builtin type; equal to nothing but itself."""

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
        return StandIn("<too deep>")
    if kind in (tuple, set, frozenset):
        return kind(plain(item, depth + 1) for item in value)
    if kind is dict:
        return {plain(k, depth + 1): plain(v, depth + 1) for k, v in value.items()}
    base = _builtin_base(value)
    if base is not None:
        return plain(base, depth)
    return StandIn(kind.__qualname__)


class Opaque:
    """A decoded value of a non-builtin type the candidate returned (host side); equal to nothing."""

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


def decode(data: object) -> object:
    """Rebuild a value from its tagged encoding (host side), from builtins only."""
    if isinstance(data, list):
        return [decode(item) for item in data]
    if not isinstance(data, dict) or len(data) != 1:
        return data
    ((tag, body),) = data.items()
    if tag in ("T", "S", "Z", "D") and isinstance(body, list):
        return _decode_container(tag, body)
    if tag == "I" and isinstance(body, str):
        return int(body, 16)
    if tag == "F" and isinstance(body, str):
        return float(body)
    if tag == "B" and isinstance(body, str):
        return bytes.fromhex(body)
    if tag == "C" and isinstance(body, list) and len(body) == 2:
        real, imag = decode(body[0]), decode(body[1])
        if isinstance(real, (int, float)) and isinstance(imag, (int, float)):
            return complex(real, imag)
    return Opaque(str(body))


def _decode_container(tag: str, body: list[object]) -> object:
    if tag == "D":
        pairs = [pair for pair in body if isinstance(pair, list) and len(pair) == 2]
        return {_hashable(decode(k)): decode(v) for k, v in pairs}
    items = [decode(item) for item in body]
    if tag == "T":
        return tuple(items)
    hashable = [_hashable(item) for item in items]
    return set(hashable) if tag == "S" else frozenset(hashable)


def _hashable(value: object) -> object:
    return value if value.__hash__ is not None else Opaque(type(value).__name__)


def encode_expected(value: object) -> object:
    """Encode a trusted expected value as the child encodes results (host side, for storage).

    Raises:
        TypeError: the value holds something other than builtins (it could not be compared).
    """
    encoded = encode(value)
    if _holds_opaque(encoded):
        raise TypeError(f"cannot store expected value of type {type(value).__name__}")
    return encoded


def _holds_opaque(data: object) -> bool:
    if isinstance(data, list):
        return any(_holds_opaque(item) for item in data)
    if not isinstance(data, dict):
        return False
    ((tag, body),) = data.items()
    return tag == "O" or _holds_opaque(body)
