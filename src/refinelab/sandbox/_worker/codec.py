"""Value encoding, run in the child: exact builtin types only.

An object that overrides ``__eq__`` cannot pass for the expected value, because what crosses to the host
is data rebuilt from exact builtins; subclasses of builtins are converted to their base type without
calling their overridden methods.
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
    return Opaque(kind.__qualname__)
