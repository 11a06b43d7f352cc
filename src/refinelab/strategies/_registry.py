"""Strategies registered by name, so a run records exactly what ran: ``name(key=value, ...)``."""

from __future__ import annotations

import ast
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from refinelab._errors import UserError

StrategyFunction = Callable[..., Awaitable[Any]]
F = TypeVar("F", bound=StrategyFunction)

STRATEGIES: dict[str, StrategyFunction] = {}


def strategy(name: str) -> Callable[[F], F]:
    """Register a strategy function under ``name``."""

    def register(function: F) -> F:
        STRATEGIES[name] = function
        return function

    return register


@dataclass(frozen=True)
class StrategySpec:
    """A strategy and its arguments, as written in a config or on the command line."""

    name: str
    """Registered name."""
    params: dict[str, object] = field(default_factory=dict)
    """Keyword arguments."""

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.name}({args})" if args else self.name

    @classmethod
    def parse(cls, text: str) -> StrategySpec:
        """``exec-refine(max_iters=3, feedback_format=diff)``: values are Python literals or bare words."""
        name, _, rest = text.strip().partition("(")
        name = name.strip()
        if name not in STRATEGIES:
            raise UserError(f"unknown strategy {name!r}; choose one of: {', '.join(sorted(STRATEGIES))}")
        if not rest:
            return cls(name)
        if not rest.endswith(")"):
            raise UserError(f"strategy {text!r}: missing ')'")
        return cls(name, dict(_argument(part, text) for part in _split(rest[:-1])))


def _split(body: str) -> list[str]:
    return [part.strip() for part in body.split(",") if part.strip()]


def _argument(part: str, text: str) -> tuple[str, object]:
    key, equals, value = part.partition("=")
    if not equals or not key.strip().isidentifier():
        raise UserError(f"strategy {text!r}: expected key=value, got {part!r}")
    try:
        return key.strip(), ast.literal_eval(value.strip())
    except (ValueError, SyntaxError):
        return key.strip(), value.strip()
