"""Python source for argument values, safe for any size of integer."""

from __future__ import annotations

import math
import re
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


_LONG_DIGITS = re.compile(r"[0-9]{3000}")
"""A run of digits as long as an integer's that :func:`to_source` writes in hex (10,000 bits: 3,011 digits)."""


def call_source_of_json(args: list[object], text: str) -> str:
    """:func:`call_source` of arguments JSON gives, written from ``text``, their JSON, at C speed where it
    can be: ``repr`` writes JSON's values as :func:`to_source` does (lists, dicts, strings, finite floats,
    integers below 10,000 bits, booleans, None), and the text shows where one may not be (a non-finite float,
    a run of 3,000 digits; a string holding those words or digits only takes the slower way)."""
    if "Infinity" in text or "NaN" in text or _LONG_DIGITS.search(text):
        return call_source(args)
    return f"candidate({repr(args)[1:-1]})"
