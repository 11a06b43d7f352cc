"""Which problems a run solves: each chosen benchmark's files resolved (their source recorded in the spec,
so the run id covers the bytes read), loaded, then narrowed by its choice (named ids, a date window, a
seeded sample, a limit)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import replace

from refinelab._progress import ProgressHook
from refinelab.errors import UserError
from refinelab.experiment._spec import BenchmarkChoice, ExperimentSpec
from refinelab.problems import BenchmarkFiles, FetchOptions, Problem, dated, find_problem, open_benchmark, window_text
from refinelab.runtime import Settings
from refinelab.sandbox import Sandbox, prepare_benchmark
from refinelab.store import RunProblem


def resolve_sources(spec: ExperimentSpec, settings: Settings, progress: ProgressHook | None = None) -> ExperimentSpec:
    """``spec`` with every benchmark's source recorded (downloading what is not in the cache yet,
    ``progress`` told the bytes): what the run reads, and so part of its id."""
    return replace(spec, benchmarks=tuple(_resolved(c, settings.fetch_options(progress)) for c in spec.benchmarks))


def _resolved(choice: BenchmarkChoice, options: FetchOptions) -> BenchmarkChoice:
    return replace(choice, source=_open(choice, options).provenance)


def _open(choice: BenchmarkChoice, options: FetchOptions) -> BenchmarkFiles:
    """The choice's files, which must be the ones its recorded source names (when it has one)."""
    files = open_benchmark(choice.name, choice.data, release=choice.release, options=options)
    if choice.source is not None and files.provenance != choice.source:
        raise UserError(
            f"{choice.name}: the files are not the ones this run was resolved with "
            f"({files.provenance.describe()}); run the command again to resolve them anew"
        )
    return files


async def choose_problems(
    choices: Sequence[BenchmarkChoice], sandbox: Sandbox, options: FetchOptions
) -> list[RunProblem]:
    """Every chosen problem under its key ``benchmark/id``; a problem without hidden tests is an error."""
    chosen = []
    for choice in choices:
        files = await asyncio.to_thread(_open, choice, options)
        loaded = await prepare_benchmark(files, pool=sandbox, cache_dir=options.cache_dir)
        selected = select(loaded, choice)
        if not selected:  # only a date window can empty a non-empty benchmark: ids must exist, limits are >= 1
            raise UserError(f"{choice.name}: no problem is dated {window_text(choice.after, choice.before)}")
        for problem in selected:
            if not problem.hidden_tests:
                raise UserError(f"{choice.name}: problem {problem.id} has no hidden tests to score attempts on")
            chosen.append(RunProblem(f"{choice.name}/{problem.id}", problem))
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
    chosen = dated(chosen, choice.after, choice.before)
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
