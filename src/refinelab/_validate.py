"""Checking a value against a type annotation, constraints included: the one place where user-given
arguments (strategy arguments, sampling settings, budgets) meet the types their functions declare.

Constraints are written where the argument is declared, with the ``annotated-types`` vocabulary that
pydantic also reads: ``n: Annotated[int, Ge(1)] = 8``. Adding a strategy or a setting therefore needs
no separate validation table. Supported: ``bool``, ``int`` (not ``bool``), ``float`` (an ``int`` too),
``str``, ``Literal[...]``, fixed-length tuples (``tuple[float, float]``), unions (``X | None``), any
other class by ``isinstance``; and the bounds ``Ge``, ``Gt``, ``Le``, ``Lt`` (and ``Interval``, which
groups them).
"""

from __future__ import annotations

import functools
import math
import types
import typing
from collections.abc import Iterator
from typing import Any

import annotated_types

_BOUNDS: tuple[tuple[type[Any], str, str], ...] = (
    (annotated_types.Ge, "ge", "at least"),
    (annotated_types.Gt, "gt", "greater than"),
    (annotated_types.Le, "le", "at most"),
    (annotated_types.Lt, "lt", "less than"),
)
_NAMES = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def is_seconds(value: float) -> bool:
    """Whether ``value`` is a time limit: a positive, finite number (``nan`` and ``inf`` are not; the
    sandbox turns a limit into whole microseconds)."""
    return value > 0 and math.isfinite(value)


@functools.cache
def type_hints(owner: Any) -> dict[str, Any]:
    """The resolved annotations of a function or class, ``Annotated`` metadata kept."""
    return typing.get_type_hints(owner, include_extras=True)


def problem_with(value: object, hint: Any) -> str | None:
    """What is wrong with ``value`` for an argument annotated ``hint`` (``None``: nothing)."""
    if _is_union(hint):
        arms = [arm for arm in typing.get_args(hint) if _is_instance(value, _unwrap(arm)[0])]
        return problem_with(value, arms[0]) if arms else f"must be {_describe(hint)}"
    base, constraints = _unwrap(hint)
    if not _is_instance(value, base):
        return f"must be {_describe(base)}"
    for constraint in _flatten(constraints):
        for kind, attribute, words in _BOUNDS:
            if isinstance(constraint, kind) and not _holds(value, attribute, getattr(constraint, attribute)):
                return f"must be {words} {getattr(constraint, attribute)}"
    return None


def _unwrap(hint: Any) -> tuple[Any, tuple[object, ...]]:
    if typing.get_origin(hint) is typing.Annotated:
        base, *metadata = typing.get_args(hint)
        return base, tuple(metadata)
    return hint, ()


def _flatten(constraints: tuple[object, ...]) -> Iterator[object]:
    for constraint in constraints:
        if isinstance(constraint, annotated_types.GroupedMetadata):
            yield from constraint
        else:
            yield constraint


def _holds(value: object, attribute: str, bound: Any) -> bool:
    checks = {"ge": value >= bound, "gt": value > bound, "le": value <= bound, "lt": value < bound}
    return bool(checks[attribute])


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _is_instance(value: object, hint: Any) -> bool:
    if _is_union(hint):
        return any(_is_instance(value, _unwrap(arm)[0]) for arm in typing.get_args(hint))
    if typing.get_origin(hint) is typing.Literal:
        return value in typing.get_args(hint)
    if typing.get_origin(hint) is tuple:  # fixed-length tuples: ``tuple[float, float]``
        arms = typing.get_args(hint)
        return isinstance(value, tuple) and len(value) == len(arms) and all(map(_is_instance, value, arms))
    if hint is Any or hint is object:
        return True
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(hint, type) and isinstance(value, hint)


def _describe(hint: Any) -> str:
    if _is_union(hint):
        arms = [_describe(_unwrap(arm)[0]) for arm in typing.get_args(hint) if arm is not type(None)]
        return " or ".join(arms) + (" (or omitted)" if type(None) in typing.get_args(hint) else "")
    if typing.get_origin(hint) is typing.Literal:
        return "one of " + ", ".join(str(v) for v in typing.get_args(hint))
    if typing.get_origin(hint) is tuple:
        return "(" + ", ".join(_describe(arm) for arm in typing.get_args(hint)) + ")"
    return _NAMES.get(hint, f"a {getattr(hint, '__name__', hint)}")
