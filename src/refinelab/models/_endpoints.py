"""Where each model role's requests go, decided in one place: the most specific setting wins.

A role (an experiment's actor or critic, ``recall-draft``'s judge, ``solve``'s model) names a model
string; :func:`choose_endpoint` takes the settings that may say where it is served, most specific first:

1. the settings ``over`` the model's own entry: what the user typed for this run (``--base-url``,
   ``--critic-base-url``, ``solve(base_url=...)``);
2. the model's own ``[models.endpoints."MODEL"]`` entry (a spec's ``[models]`` table over
   ``refinelab.toml``'s): it names this model, so it beats a key that names none;
3. the settings ``under`` it: a spec's top-level ``base_url`` / ``critic_base_url``, which apply to every
   model of a role;
4. the provider's default address (``vllm:`` on ``localhost:8000``...).

A ``local:`` model runs in this process: the keys ``under`` do not apply to it (a flag ``over`` it is an
error when the model is opened).

The answer, a :class:`RoleEndpoint`, says which setting won, so a run can record and report it
(docs/experiments.md, "Where each model is served").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from refinelab.models._backends import backend_kind
from refinelab.models._resolve import PROVIDERS, ModelsConfig, base_urls

Role = Literal["actor", "critic", "judge"]
"""A model's part: an experiment's actor or critic, ``recall-draft``'s judge (``solve``'s model is an actor)."""

IN_PROCESS = "in this process"
"""How a ``local:`` model's place is named: it has no server."""


@dataclass(frozen=True)
class EndpointSetting:
    """One setting that may say where a role's model is served."""

    urls: str | Sequence[str] | None
    """Its base URL, or several (replicas); ``None``: this setting says nothing."""
    name: str
    """How a report names it (``--base-url``, ``base_url in the spec``)."""


@dataclass(frozen=True)
class RoleEndpoint:
    """Where one role's model is served, and which setting said so."""

    role: Role
    """The role."""
    model: str
    """The model string as written (an alias stays an alias)."""
    urls: tuple[str, ...]
    """The base URL(s) its requests go to; empty for a model run in this process, or when nothing names one
    (opening the model then says what to give)."""
    chosen_by: str
    """The setting that won: one of :class:`EndpointSetting`'s names, ``its [models.endpoints] entry``,
    ``vllm's default`` (a provider's), or ``in this process``."""
    given: bool = False
    """The URLs came from a setting the model layer does not read itself (a flag or a spec key): they are
    handed to :func:`~refinelab.models.open_model` as its ``base_url``."""

    @property
    def base_url(self) -> tuple[str, ...] | None:
        """What to hand :func:`~refinelab.models.open_model`: the URLs when :attr:`given`, else ``None`` (the
        model's own entry or its provider's default, which it applies itself, with the API key check)."""
        return self.urls if self.given else None

    @property
    def address(self) -> str:
        """The place in words: the URL(s) as the backend names them, or ``in this process``."""
        return endpoint_text(self.urls) if self.urls else IN_PROCESS if self.chosen_by == IN_PROCESS else "none"

    def to_json(self) -> dict[str, object]:
        """As stored with a run."""
        return {"role": self.role, "model": self.model, "urls": list(self.urls), "chosen_by": self.chosen_by}


def endpoint_text(urls: Sequence[str]) -> str:
    """Base URLs as a backend names its endpoint (``OpenAIBackend.endpoint``; replicas joined by ``, ``),
    which is what the response cache records with each reply."""
    return ", ".join(url.rstrip("/") for url in urls)


def choose_endpoint(
    role: Role,
    model: str,
    config: ModelsConfig,
    *,
    over: Sequence[EndpointSetting] = (),
    under: Sequence[EndpointSetting] = (),
) -> RoleEndpoint:
    """Where ``model`` is served in ``role``: the first of ``over`` that names a URL, else the model's own
    ``[models.endpoints]`` entry in ``config``, else the first of ``under``, else its provider's default
    (see the module docstring)."""
    for setting in over:
        if setting.urls:
            return RoleEndpoint(role, model, base_urls(setting.urls), setting.name, given=True)
    own = base_urls(config.settings(model).base_url)
    if own:
        return RoleEndpoint(role, model, own, "its [models.endpoints] entry")
    text = config.model(model)
    if backend_kind(text).in_process:  # a key naming no model does not apply to one that has no server
        return RoleEndpoint(role, model, (), IN_PROCESS)
    for setting in under:
        if setting.urls:
            return RoleEndpoint(role, model, base_urls(setting.urls), setting.name, given=True)
    provider, _, name = text.partition(":")
    if name and provider in PROVIDERS:
        return RoleEndpoint(role, model, (PROVIDERS[provider].base_url,), f"{provider}'s default")
    return RoleEndpoint(role, model, (), "nothing")
