"""The runner: one asyncio scheduler over problems x configurations x repeats.

Each unit (one strategy run on one problem) runs its strategy against the visible tests, has every
attempt scored on the hidden tests, and is stored in one transaction. Units already stored are
skipped, so running the same spec again resumes; the response cache makes the calls of a unit that
was cut short free the second time. Infrastructure failures are recorded and leave the unit to be
retried; they never count as the model failing.

Models, the sandbox and the store come from the runtime (:mod:`refinelab.runtime`), opened from the
settings; the spec says what runs, the settings where. Concurrent units' programs reach the pool together
(``_batching.py``), and each distinct program is scored on the hidden tests once per run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from refinelab.errors import InfrastructureError, SandboxUnavailable
from refinelab.experiment._batching import HiddenScoring, RunLimits
from refinelab.experiment._endpoints import RunOptions, cached_from, choose_run, role_efforts, run_endpoints
from refinelab.experiment._problems import choose_problems, resolve_sources
from refinelab.experiment._record import begin_run
from refinelab.experiment._spec import Configuration, ExperimentSpec
from refinelab.experiment._units import Roles, WorkItem, run_unit, work_items
from refinelab.models import Model, Role, RoleEndpoint
from refinelab.records import Spend
from refinelab.runtime import Runtime, Settings, open_runtime
from refinelab.sandbox import ClusterEvent, ClusterSandbox, SandboxSettings
from refinelab.store import RunHeader, RunProblem, Store
from refinelab.strategies import Trajectory


@dataclass
class Progress:
    """What a run has done so far; ``on_update`` is called after every unit."""

    total: int = 0
    """Units in the run."""
    skipped: int = 0
    """Units already stored when this invocation started."""
    done: int = 0
    """Units stored by this invocation."""
    failed: int = 0
    """Units that hit an infrastructure failure in this invocation."""
    spend: Spend = field(default_factory=Spend)
    """Tokens and dollars spent by this invocation's units (cached replies included; dollars ``None``
    once any price was unknown)."""
    on_update: Callable[[Progress], None] = field(default=lambda progress: None, repr=False)
    """Display hook."""
    run_id: str = ""
    """The run being worked on, once the runner has chosen it (the spec's id, or a fresh generation)."""

    def add(self, trajectory: Trajectory) -> None:
        """Count a stored unit."""
        self.done += 1
        self.spend += trajectory.spend
        self.on_update(self)

    @property
    def tokens(self) -> int:
        """Tokens spent by this invocation's units."""
        return self.spend.usage.total_tokens

    @property
    def cost_usd(self) -> float | None:
        """Their cost; ``None`` once any price was unknown."""
        return self.spend.cost_usd


@dataclass(frozen=True)
class RunSummary:
    """What an invocation of the runner did."""

    run_id: str
    """The run."""
    resumed: bool
    """The run existed before this invocation."""
    progress: Progress
    """Counts."""
    events: tuple[ClusterEvent, ...] = ()
    """What happened to cluster nodes (joined, lost, batches run again), when the settings name a cluster."""


def sandbox_settings(spec: ExperimentSpec) -> SandboxSettings:
    """The sandbox a spec runs in: its sandbox choice (:func:`refinelab.runtime.choose_sandbox`) with the
    visible tests' limits as the pool's, its workers (``None``: the settings', else one per core, as
    :meth:`refinelab.runtime.Runtime.open_sandbox` decides), and what candidates may import (what the spec
    allows plus what each benchmark's grader offers)."""
    chosen = spec.sandbox
    names = [choice.name for choice in spec.benchmarks]
    return chosen.sandbox_settings(names, chosen.visible_limits())


async def run_experiment(
    spec: ExperimentSpec, settings: Settings, progress: Progress | None = None, *, options: RunOptions | None = None
) -> RunSummary:
    """Run (or resume) ``spec`` with the models of its own ``[models]`` table; see the module docstring.
    Benchmarks without a recorded source are resolved first (:func:`resolve_sources`), so the run id covers
    the bytes it reads. ``options``: the servers given for this invocation, and what to do when a role's
    server is not the one the run recorded (``_endpoints.py``: by default a user error before anything
    is asked or written)."""
    progress = progress or Progress()
    options = options or RunOptions()
    if any(choice.source is None for choice in spec.benchmarks):
        spec = await asyncio.to_thread(resolve_sources, spec, settings)
    limits = RunLimits.of(spec.sandbox)
    endpoints = run_endpoints(spec, options)
    async with open_runtime(replace(settings, models=spec.models), sandbox=options.sandbox) as runtime:
        before = runtime.open_store() if runtime.settings.store.exists() else None
        chosen = choose_run(before, spec, endpoints, options.endpoint_change)
        if not _complete(before, chosen.run_id):  # no server named, an effort refused: a user error before writing
            for endpoint in endpoints:
                runtime.check_model(endpoint.model, base_url=endpoint.base_url, efforts=role_efforts(spec, endpoint))
        run_id = progress.run_id = chosen.run_id
        pool = await runtime.open_sandbox(sandbox_settings(spec))
        fetch = settings.fetch_options()
        problems = await choose_problems(spec.benchmarks, pool, fetch)  # bad input: nothing is written
        store = runtime.open_store()
        header = RunHeader.of(pool, limits=limits.hidden, endpoints=chosen.endpoints)
        resumed = begin_run(store, spec, header, problems, run_id=run_id)
        if resumed and chosen.record:
            store.record_endpoints(run_id, chosen.endpoints)
        models = {(e.role, e.model): (e, cached_from(e, chosen.endpoints)) for e in endpoints}
        scoring = HiddenScoring(pool, limits.hidden)
        context = _Context(store, scoring, runtime, spec, limits, run_id=run_id, endpoints=models)
        try:
            await _schedule(context, problems, progress)
        except (KeyboardInterrupt, asyncio.CancelledError):
            store.finish_run(run_id, "interrupted", "stopped by a signal (Ctrl-C or SIGTERM)")
            raise
        except BaseException as exc:
            store.finish_run(run_id, "failed", f"{type(exc).__name__}: {exc}".splitlines()[0])
            raise
        finally:
            await scoring.aclose()
        failed = {f.unit for f in store.failures(run_id) if not f.resolved}
        store.finish_run(run_id, "incomplete" if failed else "complete")
    events = tuple(pool.events) if isinstance(pool, ClusterSandbox) else ()
    return RunSummary(run_id, resumed, progress, events)


@dataclass(frozen=True)
class _Context:
    """What every unit of one run shares."""

    store: Store
    """Where units are stored."""
    scoring: HiddenScoring
    """Scores attempts on hidden tests, each distinct program once; its sandbox (the run's pool or
    cluster, see ``_batching.py``) is where every program of the run goes."""
    runtime: Runtime
    """Where models come from."""
    spec: ExperimentSpec
    """What runs."""
    limits: RunLimits
    """The run's limits: the visible tests', the hidden tests' and the agreement's."""
    run_id: str
    """The run units are stored in (the spec's id, or a fresh generation of it)."""
    endpoints: dict[tuple[Role, str], tuple[RoleEndpoint, frozenset[str] | None]]
    """Each (role, model)'s endpoint, and the endpoints its cached replies may come from (``None``: any)."""

    def roles(self, configuration: Configuration) -> Roles:
        """The configuration's actor, and its critic for critic strategies, each where it is served."""
        critic = None if configuration.critic is None else self._model("critic", configuration.critic)
        return Roles(self._model("actor", configuration.actor), critic)

    def _model(self, role: Role, name: str) -> Model:
        endpoint, cached = self.endpoints[role, name]
        return self.runtime.model(name, base_url=endpoint.base_url, cached_from=cached)


def _complete(store: Store | None, run_id: str) -> bool:
    """Whether ``run_id`` is stored and complete: run again, it asks no model."""
    return store is not None and any(run.id == run_id and run.status == "complete" for run in store.runs())


async def _schedule(context: _Context, problems: list[RunProblem], progress: Progress) -> None:
    """Work through every unit not yet stored with ``spec.concurrency`` workers."""
    spec = context.spec
    items = work_items(spec.configurations(), problems, spec.repeats)
    done = context.store.done(context.run_id)
    todo = [item for item in items if item.unit not in done]
    progress.total, progress.skipped = len(items), len(items) - len(todo)
    progress.on_update(progress)
    queue: asyncio.Queue[WorkItem] = asyncio.Queue()
    for item in todo:
        queue.put_nowait(item)
    workers = [asyncio.create_task(_work(queue, context, progress)) for _ in range(min(spec.concurrency, len(todo)))]
    try:
        await asyncio.gather(*workers)
    finally:
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


async def _work(queue: asyncio.Queue[WorkItem], context: _Context, progress: Progress) -> None:
    run_id = context.run_id
    while not queue.empty():
        item = queue.get_nowait()
        try:
            roles = context.roles(item.configuration)
            scored = await run_unit(item, roles, context.scoring, context.spec.budget, context.limits)
        except SandboxUnavailable:
            raise  # nothing is left to run programs on: the run stops (and resumes when run again)
        except InfrastructureError as exc:
            context.store.record_failure(run_id, item.unit, type(exc).__name__, str(exc))
            progress.failed += 1
            progress.on_update(progress)
            continue
        context.store.save(run_id, item.unit, scored.trajectory, scored.hidden)
        progress.add(scored.trajectory)
