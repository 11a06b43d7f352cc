"""Strategies registered by name, so a run records exactly what ran: ``name(key=value, ...)``."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from refinelab._validate import problem_with, type_hints
from refinelab.errors import UserError
from refinelab.models import GenerateConfig
from refinelab.problems import Problem
from refinelab.strategies._env import Env
from refinelab.strategies._prompts import Prompts
from refinelab.strategies._trajectory import Trajectory

StrategyFunction = Callable[..., Awaitable[Any]]
F = TypeVar("F", bound=StrategyFunction)

STRATEGIES: dict[str, StrategyFunction] = {}
CRITIC_STRATEGIES: set[str] = set()
"""Strategies that consult a critic (the runner pairs them with each critic model)."""
RUNNER_KEYS = ("actor", "critic")
"""Spec keys that choose models: the experiment runner builds the :class:`Env` from them."""
_SETTINGS = ("temperature", "top_p", "max_tokens", "seed")


def strategy(name: str, *, uses_critic: bool = False) -> Callable[[F], F]:
    """Register a strategy function under ``name`` (``uses_critic``: it asks a critic model)."""

    def register(function: F) -> F:
        STRATEGIES[name] = function
        if uses_critic:
            CRITIC_STRATEGIES.add(name)
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
        return f"{self.name}({self.arguments})" if self.params else self.name

    @property
    def arguments(self) -> str:
        """The arguments as written: ``max_iters=3, feedback_format=diff``."""
        return ", ".join(f"{k}={v}" for k, v in self.params.items())

    @staticmethod
    def argument(text: str) -> tuple[str, object]:
        """One ``key=value`` (a Python literal, true/false, or a bare word)."""
        return _argument(text, text)

    def kwargs(self) -> dict[str, object]:
        """The strategy function's keyword arguments, checked: model choices (``actor``, ``critic``) are the
        runner's, sampling settings (``temperature``, ``top_p``, ``max_tokens``, ``seed``) become ``config``,
        and ``prompts=FILE.toml`` loads a prompt set.

        Every value is checked against the annotation of the parameter it binds to (the strategy
        function's own signature, or :class:`GenerateConfig`'s fields for settings), bounds included
        (``n: Annotated[int, Ge(1)]``): a wrong value is a :class:`UserError` here, before any model call.
        """
        function = STRATEGIES[self.name]
        accepted = set(inspect.signature(function).parameters) - {"problem", "env"}
        settings = {k: v for k, v in self.params.items() if k in _SETTINGS}
        kwargs = {k: v for k, v in self.params.items() if k not in _SETTINGS and k not in RUNNER_KEYS}
        unknown = sorted(set(kwargs) - accepted)
        if unknown:
            raise UserError(
                f"strategy {self.name!r} has no parameter {unknown[0]!r} (it takes: {', '.join(sorted(accepted))})"
            )
        self._check(settings, type_hints(GenerateConfig))
        if settings:
            kwargs["config"] = GenerateConfig(**settings)  # type: ignore[arg-type]
        if isinstance(kwargs.get("prompts"), str):
            kwargs["prompts"] = Prompts.load(str(kwargs["prompts"]))
        self._check(kwargs, type_hints(function))
        return kwargs

    def _check(self, arguments: dict[str, object], hints: dict[str, Any]) -> None:
        for key, value in arguments.items():
            problem = problem_with(value, hints[key]) if key in hints else None
            if problem is not None:
                raise UserError(f"strategy {self.name!r}: {key}={_shown(self.params.get(key, value))}: {problem}")

    async def run(self, problem: Problem, env: Env) -> Trajectory:
        """Run this strategy with its arguments on one problem."""
        result = await STRATEGIES[self.name](problem, env, **self.kwargs())
        assert isinstance(result, Trajectory)
        return result

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


def _shown(value: object) -> str:
    return value if isinstance(value, str) else repr(value)


def _split(body: str) -> list[str]:
    """Split on the commas outside brackets: ``a=1, schedule=(0.2, 0.8)`` is two arguments."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(body):
        depth += (char in "([{") - (char in ")]}")
        if char == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return [part.strip() for part in parts if part.strip()]


def _argument(part: str, text: str) -> tuple[str, object]:
    key, equals, value = part.partition("=")
    if not equals or not key.strip().isidentifier():
        raise UserError(f"strategy {text!r}: expected key=value, got {part!r}")
    word = value.strip()
    if word.lower() in ("true", "false"):  # TOML and shell spelling of booleans
        return key.strip(), word.lower() == "true"
    try:
        return key.strip(), ast.literal_eval(word)
    except (ValueError, SyntaxError):
        return key.strip(), word
