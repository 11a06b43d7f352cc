"""Strategies registered by name, so a run records exactly what ran: ``name(key=value, ...)``."""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Awaitable, Callable, Coroutine, Hashable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Concatenate, Literal, ParamSpec, Protocol, cast

from refinelab._validate import problem_with, type_hints
from refinelab.errors import UserError
from refinelab.models import GenerateConfig, checked_effort
from refinelab.problems import Problem
from refinelab.strategies._env import Env
from refinelab.strategies._prompts import Prompts
from refinelab.strategies._trajectory import Trajectory

P = ParamSpec("P")


class Strategy(Protocol[P]):
    """A registered strategy: ``await strategy(problem, env, **arguments)`` returns a :class:`Trajectory`
    that records the arguments it ran with. ``P`` is the strategy function's own keyword parameters."""

    __name__: str

    def __call__(
        self, problem: Problem, env: Env, /, *args: P.args, **kwargs: P.kwargs
    ) -> Coroutine[Any, Any, Trajectory]:
        """Run on one problem."""
        ...


StrategyFunction = Callable[Concatenate[Problem, Env, P], Awaitable[Trajectory]]
"""What ``@strategy`` decorates: ``async def name(problem, env, *, option=default, ...) -> Trajectory``."""

RUNNER_KEYS = ("actor", "critic", "effort", "critic_effort")
"""Spec keys that choose models and their reasoning efforts: the experiment runner builds the :class:`Env` from
them (``effort=`` pins the actor's effort for this strategy, ``critic_effort=`` gives its critic its own)."""
_MODEL_KEYS = ("actor", "critic")
_EFFORT_KEYS = ("effort", "critic_effort")
_SETTINGS = ("temperature", "top_p", "max_tokens", "seed")


BaselineKind = Literal["single", "samples"]
"""What a strategy is the report's reference for: ``single``, one draft with nothing chosen (every
configuration with the same actor is measured as a multiple of it and paired against it); ``samples``,
independent samples (every other configuration with the same actor is compared with it at equal tokens)."""


@dataclass(frozen=True)
class Traits:
    """What the experiment and the report need to know about a strategy, declared where it is registered
    (``@strategy("codet", selects=True, agrees=True)``), so adding a strategy is one place: no list of
    strategy names elsewhere."""

    uses_critic: bool = False
    """It consults a critic model (the runner pairs it with each critic)."""
    selects: bool = False
    """It writes tests and chooses among candidates (the report's generated-test and selection accuracy)."""
    iterates: bool = False
    """It refines its own attempts over rounds (a selecting one that does is compared at equal tokens with
    those that only refine)."""
    agrees: bool | Mapping[str, object] = field(default=False, hash=False)
    """It chooses by dual agreement over generated tests, so the agreement's time limit changes its results
    (part of the run id): ``True`` always, or a mapping of arguments under which it does
    (``{"select": "dual-agreement"}``), read from the arguments it runs with, defaults included."""
    baseline: BaselineKind | None = None
    """The report's reference it is (see :data:`BaselineKind`), if any."""


NO_TRAITS = Traits()
"""The traits of a strategy no longer registered (a stored run's): none."""


@dataclass(frozen=True)
class RegisteredStrategy:
    """Everything the registry knows about one strategy: its name, its function, its :class:`Traits`, and
    the one way its arguments are checked and bound (:meth:`bind`)."""

    name: str
    """The name it is registered and written under."""
    function: Strategy[...]
    """The registered function (it records its arguments on every trajectory)."""
    traits: Traits = NO_TRAITS
    """What it does that the experiment and the report need to know."""

    @property
    def uses_critic(self) -> bool:
        """It consults a critic model (the runner pairs it with each critic)."""
        return self.traits.uses_critic

    def agrees_with(self, given: Mapping[str, object]) -> bool:
        """It chooses by dual agreement when run with the arguments ``given`` (as written; the rest at
        their defaults)."""
        agrees = self.traits.agrees
        if isinstance(agrees, bool):
            return agrees
        recorded = self.recorded(given)
        return all(recorded.get(key) == value for key, value in agrees.items())

    @cached_property
    def signature(self) -> inspect.Signature:
        """The function's signature."""
        return inspect.signature(self.function)

    def recorded(self, given: Mapping[str, object]) -> dict[str, object]:
        """Every keyword parameter with the value it runs with, as stored with a trajectory: settings as
        their key, a prompt set as its label (``default`` or ``file#digest``)."""
        return recorded_arguments(self.signature, given)

    def bind(self, params: Mapping[str, object]) -> BoundStrategy:
        """Check every argument as written and bind them (see :meth:`StrategySpec.bind`)."""
        accepted = set(self.signature.parameters) - {"problem", "env"}
        as_config = {k for k in _SETTINGS if k not in accepted} if "config" in accepted else set()
        settings = {k: v for k, v in params.items() if k in as_config}
        kwargs = {k: v for k, v in params.items() if k not in as_config and k not in RUNNER_KEYS}
        unknown = sorted(set(kwargs) - accepted)
        if unknown:
            raise UserError(
                f"strategy {self.name!r} has no parameter {unknown[0]!r} (it takes: {', '.join(sorted(accepted))})"
            )
        self._check_models(params)
        self._check(params, settings, type_hints(GenerateConfig))
        if settings:  # on top of the strategy's own defaults: sampling(temperature=1) keeps its top_p
            kwargs["config"] = replace(_default_config(self.function), **settings)  # type: ignore[arg-type]
        digest = None
        if isinstance(kwargs.get("prompts"), str):
            kwargs["prompts"] = prompts = Prompts.load(str(kwargs["prompts"]))
            digest = prompts.digest
        self._check(params, kwargs, type_hints(cast(Hashable, self.function)))
        return BoundStrategy(self, kwargs, digest)

    def _check_models(self, params: Mapping[str, object]) -> None:
        for key in ("critic", "critic_effort"):
            if key in params and not self.uses_critic:
                raise UserError(f"strategy {self.name!r} asks no critic: {key}={_shown(params[key])} would not be used")
        for key in _MODEL_KEYS:
            if key in params and not (isinstance(params[key], str) and params[key]):
                raise UserError(f"strategy {self.name!r}: {key}={_shown(params[key])}: must be a model string")
        for key in _EFFORT_KEYS:
            if key in params:
                checked_effort(params[key], f"strategy {self.name!r}: {key}")

    def _check(self, params: Mapping[str, object], arguments: dict[str, object], hints: dict[str, Any]) -> None:
        for key, value in arguments.items():
            problem = problem_with(value, hints[key]) if key in hints else None
            if problem is not None:
                raise UserError(f"strategy {self.name!r}: {key}={_shown(params.get(key, value))}: {problem}")


STRATEGIES: dict[str, RegisteredStrategy] = {}
"""Every registered strategy by name."""


def strategy(
    name: str,
    *,
    uses_critic: bool = False,
    selects: bool = False,
    iterates: bool = False,
    agrees: bool | Mapping[str, object] = False,
    baseline: BaselineKind | None = None,
) -> Callable[[StrategyFunction[P]], Strategy[P]]:
    """Register a strategy function under ``name``, with its :class:`Traits` (``uses_critic``: it asks a
    critic model; ``selects``, ``iterates``, ``agrees``, ``baseline``: see :class:`Traits`).

    The registered strategy keeps the function's signature; every trajectory it returns records its
    name and every argument it ran with (defaults included), so a stored result says exactly what ran.
    """
    traits = Traits(uses_critic, selects, iterates, agrees, baseline)

    def register(function: StrategyFunction[P]) -> Strategy[P]:
        signature = inspect.signature(function)

        @functools.wraps(function)
        async def recorded(problem: Problem, env: Env, /, *args: P.args, **kwargs: P.kwargs) -> Trajectory:
            trajectory = await function(problem, env, *args, **kwargs)
            return replace(trajectory, strategy=name, params=recorded_arguments(signature, kwargs))

        STRATEGIES[name] = RegisteredStrategy(name, recorded, traits)
        return recorded

    return register


def strategy_traits(name: str) -> Traits:
    """The traits of the strategy registered as ``name`` (:data:`NO_TRAITS` for one no longer registered,
    as a stored run may name)."""
    registered = STRATEGIES.get(name)
    return NO_TRAITS if registered is None else registered.traits


def recorded_arguments(signature: inspect.Signature, given: Mapping[str, object]) -> dict[str, object]:
    """Every keyword parameter of a strategy with the value it runs with, as stored with a trajectory:
    settings as their key, a prompt set as its label (``default`` or ``file#digest``)."""
    found: dict[str, object] = {}
    for name, parameter in signature.parameters.items():
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            found[name] = _recorded(given.get(name, parameter.default))
    return found


def _recorded(value: object) -> object:
    if isinstance(value, GenerateConfig):
        return value.key()
    if isinstance(value, Prompts):
        return value.label()
    if isinstance(value, tuple):  # as JSON reads it back
        return [_recorded(item) for item in value]
    return value


@dataclass(frozen=True)
class BoundStrategy:
    """A strategy spec checked once: the keyword arguments its function gets, ready to run on any problem."""

    registered: RegisteredStrategy
    """The strategy."""
    arguments: Mapping[str, object]
    """Keyword arguments for the function (settings as a :class:`GenerateConfig`, a prompt file loaded)."""
    prompts_digest: str | None = None
    """Digest of a prompt file's content (``None`` without one): part of the configuration key, so
    editing the file makes a new configuration instead of resuming the old one."""

    @property
    def recorded(self) -> dict[str, object]:
        """The arguments a trajectory of this strategy records."""
        return self.registered.recorded(self.arguments)

    async def run(self, problem: Problem, env: Env) -> Trajectory:
        """Run on one problem."""
        return await self.registered.function(problem, env, **self.arguments)


@dataclass(frozen=True)
class StrategySpec:
    """A strategy and its arguments, as written in a config or on the command line."""

    name: str
    """Registered name."""
    params: dict[str, object] = field(default_factory=dict)
    """Keyword arguments as written (model choices ``actor`` and ``critic`` included)."""

    def __str__(self) -> str:
        return f"{self.name}({self.arguments})" if self.params else self.name

    @property
    def arguments(self) -> str:
        """The arguments as written: ``max_iters=3, feedback_format=diff``."""
        return ", ".join(f"{k}={v}" for k, v in self.params.items())

    @property
    def uses_critic(self) -> bool:
        """The strategy consults a critic model (False for one no longer registered)."""
        return strategy_traits(self.name).uses_critic

    @property
    def agrees(self) -> bool:
        """With these arguments the strategy chooses by dual agreement, so the agreement's time limit changes
        its results (False for one no longer registered)."""
        registered = STRATEGIES.get(self.name)
        return registered is not None and registered.agrees_with(self.params)

    @staticmethod
    def argument(text: str) -> tuple[str, object]:
        """One ``key=value`` (a Python literal, true/false, or a bare word)."""
        return _argument(text, text)

    def bind(self) -> BoundStrategy:
        """Check every argument and bind them, once per spec (a prompt file is read once, however often
        this is asked): model choices (``actor``, ``critic``) are the runner's, sampling settings
        (``temperature``, ``top_p``, ``max_tokens``, ``seed``) become ``config`` unless the strategy
        declares a parameter of that name itself, and ``prompts=FILE.toml`` loads a prompt set (its
        content digest joins the configuration key).

        Every value is checked against the annotation of the parameter it binds to (the strategy
        function's own signature, or :class:`GenerateConfig`'s fields for settings), bounds included
        (``n: Annotated[int, Ge(1)]``): a wrong value is a :class:`UserError` here, before any model call.
        A key the function cannot take (a setting included, when it has no ``config``) is an error, and
        ``critic=`` on a strategy that asks no critic is one too, not silently ignored.
        """
        return self._bound

    @cached_property
    def _bound(self) -> BoundStrategy:
        return STRATEGIES[self.name].bind(self.params)

    def without_models(self) -> StrategySpec:
        """This spec without its model and effort choices (``actor``, ``critic``, ``effort``,
        ``critic_effort``), sharing its binding: they are the runner's, never the strategy function's, so the
        bound arguments (and a loaded prompt file) stay."""
        plain = StrategySpec(self.name, {k: v for k, v in self.params.items() if k not in RUNNER_KEYS})
        plain.__dict__["_bound"] = self.bind()  # the cached_property's slot: bound once, not again
        return plain

    async def run(self, problem: Problem, env: Env) -> Trajectory:
        """Run this strategy with its arguments (bound once per spec) on one problem."""
        return await self.bind().run(problem, env)

    @classmethod
    def parse(cls, text: str, *, registered: bool = True) -> StrategySpec:
        """``exec-refine(max_iters=3, feedback_format=diff)``: values are Python literals or bare words.

        ``registered=False`` also reads names no longer registered (a stored run's spec)."""
        name, _, rest = text.strip().partition("(")
        name = name.strip()
        if registered and name not in STRATEGIES:
            raise UserError(f"unknown strategy {name!r}; choose one of: {', '.join(sorted(STRATEGIES))}")
        if not rest:
            return cls(name)
        if not rest.endswith(")"):
            raise UserError(f"strategy {text!r}: missing ')'")
        return cls(name, dict(_argument(part, text) for part in _split(rest[:-1])))


def _default_config(function: object) -> GenerateConfig:
    """The strategy's own default ``config`` (a plain :class:`GenerateConfig` when it declares none)."""
    default = inspect.signature(cast(Callable[..., object], function)).parameters["config"].default
    return default if isinstance(default, GenerateConfig) else GenerateConfig()


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
