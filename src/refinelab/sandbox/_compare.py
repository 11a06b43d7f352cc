"""Judging on the host: decode values the sandbox reported and compare them with expectations.

Values arrive tagged by exact type (see ``_worker.encode``) and are rebuilt here from builtins only,
so comparing them never runs candidate code.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from fractions import Fraction

FLOAT_RTOL = 1e-7
"""Relative tolerance for float comparison (evalplus uses numpy's default, 1e-7)."""
DEFAULT_FLOAT_ATOL = 1e-6
"""Absolute tolerance applied when the expected value holds floats and no tolerance was given."""


class Opaque:
    """A value of a non-builtin type the candidate returned; equal to nothing."""

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


def decode(data: object) -> object:
    """Rebuild a value from the sandbox's tagged JSON encoding."""
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
    if tag in ("M", "Q"):
        return _decode_exact(tag, body)
    if tag == "C" and isinstance(body, list) and len(body) == 2:
        real, imag = decode(body[0]), decode(body[1])
        if isinstance(real, (int, float)) and isinstance(imag, (int, float)):
            return complex(real, imag)
    return Opaque(str(body))


def _decode_exact(tag: str, body: object) -> object:
    """A ``Decimal`` (``M``: its string) or a ``Fraction`` (``Q``: hex numerator and denominator)."""
    try:
        if tag == "M" and isinstance(body, str):
            return Decimal(body)
        if tag == "Q" and isinstance(body, list) and len(body) == 2 and all(isinstance(x, str) for x in body):
            return Fraction(int(body[0], 16), int(body[1], 16))
    except (ArithmeticError, ValueError):
        pass
    return Opaque(f"malformed {tag}")


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
    """Encode a trusted expected value the same way the sandbox encodes results (for storage)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -(2**53) < value < 2**53 else {"I": hex(value)}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"F": repr(value)}
    if isinstance(value, list):
        return [encode_expected(v) for v in value]
    if isinstance(value, dict):
        return {"D": [[encode_expected(k), encode_expected(v)] for k, v in value.items()]}
    tags: dict[type, str] = {tuple: "T", set: "S", frozenset: "Z"}
    for kind, tag in tags.items():
        if isinstance(value, kind):
            return {tag: [encode_expected(v) for v in value]}  # type: ignore[attr-defined]
    if isinstance(value, bytes):
        return {"B": value.hex()}
    if isinstance(value, complex):
        return {"C": [value.real, value.imag]}
    raise TypeError(f"cannot store expected value of type {type(value).__name__}")


def values_match(actual: object, expected: object, atol: float | None = None) -> bool:
    """Equality as the benchmarks' asserts mean it, optionally with a float tolerance.

    ``==`` first (so ``1 == 1.0`` and ``True == 1`` hold, as in the original asserts). With ``atol``
    set, numbers compare within ``atol`` absolute or ``FLOAT_RTOL`` relative difference, element-wise
    in lists and tuples of the same shape (evalplus's rule).
    """
    try:
        if actual == expected:
            return True
    except Exception:  # noqa: BLE001 - comparing exotic decoded values must not crash judging
        return False
    return atol is not None and _close(actual, expected, atol)


def holds_float(value: object) -> bool:
    """True if the value is a float or a list/tuple holding one (evalplus then applies a tolerance)."""
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple)):
        return any(holds_float(v) for v in value)
    return False


def _close(actual: object, expected: object, atol: float) -> bool:
    numbers = (int, float, Decimal, Fraction)
    if isinstance(expected, numbers) and isinstance(actual, numbers) and not isinstance(actual, bool):
        return math.isclose(float(actual), float(expected), rel_tol=FLOAT_RTOL, abs_tol=atol)
    if isinstance(expected, (list, tuple)) and type(actual) is type(expected):
        assert isinstance(actual, (list, tuple))
        return len(actual) == len(expected) and all(_close(a, e, atol) for a, e in zip(actual, expected))
    return False


def outputs_match(actual: str, expected: str, *, float_tolerance: float | None = None) -> bool:
    """Compare program output with expected output the way LiveCodeBench's grader and online judges do.

    Line endings are normalised (``\\r\\n`` -> ``\\n``); whitespace around every line and blank lines
    before and after the output are ignored; a line whose tokens are all numbers also matches when
    they are equal as decimals (``1.0`` and ``1``, ``2  3`` and ``2 3``), never when they differ
    (``0.333`` is not ``0.3333``). If that fails and ``float_tolerance`` is set, the outputs are
    compared token by token, numeric tokens as decimals within that absolute tolerance.
    """
    got, want = _lines(actual), _lines(expected)
    if len(got) == len(want) and all(g == w or _same_numbers(g, w) for g, w in zip(got, want)):
        return True
    if float_tolerance is None:
        return False
    tokens, wanted = actual.split(), expected.split()
    return len(tokens) == len(wanted) and all(_tokens_match(g, w, float_tolerance) for g, w in zip(tokens, wanted))


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").strip().split("\n")]


def _same_numbers(got: str, want: str) -> bool:
    """Both lines are numbers only, equal as decimals."""
    try:
        numbers = [Decimal(token) for token in got.split()]
        wanted = [Decimal(token) for token in want.split()]
    except (InvalidOperation, ValueError):
        return False
    return bool(numbers) and numbers == wanted


def _tokens_match(got: str, want: str, tolerance: float) -> bool:
    if got == want:
        return True
    try:
        return abs(Decimal(got) - Decimal(want)) <= Decimal(str(tolerance))
    except (InvalidOperation, ValueError):
        return False
