"""The runner: one asyncio scheduler over problems x configurations x repeats.

Each unit (one strategy run on one problem) runs its strategy against the visible tests, has every
attempt scored on the hidden tests, and is stored in one transaction. Units already stored are
skipped, so running the same spec again resumes; the response cache makes the calls of a unit that
was cut short free the second time. Infrastructure failures are recorded and leave the unit to be
retried; they never count as the model failing.
"""

from __future__ import annotations

import asyncio
import platform
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from refinelab import __version__
from refinelab.errors import InfrastructureError, UserError
from refinelab.experiment._batching import Batching, HiddenScoring, RunLimits
from refinelab.experiment._generated import with_reference_verdicts
from refinelab.experiment._samples import hidden_suite
from refinelab.experiment._scoring import run_scored
from refinelab.experiment._spec import BenchmarkChoice, Configuration, ExperimentSpec
from refinelab.experiment._store import Store, Unit
from refinelab.models import Model, ResponseCache, RetryPolicy, open_model
from refinelab.problems import Problem, benchmark, find_problem
from refinelab.records import Spend
from refinelab.sandbox import Limits, RunResult, Sandbox, WorkerPool, default_workers, prepare_benchmark
from refinelab.strategies import Env, Trajectory


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
class Settings:
    """Where things live and how to reach models; none of it changes results."""

    store: Path
    """The store file."""
    cache: Path
    """The response cache file."""
    environ: Mapping[str, str] = field(default_factory=dict)
    """Environment for API keys."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """Retries of model calls."""
    cache_dir: Path | None = None
    """Where computed benchmark outputs (HumanEval+) are cached."""


@dataclass(frozen=True)
class RunSummary:
    """What an invocation of the runner did."""

    run_id: str
    """The run."""
    resumed: bool
    """The run existed before this invocation."""
    progress: Progress
    """Counts."""


def _packages(spec: ExperimentSpec) -> list[str]:
    """What candidates may import: what the spec allows plus what each benchmark's grader offers."""
    offered = {name for choice in spec.benchmarks for name in benchmark(choice.name).offered_packages()[0]}
    return sorted({*spec.sandbox.allow_packages, *offered})


async def run_experiment(spec: ExperimentSpec, settings: Settings, progress: Progress | None = None) -> RunSummary:
    """Run (or resume) ``spec``; see the module docstring."""
    progress = progress or Progress()
    limits = RunLimits.of(spec.sandbox)
    workers = min(spec.sandbox.workers or default_workers(), default_workers())
    pool = WorkerPool(workers=workers, limits=limits.pool, isolation=spec.sandbox.isolation, packages=_packages(spec))
    async with pool:
        problems = await _problems(spec.benchmarks, pool, settings.cache_dir)  # bad input: nothing is written
        with Store(settings.store) as store:
            resumed = _open_run(store, spec, limits, pool, problems)
            try:
                await _run_units(spec, settings, problems, (store, pool, limits), progress)
            except (KeyboardInterrupt, asyncio.CancelledError):
                store.finish_run(spec.run_id, "interrupted", "stopped by a signal (Ctrl-C or SIGTERM)")
                raise
            except BaseException as exc:
                store.finish_run(spec.run_id, "failed", f"{type(exc).__name__}: {exc}".splitlines()[0])
                raise
            failed = {f.unit for f in store.failures(spec.run_id) if not f.resolved}
            store.finish_run(spec.run_id, "incomplete" if failed else "complete")
    return RunSummary(spec.run_id, resumed, progress)


async def _run_units(
    spec: ExperimentSpec,
    settings: Settings,
    problems: Sequence[tuple[str, Problem]],
    where: tuple[Store, WorkerPool, RunLimits],
    progress: Progress,
) -> None:
    """Every unit not stored yet, with the models (and their response cache) open around them, and the
    sandbox batching concurrent units' programs (``_batching.py``)."""
    store, pool, limits = where
    cache = ResponseCache(settings.cache)
    sandbox = Batching(pool)
    try:
        models = _Models(spec, settings, cache)
        try:
            context = _Context(store, sandbox, models, spec, limits, HiddenScoring(sandbox, limits.hidden))
            await _schedule(spec, problems, context, progress)
        finally:
            await models.aclose()
    finally:
        await sandbox.aclose()
        cache.close()


def _open_run(
    store: Store, spec: ExperimentSpec, limits: RunLimits, pool: Sandbox, problems: Sequence[tuple[str, Problem]]
) -> bool:
    header = {
        "versions": {"refinelab": __version__, "python": platform.python_version()},
        "isolation": pool.isolation,
        "limits": asdict(limits.hidden),
        "agreement_limits": asdict(limits.agreement),
    }
    created = store.open_run(spec.run_id, spec.to_json(), header)
    store.add_configurations(spec.run_id, spec.configurations())
    store.add_problems(spec.run_id, problems)
    return not created


async def _problems(
    choices: Sequence[BenchmarkChoice], pool: WorkerPool, cache_dir: Path | None
) -> list[tuple[str, Problem]]:
    """Every chosen problem as ``(benchmark/id, problem)``; a problem without hidden tests is an error."""
    chosen = []
    for choice in choices:
        loaded = await prepare_benchmark(choice.name, choice.data, pool=pool, cache_dir=cache_dir)
        selected = select(loaded, choice)
        if not selected:  # only `after` can empty a non-empty benchmark: ids must exist, limits are >= 1
            raise UserError(f"{choice.name}: no problem is dated on or after {choice.after} (the spec's 'after')")
        for problem in selected:
            if not problem.hidden_tests:
                raise UserError(f"{choice.name}: problem {problem.id} has no hidden tests to score attempts on")
            chosen.append((f"{choice.name}/{problem.id}", problem))
    return chosen


def select(problems: Sequence[Problem], choice: BenchmarkChoice) -> list[Problem]:
    """The chosen problems, in benchmark order: named ids, then a seeded sample, then the limit."""
    chosen = list(problems)
    if choice.problems:
        by_id = {p.id: p for p in problems}
        found = [find_problem(by_id, task_id) for task_id in choice.problems]
        missing = [t for t, p in zip(choice.problems, found) if p is None]
        if missing:
            raise UserError(f"{choice.name}: no problem {missing[0]!r}")
        wanted = {p.id for p in found if p is not None}
        chosen = [p for p in chosen if p.id in wanted]
    if choice.after is not None:
        chosen = [p for p in chosen if str(p.metadata.get("contest_date", ""))[:10] >= choice.after]
    if choice.sample is not None and choice.sample < len(chosen):
        keep = stratified_sample(chosen, choice.sample, choice.seed)
        chosen = [chosen[i] for i in keep]
    return chosen[: choice.limit] if choice.limit is not None else chosen


def stratified_sample(problems: Sequence[Problem], size: int, seed: int) -> list[int]:
    """Indices of a seeded random sample of ``size`` problems, in order, with each difficulty's share
    kept (largest remainders get the rounding)."""
    groups: dict[str, list[int]] = {}
    for index, problem in enumerate(problems):
        groups.setdefault(str(problem.metadata.get("difficulty", "")), []).append(index)
    quotas = {key: size * len(members) / len(problems) for key, members in groups.items()}
    counts = {key: int(quota) for key, quota in quotas.items()}
    by_remainder = sorted(groups, key=lambda key: (counts[key] - quotas[key], key))
    for key in by_remainder[: size - sum(counts.values())]:
        counts[key] += 1
    rng = random.Random(seed)  # noqa: S311 - sampling problems, not cryptography
    return sorted(i for key in sorted(groups) for i in rng.sample(groups[key], counts[key]))


class _Models:
    """One :class:`Model` per (model string, server), shared by all units, with the response cache."""

    def __init__(self, spec: ExperimentSpec, settings: Settings, cache: ResponseCache) -> None:
        self.spec, self.settings, self.cache = spec, settings, cache
        self.config = spec.models
        self.open: dict[tuple[str, str | None], Model] = {}

    def get(self, name: str, *, critic: bool = False) -> Model:
        url = (self.spec.critic_base_url or self.spec.base_url) if critic else self.spec.base_url
        key = (name, url)
        if key not in self.open:
            self.open[key] = open_model(
                name,
                self.settings.environ,
                base_url=url,
                config=self.config,
                cache=self.cache,
                retry=self.settings.retry,
            )
        return self.open[key]

    async def aclose(self) -> None:
        for model in self.open.values():
            await model.aclose()


@dataclass(frozen=True)
class _Context:
    store: Store
    pool: Sandbox
    models: _Models
    spec: ExperimentSpec
    limits: RunLimits
    scoring: HiddenScoring


async def _schedule(
    spec: ExperimentSpec, problems: Sequence[tuple[str, Problem]], context: _Context, progress: Progress
) -> None:
    """Work through every unit not yet stored with ``spec.concurrency`` workers."""
    configurations = spec.configurations()
    units = [
        (configuration, key, problem, repeat)
        for configuration in configurations
        for key, problem in problems
        for repeat in range(spec.repeats)
    ]
    done = context.store.done(spec.run_id)
    todo = [u for u in units if (u[0].key, u[1], u[3]) not in done]
    progress.total, progress.skipped = len(units), len(units) - len(todo)
    progress.on_update(progress)
    queue: asyncio.Queue[tuple[Configuration, str, Problem, int]] = asyncio.Queue()
    for unit in todo:
        queue.put_nowait(unit)
    workers = [asyncio.create_task(_work(queue, context, progress)) for _ in range(min(spec.concurrency, len(todo)))]
    try:
        await asyncio.gather(*workers)
    finally:
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


async def _work(
    queue: asyncio.Queue[tuple[Configuration, str, Problem, int]], context: _Context, progress: Progress
) -> None:
    while not queue.empty():
        configuration, key, problem, repeat = queue.get_nowait()
        unit: Unit = (configuration.key, key, repeat)
        try:
            trajectory, hidden = await _run_unit(configuration, problem, repeat, context)
        except InfrastructureError as exc:
            context.store.record_failure(context.spec.run_id, unit, type(exc).__name__, str(exc))
            progress.failed += 1
            progress.on_update(progress)
            continue
        context.store.save(context.spec.run_id, unit, trajectory, hidden)
        progress.add(trajectory)


async def _run_unit(
    configuration: Configuration, problem: Problem, repeat: int, context: _Context
) -> tuple[Trajectory, list[RunResult | None]]:
    """Run the strategy, then score every attempt on the hidden tests."""
    models = context.models
    actor = models.get(configuration.actor)
    critic = models.get(configuration.critic, critic=True) if configuration.critic is not None else None
    agreement = context.limits.agreement
    env = Env(actor, context.pool, critic=critic, budget=context.spec.budget, repeat=repeat, agreement=agreement)
    strategy = await configuration.strategy.run(problem, env)
    trajectory = await with_reference_verdicts(strategy, problem, context.pool, agreement)
    return trajectory, await context.scoring.score(trajectory, problem)


async def score_attempts(
    trajectory: Trajectory, problem: Problem, pool: Sandbox, *, limits: Limits | None = None
) -> list[RunResult | None]:
    """Each attempt's result on the hidden tests (``None`` for an attempt without code), under ``limits``
    (the pool's when None); identical programs are run once."""
    suite = hidden_suite(problem)
    programs = sorted({a.code for a in trajectory.attempts if a.code is not None})
    results = await run_scored(pool, [(code, suite) for code in programs], limits=limits) if programs else []
    by_code = dict(zip(programs, results))
    return [None if a.code is None else by_code[a.code] for a in trajectory.attempts]
