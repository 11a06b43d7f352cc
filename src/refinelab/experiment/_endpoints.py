"""Where a run's model roles are served, and which run an invocation works on when that has changed.

Each model string of a run is served from one place (:func:`run_endpoints`, over
:func:`refinelab.models.choose_endpoint`, the most specific setting winning):

* an actor: ``--base-url``, else its own ``[models.endpoints]`` entry, else the spec's ``base_url``, else
  its provider's default;
* a critic that is not also an actor of the run: ``--critic-base-url``, else its own entry, else the
  spec's ``critic_base_url``, else ``--base-url``, else the spec's ``base_url``, else its provider's
  default;
* a critic that is also an actor (self-critique, ``critics = ["same"]``) goes where that actor goes.

Addresses are not part of the run id (a server moved to another port serves the same model), so a run
records where each role was served (``RunHeader.endpoints``), and :func:`choose_run` compares that with
where the roles are served now before anything is asked. When a role moved, the run stops and says so,
unless told what the move means: ``moved`` (the same model at another address: resume, keeping the
stored units and the cached replies) or ``fresh`` (another model answered before: a new run, whose
moved roles take no cached reply that another server gave). See docs/experiments.md.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Literal

from refinelab.errors import UserError
from refinelab.experiment._spec import ExperimentSpec
from refinelab.models import EndpointSetting, RoleEndpoint, choose_endpoint
from refinelab.sandbox import Sandbox
from refinelab.store import EndpointUse, RunInfo, Store

EndpointChange = Literal["stop", "moved", "fresh"]
"""What to do when a run's recorded endpoint for a role differs from the one resolved now: ``stop`` with a
user error saying so (the default), resume as ``moved`` (the same model at another address), or start a
``fresh`` run."""


@dataclass(frozen=True)
class RunOptions:
    """How one invocation of a run reaches its models and its sandbox (none of it is part of the run id)."""

    base_url: str | tuple[str, ...] | None = None
    """Server(s) for the actors, over their own ``[models.endpoints]`` entries (``--base-url``)."""
    critic_base_url: str | tuple[str, ...] | None = None
    """Server(s) for the critics that are not also actors, over their own entries (``--critic-base-url``)."""
    endpoint_change: EndpointChange = "stop"
    """What to do when a role's endpoint differs from the one the run recorded (see :data:`EndpointChange`)."""
    sandbox: Sandbox | None = None
    """A sandbox the caller built and opened: the run's programs run there instead of in one built from the
    settings (see :func:`refinelab.runtime.open_runtime`); the caller stops it."""


def run_endpoints(spec: ExperimentSpec, options: RunOptions) -> tuple[RoleEndpoint, ...]:
    """Where each actor and critic of ``spec`` is served (see the module docstring), in configuration order."""
    actors: dict[str, RoleEndpoint] = {}
    for configuration in spec.configurations():
        actors.setdefault(configuration.actor, _actor(spec, options, configuration.actor))
    found = {("actor", name): endpoint for name, endpoint in actors.items()}
    for configuration in spec.configurations():
        critic = configuration.critic
        if critic is None or ("critic", critic) in found:
            continue
        if critic in actors:  # the actor itself (or another actor of the run): one model, one place
            actor = actors[critic]
            found["critic", critic] = replace(actor, role="critic", chosen_by=f"as the actor: {actor.chosen_by}")
        else:
            found["critic", critic] = _critic(spec, options, critic)
    return tuple(found.values())


def role_efforts(spec: ExperimentSpec, endpoint: RoleEndpoint) -> set[str | None]:
    """The reasoning efforts ``spec`` asks of the model in ``endpoint``'s role (``None``: its default)."""
    if endpoint.role == "actor":
        return {c.effort for c in spec.configurations() if c.actor == endpoint.model}
    return {c.critic_effort for c in spec.configurations() if c.critic == endpoint.model}


def _actor(spec: ExperimentSpec, options: RunOptions, name: str) -> RoleEndpoint:
    flag = EndpointSetting(options.base_url, "--base-url")
    return choose_endpoint("actor", name, spec.models, over=[flag], under=[_spec_key(spec, "base_url")])


def _critic(spec: ExperimentSpec, options: RunOptions, name: str) -> RoleEndpoint:
    flag = EndpointSetting(options.critic_base_url, "--critic-base-url")
    under = [_spec_key(spec, "critic_base_url"), EndpointSetting(options.base_url, "--base-url")]
    return choose_endpoint("critic", name, spec.models, over=[flag], under=[*under, _spec_key(spec, "base_url")])


def _spec_key(spec: ExperimentSpec, key: Literal["base_url", "critic_base_url"]) -> EndpointSetting:
    return EndpointSetting(getattr(spec, key), f"{key} in the spec")


def legacy_endpoints(store: Store, run: RunInfo) -> tuple[RoleEndpoint, ...]:
    """Where refinelab sent a run's roles before it recorded them (runs stored before migration
    ``m007_run_endpoints``), from its stored spec (which held the ``--base-url`` flags and the project's
    ``[models]`` table) and configurations: the spec's ``base_url`` for every actor, and its
    ``critic_base_url``, else its ``base_url``, for every critic, each over the model's own
    ``[models.endpoints]`` entry."""
    spec = ExperimentSpec.from_json(run.spec)
    rule = "as refinelab then chose it"
    actor = EndpointSetting(spec.base_url, f"base_url, {rule}")
    critic = EndpointSetting(spec.critic_base_url or spec.base_url, f"critic_base_url or base_url, {rule}")
    found: dict[tuple[str, str], RoleEndpoint] = {}
    for configuration in store.configurations(run.id):
        name, other = configuration.actor, configuration.critic
        found.setdefault(("actor", name), choose_endpoint("actor", name, spec.models, over=[actor]))
        if other is not None:
            found.setdefault(("critic", other), choose_endpoint("critic", other, spec.models, over=[critic]))
    return tuple(found.values())


@dataclass(frozen=True)
class ChosenRun:
    """The run an invocation works on, and the endpoints to record for it."""

    run_id: str
    """The run: the spec's id, or a later generation of it (``ID.2``...) started with ``fresh``."""
    endpoints: tuple[EndpointUse, ...]
    """Every endpoint the run has taken, in order (what ``RunHeader.endpoints`` records)."""
    record: bool
    """The endpoints differ from what the store holds for the run (a new run, a move, or a run stored
    before refinelab recorded them): write them."""


def choose_run(
    store: Store | None, spec: ExperimentSpec, now: tuple[RoleEndpoint, ...], change: EndpointChange
) -> ChosenRun:
    """The run to work on: the newest generation of ``spec``'s run in ``store`` (``None``: no store yet),
    unless its recorded endpoints differ from ``now`` (see the module docstring); a :class:`UserError`
    naming the roles that moved and the choice when ``change`` is ``stop``."""
    latest = None if store is None else _latest(store, spec.run_id)
    started = time.time()
    if store is None or latest is None:
        return ChosenRun(spec.run_id, tuple(EndpointUse(endpoint=e, since=started) for e in now), True)
    recorded = list(latest.header.endpoints or _as_used(legacy_endpoints(store, latest), latest.created))
    moved = _moved(recorded, now)
    if not moved or latest.status == "complete":  # nothing moved, or nothing is left to ask
        return ChosenRun(latest.id, tuple(recorded), latest.header.endpoints is None and not moved)
    if change == "stop":
        raise UserError(_moved_message(latest, moved))
    if change == "moved":
        strict = {_key(use.endpoint) for use in recorded if use.fresh}
        added = [EndpointUse(endpoint=e, since=started, fresh=_key(e) in strict) for e, _ in moved]
        return ChosenRun(latest.id, (*recorded, *added), True)
    changed = {_key(e) for e, _ in moved}
    fresh = tuple(EndpointUse(endpoint=e, since=started, fresh=_key(e) in changed) for e in now)
    return ChosenRun(_next_generation(latest.id, spec.run_id), fresh, True)


def cached_from(endpoint: RoleEndpoint, uses: tuple[EndpointUse, ...]) -> frozenset[str] | None:
    """The endpoints whose cached replies ``endpoint``'s role may take: those the run recorded for it when
    it is a fresh run's moved role, else ``None`` (any)."""
    mine = [use for use in uses if _key(use.endpoint) == _key(endpoint)]
    if not any(use.fresh for use in mine):
        return None
    return frozenset({endpoint.address, *(use.endpoint.address for use in mine)})


def _key(endpoint: RoleEndpoint) -> tuple[str, str]:
    return endpoint.role, endpoint.model


def _generations(run_id: str) -> Iterator[str]:
    yield run_id
    number = 2
    while True:
        yield f"{run_id}.{number}"
        number += 1


def _latest(store: Store, run_id: str) -> RunInfo | None:
    """The newest generation of ``run_id`` stored (``run_id``, ``run_id.2``...), or None."""
    known = {run.id: run for run in store.runs()}
    latest = None
    for candidate in _generations(run_id):
        if candidate not in known:
            return latest
        latest = known[candidate]
    return latest  # pragma: no cover - the generations never end


def _next_generation(current: str, run_id: str) -> str:
    number = int(current.rsplit(".", 1)[1]) + 1 if current != run_id else 2
    return f"{run_id}.{number}"


def _as_used(endpoints: tuple[RoleEndpoint, ...], since: float) -> tuple[EndpointUse, ...]:
    return tuple(EndpointUse(endpoint=e, since=since) for e in endpoints)


def _moved(recorded: list[EndpointUse], now: tuple[RoleEndpoint, ...]) -> list[tuple[RoleEndpoint, RoleEndpoint]]:
    """(now, before) for each role whose endpoint differs from the latest the run recorded for it."""
    latest = {_key(use.endpoint): use.endpoint for use in recorded}
    return [(e, latest[_key(e)]) for e in now if _key(e) in latest and latest[_key(e)].urls != e.urls]


def _moved_message(run: RunInfo, moved: list[tuple[RoleEndpoint, RoleEndpoint]]) -> str:
    """One line: each moved model (its roles together), where it was and where it is now, and the choice."""
    grouped: dict[tuple[str, str, str], list[tuple[RoleEndpoint, RoleEndpoint]]] = {}
    for now, before in moved:
        grouped.setdefault((now.model, before.address, now.address), []).append((now, before))
    found = "; ".join(
        f"{' and '.join(now.role for now, _ in pairs)} {model} was served at {pairs[0][1].address} "
        f"({pairs[0][1].chosen_by}) and is now at {pairs[0][0].address} ({pairs[0][0].chosen_by})"
        for (model, _, _), pairs in grouped.items()
    )
    return (
        f"run {run.id}: {found}. If the same model moved, resume with --endpoint-moved (its stored and cached "
        "answers are kept); if another model answered before, start a new run with --fresh (the cached answers "
        "the old server gave are asked again)"
    )
