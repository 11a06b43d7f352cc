"""Judging on the host: compare decoded values and program output with expectations.

Values arrive tagged by exact type and are rebuilt from builtins only (``_worker/codec.py``), so
comparing them never runs candidate code.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from fractions import Fraction

FLOAT_RTOL = 1e-7
"""Relative tolerance for float comparison (evalplus uses numpy's default, 1e-7)."""
DEFAULT_FLOAT_ATOL = 1e-6
"""Absolute tolerance applied when the expected value holds floats and no tolerance was given."""


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
        kinds = set(map(type, value))  # at C speed: HumanEval+'s expected values are mostly flat lists
        if kinds <= NOT_FLOAT:
            return False
        return float in kinds or any(holds_float(v) for v in value)
    return False


NOT_FLOAT = frozenset({int, str, bool, type(None)})
"""Types that are no float and hold none (and decode to themselves: a value of one needs no decoding)."""


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
