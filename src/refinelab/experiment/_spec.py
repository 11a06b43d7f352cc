"""The experiment spec: which benchmarks, strategies, actor and critic models, repeats; validated.

Written as TOML (``refinelab run SPEC.toml``) or built from command-line flags. Unknown keys are
errors that name the file, the line and the field. The run id is a hash of what determines results,
so running the same spec again resumes the same run. Where things run does not determine results:
the servers' addresses (``base_url``), concurrency and worker counts are left out, so a run moved to
another port or host resumes; what a model string stands for (an alias) and its ``deployment`` tag
are in.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from functools import cached_property
from typing import Any, TypeVar

from refinelab.models import (
    EndpointSettings,
    ModelsConfig,
    Price,
    local_identity,
)
from refinelab.problems import Provenance
from refinelab.records import configuration_label
from refinelab.runtime import SandboxChoice, choose_sandbox
from refinelab.store import StoredConfiguration
from refinelab.strategies import Budget, Efforts, StrategySpec

SAME = "same"
"""In ``critics``: the actor critiques itself."""
_FROM_BENCHMARKS = SandboxChoice()
"""The marker default of :attr:`ExperimentSpec.sandbox` (this very object): chosen from the benchmarks."""


@dataclass(frozen=True)
class BenchmarkChoice:
    """One benchmark and which of its problems to run."""

    name: str
    """Registered benchmark name."""
    data: str | None = None
    """Benchmark file (instead of the benchmark's default source)."""
    problems: tuple[str, ...] = ()
    """Only these task ids (empty: all)."""
    after: str | None = None
    """Only problems published on or after this date (``YYYY-MM-DD``; LiveCodeBench's ``contest_date``),
    to stay past a model's training cut-off."""
    before: str | None = None
    """Only problems published before this date (``YYYY-MM-DD``), with ``after`` a date window."""
    release: str | None = None
    """The release as upstream spells it (``release_v5``, ``v5``, ``v4_v5``; APPS ``interview``; MBPP
    ``test``); None: the benchmark's default."""
    sample: int | None = None
    """A seeded random subset of this many problems (after ``problems`` and ``after``), keeping the
    difficulty mix when the problems have a difficulty."""
    seed: int = 0
    """Seed of that subset."""
    limit: int | None = None
    """At most this many problems (the first ones, after ``problems`` and ``sample``)."""
    source: Provenance | None = None
    """What the problems were read from (source, revision, every file's hash), filled in when the run
    resolves its benchmarks; part of the run id, so other bytes make another run."""


@dataclass(frozen=True)
class Configuration:
    """One strategy with one actor and (for critic strategies) one critic."""

    strategy: StrategySpec
    """The strategy and its arguments."""
    actor: str
    """Actor model string."""
    critic: str | None
    """Critic model string (``None`` when the strategy has no critic); equal to ``actor`` for self-critique."""
    effort: str | None = None
    """The actor's reasoning effort (``None``: the model's default); it also goes to test-writing calls."""
    critic_effort: str | None = None
    """The critic's reasoning effort (``None`` without a critic, or the model's default)."""

    @property
    def efforts(self) -> Efforts:
        """Each role's effort, as the strategy's :class:`Env` asks for it."""
        return Efforts(self.effort, self.critic_effort)

    @property
    def key(self) -> str:
        """A stable short id: the strategy's arguments as written, the models, the content of its prompt file
        when it has one, and its efforts when it has any (a configuration without a prompt file or an effort
        keeps the key it always had)."""
        fields: list[object] = [self.strategy.name, _plain(self.strategy.params), self.actor, self.critic]
        digest = self.strategy.bind().prompts_digest
        if digest is not None:
            fields.append(digest)
        if self.effort is not None or self.critic_effort is not None:
            fields.append({"effort": self.effort, "critic_effort": self.critic_effort})
        return hashlib.sha256(json.dumps(fields).encode()).hexdigest()[:10]

    @property
    def label(self) -> str:
        """``strategy(args) · actor / critic``, then ``· effort LEVEL`` when it has one."""
        return configuration_label(str(self.strategy), self.actor, self.critic, self.effort, self.critic_effort)

    def stored(self) -> StoredConfiguration:
        """This configuration as its run stores it."""
        strategy = self.strategy
        return StoredConfiguration(
            key=self.key, strategy=strategy.name, params=strategy.arguments, actor=self.actor, critic=self.critic,
            effort=self.effort, critic_effort=self.critic_effort,
        )  # fmt: skip


@dataclass(frozen=True)
class ExperimentSpec:
    """Everything a run needs to know; see docs/experiments.md for the TOML form."""

    benchmarks: tuple[BenchmarkChoice, ...]
    """What to solve."""
    strategies: tuple[StrategySpec, ...]
    """How."""
    actors: tuple[str, ...]
    """Actor models."""
    critics: tuple[str, ...] = (SAME,)
    """Critic models for critic strategies (``same``: the actor itself)."""
    repeats: int = 1
    """Independent repetitions of each problem x configuration."""
    name: str = "experiment"
    """A label; part of the run id."""
    base_url: str | tuple[str, ...] | None = None
    """OpenAI-compatible server for the actors whose own ``[models.endpoints]`` entry names none (over the
    provider's default); several URLs for replicas of the model. See ``_endpoints.py``."""
    critic_base_url: str | tuple[str, ...] | None = None
    """Server(s) for the critics that are not also actors and whose own entry names none (default:
    ``base_url``)."""
    concurrency: int = 8
    """Problems in flight at once (model calls are also capped per endpoint). Does not change results."""
    budget: Budget = field(default_factory=Budget)
    """Limits per problem."""
    sandbox: SandboxChoice = _FROM_BENCHMARKS
    """How code runs. Left out, what :func:`~refinelab.runtime.choose_sandbox` gives the benchmarks (their
    graders' time rules: LiveCodeBench's 6 s, evalplus's rule for HumanEval+ and MBPP+), as for a run from
    flags or a spec file."""
    models: ModelsConfig = field(default_factory=ModelsConfig)
    """Aliases, endpoints, deployment tags and prices: the spec's own ``[models]`` table over the
    project's ``refinelab.toml`` (the CLI merges them)."""
    reasoning_effort: tuple[str, ...] = ()
    """Reasoning efforts to cross with every strategy, actor and critic (``low``, ``high``, ``none``, or a
    thinking-token budget such as ``2048``); empty: the models' defaults, as before efforts existed."""

    def __post_init__(self) -> None:
        if self.sandbox is _FROM_BENCHMARKS:  # left out: the benchmarks' rules, as every other path chooses
            object.__setattr__(self, "sandbox", choose_sandbox([b.name for b in self.benchmarks]))

    def configurations(self) -> list[Configuration]:
        """Every strategy x actor (x critic, for critic strategies) x reasoning effort, in spec order, without
        duplicates; a strategy written with ``actor=``, ``critic=`` or ``effort=`` runs with that model or
        effort only, and ``critic_effort=`` gives its critic its own effort (else the actor's). Each
        configuration's strategy is bound once (its prompt file read once), however often this is asked."""
        return list(self._configurations)

    @cached_property
    def _configurations(self) -> tuple[Configuration, ...]:
        found: dict[str, Configuration] = {}
        for strategy in self.strategies:
            plain = strategy.without_models()
            for actor in self._actors_for(strategy):
                for critic in self._critics_for(strategy, actor):
                    for effort in self._efforts_for(strategy):
                        critic_effort = _critic_effort(strategy, critic, effort)
                        configuration = Configuration(plain, actor, critic, effort, critic_effort)
                        found.setdefault(configuration.key, configuration)
        return tuple(found.values())

    def _efforts_for(self, strategy: StrategySpec) -> tuple[str | None, ...]:
        if "effort" in strategy.params:
            return (str(strategy.params["effort"]),)
        return self.reasoning_effort or (None,)

    def _actors_for(self, strategy: StrategySpec) -> tuple[str, ...]:
        return (str(strategy.params["actor"]),) if "actor" in strategy.params else self.actors

    def _critics_for(self, strategy: StrategySpec, actor: str) -> list[str | None]:
        if not strategy.uses_critic:
            return [None]
        if "critic" in strategy.params:
            return [str(strategy.params["critic"])]
        return [actor if critic == SAME else critic for critic in self.critics]

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> ExperimentSpec:
        """The spec as :meth:`to_json` stored it with a run: keys missing from older stores take their
        defaults (no benchmarks, strategies or actors when those are missing); strategies are read even if
        no longer registered, and prompt files are not reread."""
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {k: v for k, v in data.items() if k in known}
        values["benchmarks"] = tuple(_benchmark_choice(b) for b in _list(data.get("benchmarks")))
        values["strategies"] = tuple(
            StrategySpec.parse(str(s), registered=False) for s in _list(data.get("strategies"))
        )
        values["actors"] = tuple(str(v) for v in _list(data.get("actors")))
        if "critics" in values:
            values["critics"] = tuple(str(v) for v in _list(values["critics"]))
        if "reasoning_effort" in values:
            values["reasoning_effort"] = tuple(str(v) for v in _list(values["reasoning_effort"]))
        if "budget" in values:
            values["budget"] = _record(Budget, values["budget"])
        # a stored spec keeps the choice it ran with (one stored before specs had a sandbox ran with the defaults)
        values["sandbox"] = _record(SandboxChoice, values["sandbox"]) if "sandbox" in values else SandboxChoice()
        if "models" in values:
            values["models"] = _models_from_json(values["models"])
        for key in ("base_url", "critic_base_url"):
            if isinstance(values.get(key), list):
                values[key] = tuple(values[key])
        return cls(**values)

    def to_json(self) -> dict[str, object]:
        """The spec as plain data (stored with the run). Keys added since runs were first stored are left
        out while unset (benchmark keys) or at their defaults (sandbox settings), so a spec that does not use
        them reads, and hashes, as it always did."""
        data = {f.name: _plain(getattr(self, f.name)) for f in fields(self)}
        for choice in _list(data["benchmarks"]):
            assert isinstance(choice, dict)
            for key in _NEWER_BENCHMARK_KEYS:
                if choice.get(key) is None:
                    del choice[key]
        sandbox = data["sandbox"]
        assert isinstance(sandbox, dict)
        for key, default in _LATER_SANDBOX_DEFAULTS.items():
            if sandbox.get(key) == default:
                sandbox.pop(key)
        if not self.reasoning_effort:  # a spec without efforts reads, and hashes, as before they existed
            data.pop("reasoning_effort")
        models = data["models"]
        assert isinstance(models, dict)
        for settings in dict(models["endpoints"]).values():
            for key in _LATER_ENDPOINT_KEYS:
                if settings.get(key) is None:
                    settings.pop(key, None)
        return data

    @property
    def run_id(self) -> str:
        """A hash of what determines results: not where the servers listen, concurrency or worker counts."""
        data = self.to_json()
        for key in ("concurrency", "base_url", "critic_base_url", "models"):
            data.pop(key)
        sandbox = data["sandbox"]
        assert isinstance(sandbox, dict)
        sandbox.pop("workers")
        sandbox.pop("agreement_timeout", None)
        if any(strategy.agrees for strategy in self.strategies):  # its time changes only their results
            sandbox["agreement_timeout"] = self.sandbox.agreement_timeout
        identities = self.model_identities()
        if identities:
            data["model_identities"] = identities
        digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]
        return f"{_slug(self.name)}-{digest}"

    def model_identities(self) -> dict[str, list[str]]:
        """For each actor and critic written as an alias, tagged with a deployment, naming a local file or
        with profile overrides: the model string it stands for, its deployment tag ("" for none), for a local
        file its hash, and the overrides that change what is sent (``refuses``, ``thinking_budgets``...)."""
        configurations = self.configurations()
        written = {c.actor for c in configurations} | {c.critic for c in configurations if c.critic is not None}
        found = {}
        for name in sorted(written):
            model, tag = self.models.model(name), self.models.settings(name).deployment or ""
            local = local_identity(model)  # a local file's hash: another file at that path is another model
            overrides = _overrides(self.models.settings(name))
            if model != name or tag or local or overrides:
                found[name] = [model, tag, *([local] if local else []), *([overrides] if overrides else [])]
        return found


def _overrides(settings: EndpointSettings) -> str | None:
    """The profile overrides an endpoint sets, as text (``None``: none): they change what is sent, so they
    are part of the run id, as they are of the response cache's key."""
    given = {f.name: getattr(settings.profile_overrides, f.name) for f in fields(settings.profile_overrides)}
    plain = {name: _plain(value) for name, value in given.items() if value is not None}
    return json.dumps(plain, sort_keys=True) if plain else None


_LATER_ENDPOINT_KEYS = (
    *("profile", "effort_control", "token_limit", "refuses", "thinking_budgets"),
    *("context", "threads", "n_gpu_layers"),  # a local model's options
)
"""``[models.endpoints]`` keys added after runs were first stored: left out of a stored spec while unset."""
_NEWER_BENCHMARK_KEYS = ("before", "release", "source")
"""Benchmark keys added after runs were first stored: left out of the stored spec (and the run id) when unset."""

R = TypeVar("R")


def _critic_effort(strategy: StrategySpec, critic: str | None, effort: str | None) -> str | None:
    """The critic's effort: the strategy's ``critic_effort=``, else the actor's; none without a critic."""
    if critic is None:
        return None
    return str(strategy.params["critic_effort"]) if "critic_effort" in strategy.params else effort


def _benchmark_choice(table: object) -> BenchmarkChoice:
    assert isinstance(table, dict), table
    source = table.get("source")
    choice = _record(BenchmarkChoice, {k: v for k, v in table.items() if k != "source"})
    return replace(choice, source=Provenance.from_json(source)) if isinstance(source, dict) else choice


def _record(kind: type[R], table: object) -> R:
    """A flat dataclass from its stored table (lists back to tuples; unknown keys left out)."""
    assert isinstance(table, dict), table
    known = {f.name for f in fields(kind)}  # type: ignore[arg-type]
    return kind(**{k: tuple(v) if isinstance(v, list) else v for k, v in table.items() if k in known})


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _models_from_json(table: object) -> ModelsConfig:
    assert isinstance(table, dict), table
    endpoints = {}
    for name, settings in dict(table.get("endpoints", {})).items():
        price = settings.get("price")
        settings = {**settings, "price": None if price is None else _record(Price, price)}
        endpoints[str(name)] = _record(EndpointSettings, settings)
    return ModelsConfig(dict(table.get("aliases", {})), endpoints)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text)[:40] or "run"


def _plain(value: object) -> object:
    if isinstance(value, StrategySpec):
        return str(value)
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


_LATER_SANDBOX_DEFAULTS: dict[str, object] = {
    "follow_reference": False,
    "test_details": False,
    "agreement_timeout": 0.1,
}
"""``[sandbox]`` settings added after runs were first stored, at their defaults (see ``to_json``)."""
