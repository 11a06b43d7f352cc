"""Python source for argument values, safe for any size of integer."""

from __future__ import annotations

import math
from typing import cast


def to_source(value: object) -> str:
    """A Python expression that evaluates to ``value`` (builtins only).

    Unlike ``repr``, integers too long for decimal conversion become hex literals, and non-finite
    floats become ``float('inf')`` / ``float('nan')``.
    """
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return repr(value) if value.bit_length() < 10_000 else hex(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({repr(value)!r})"
    if isinstance(value, list):
        flat = _flat_source(value) if type(value) is list else None
        return flat if flat is not None else "[" + ", ".join(map(to_source, value)) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(map(to_source, value))
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{to_source(k)}: {to_source(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (set, frozenset)):
        body = "[" + ", ".join(map(to_source, value)) + "]"
        return f"{type(value).__name__}({body})"
    return repr(value)


_WORDS = frozenset({str, bool, type(None)})


def _flat_source(value: list[object]) -> str | None:
    """``repr(value)`` where that is what :func:`to_source` would write item by item (a list of strings,
    booleans and None; of integers repr can print; of finite floats), checked at C speed; else None."""
    kinds = set(map(type, value))
    if kinds <= _WORDS:
        return repr(value)
    numbers = cast("list[float]", value)
    if kinds == {int}:
        return repr(value) if max(map(abs, cast("list[int]", value))).bit_length() < 10_000 else None
    if kinds == {float}:
        return repr(value) if all(map(math.isfinite, numbers)) else None
    return None


def call_source(args: list[object]) -> str:
    """``candidate(arg, ...)`` for a list of argument values."""
    return f"candidate({', '.join(map(to_source, args))})"
