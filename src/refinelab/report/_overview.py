"""The research's headline table with 95% bootstrap intervals, for all problems, per benchmark and per
difficulty: pass@1 after each iteration with the change from the first attempt, regression errors,
average refinements and cost as a multiple of single pass.

Every point value is the one the rest of the report shows (the same metrics on the same
trajectories); the intervals resample problems (repeats stay with their problem), seeded, so the
same run always gets the same table. See :mod:`refinelab.metrics._intervals`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from refinelab.metrics import (
    Bootstrap,
    Interval,
    PerProblem,
    ScoredTrajectory,
    answer_at,
    max_iteration,
    regression_error_attempts,
    sampled,
)
from refinelab.store import ProblemInfo
from refinelab.strategies import strategy_traits

SliceKind = Literal["all", "benchmark", "difficulty"]
"""How a table's problems were chosen."""
CostUnit = Literal["usd", "tokens"]
"""What a cost multiple divides: dollars when every price is known, else tokens."""
DIFFICULTY_ORDER = ("easy", "medium", "hard")
"""Difficulties in reading order; others follow alphabetically."""


@dataclass(frozen=True)
class OverviewRow:
    """One configuration's headline numbers on one slice of the problems."""

    config: str
    """Configuration key."""
    label: str
    """``strategy(args) · actor / critic``."""
    trajectories: int
    """Trajectories in the slice."""
    iterations: tuple[Interval, ...]
    """Pass@1 after iteration 0 (the first attempt), 1, 2, ... (for sampling: the first sample)."""
    changes: tuple[Interval, ...]
    """Pass@1 after iteration 1, 2, ... minus pass@1 of the first attempt (paired by problem)."""
    final: Interval
    """Pass@1 of the returned answers."""
    regression_errors: Interval
    """Regression errors (a count; the interval is over resampled problems)."""
    refinements: Interval | None
    """Average refinement steps (Avg It.); None for sampling."""
    cost_multiple: Interval | None
    """Mean cost per problem as a multiple of single pass with the same actor; None without one."""
    cost_unit: CostUnit | None
    """What ``cost_multiple`` divides."""
    sampled: bool
    """A sampling configuration (its attempts are samples, not iterations)."""


@dataclass(frozen=True)
class OverviewTable:
    """The headline table on one slice of the problems."""

    kind: SliceKind
    """All problems, one benchmark, or one difficulty of one benchmark."""
    name: str
    """``all problems``, ``livecodebench`` or ``livecodebench · easy``."""
    problems: int
    """Problems in the slice."""
    rows: tuple[OverviewRow, ...]
    """One per configuration with trajectories in the slice."""


def build_overview(
    trajectories: Sequence[ScoredTrajectory], problems: Sequence[ProblemInfo], *, seed: int = 0
) -> tuple[OverviewTable, ...]:
    """The table for all problems, then per benchmark (when there are several), then per difficulty."""
    groups: dict[str, list[ScoredTrajectory]] = {}
    for trajectory in trajectories:
        groups.setdefault(trajectory.config, []).append(trajectory)
    tables = [_table("all", "all problems", sorted({t.problem for t in trajectories}), groups, seed)]
    for kind, name, keys in _slices(problems, {t.problem for t in trajectories}):
        tables.append(_table(kind, name, keys, groups, seed))
    return tuple(tables)


def _slices(problems: Sequence[ProblemInfo], ran: set[str]) -> list[tuple[SliceKind, str, list[str]]]:
    infos = [p for p in problems if p.key in ran]
    benchmarks = sorted({p.benchmark for p in infos})
    found: list[tuple[SliceKind, str, list[str]]] = []
    if len(benchmarks) > 1:
        found += [("benchmark", b, sorted(p.key for p in infos if p.benchmark == b)) for b in benchmarks]
    for benchmark in benchmarks:
        members = [p for p in infos if p.benchmark == benchmark]
        levels = {p.difficulty for p in members}
        if levels == {None}:
            continue
        for level in sorted(levels, key=_difficulty_order):
            keys = sorted(p.key for p in members if p.difficulty == level)
            found.append(("difficulty", f"{benchmark} · {level or 'unknown'}", keys))
    return found


def _difficulty_order(level: str | None) -> tuple[int, str]:
    if level is None:
        return (len(DIFFICULTY_ORDER) + 1, "")
    lower = level.lower()
    return (DIFFICULTY_ORDER.index(lower), "") if lower in DIFFICULTY_ORDER else (len(DIFFICULTY_ORDER), lower)


def singles_by_actor(
    groups: dict[str, list[ScoredTrajectory]],
) -> dict[tuple[str, str | None], list[ScoredTrajectory]]:
    """The configurations every other is measured against, by actor: those of the strategy registered as
    the ``single`` baseline (``single-pass``: one draft, nothing chosen)."""
    return {g[0].actor_at: g for g in groups.values() if strategy_traits(g[0].strategy).baseline == "single"}


def _table(
    kind: SliceKind, name: str, keys: list[str], groups: dict[str, list[ScoredTrajectory]], seed: int
) -> OverviewTable:
    bootstrap = Bootstrap(len(keys), seed=seed)
    index = {key: i for i, key in enumerate(keys)}
    singles = singles_by_actor(groups)
    rows = []
    for group in groups.values():
        members = [t for t in group if t.problem in index]
        if not members:
            continue
        single = [t for t in singles.get(group[0].actor_at, []) if t.problem in index]
        rows.append(_row(members, max_iteration(group), _Slice(bootstrap, index), single))
    return OverviewTable(kind, name, len(keys), tuple(rows))


@dataclass(frozen=True)
class _Slice:
    bootstrap: Bootstrap
    index: dict[str, int]

    def per_problem(
        self, trajectories: Sequence[ScoredTrajectory], value: Callable[[ScoredTrajectory], float]
    ) -> PerProblem:
        sums, counts = [0.0] * len(self.index), [0.0] * len(self.index)
        for trajectory in trajectories:
            sums[self.index[trajectory.problem]] += value(trajectory)
            counts[self.index[trajectory.problem]] += 1
        return PerProblem(tuple(sums), tuple(counts))

    def mean(self, trajectories: Sequence[ScoredTrajectory], value: Callable[[ScoredTrajectory], float]) -> Interval:
        found = self.bootstrap.mean(self.per_problem(trajectories, value))
        assert found is not None, "a slice row has at least one trajectory"
        return found


def _row(group: list[ScoredTrajectory], top: int, where: _Slice, single: list[ScoredTrajectory]) -> OverviewRow:
    first = group[0]
    iterations = tuple(where.mean(group, _passes(i)) for i in range(top + 1))
    changes = tuple(where.mean(group, _change(i)) for i in range(1, top + 1))
    regressions = where.bootstrap.total(where.per_problem(group, lambda t: len(regression_error_attempts(t))).sums)
    sequential = [t for t in group if not sampled(t)]
    refinements = where.mean(sequential, lambda t: max(len(t.attempts) - 1, 0)) if sequential else None
    unit, multiple = _cost_multiple(group, single, where)
    assert regressions is not None
    return OverviewRow(
        config=first.config,
        label=first.label,
        trajectories=len(group),
        iterations=iterations,
        changes=changes,
        final=where.mean(group, lambda t: float(t.passed)),
        regression_errors=regressions,
        refinements=refinements,
        cost_multiple=multiple,
        cost_unit=unit,
        sampled=len(sequential) < len(group),
    )


def _passes(iteration: int) -> Callable[[ScoredTrajectory], float]:
    def value(trajectory: ScoredTrajectory) -> float:
        answer = answer_at(trajectory, iteration)
        return float(answer is not None and answer.hidden_passed)

    return value


def _change(iteration: int) -> Callable[[ScoredTrajectory], float]:
    now, start = _passes(iteration), _passes(0)
    return lambda trajectory: now(trajectory) - start(trajectory)


def _cost_multiple(
    group: list[ScoredTrajectory], single: list[ScoredTrajectory], where: _Slice
) -> tuple[CostUnit | None, Interval | None]:
    """Dollars when every price is known and single pass cost something, else tokens (as the text table)."""
    group, single = on_shared_problems(group, single)
    if not group or not single:
        return None, None
    if all(t.cost_usd is not None for t in [*group, *single]):
        dollars = where.bootstrap.ratio(where.per_problem(group, _dollars), where.per_problem(single, _dollars))
        if dollars is not None:
            return "usd", dollars
    tokens = where.bootstrap.ratio(where.per_problem(group, _tokens), where.per_problem(single, _tokens))
    return ("tokens", tokens) if tokens is not None else (None, None)


def on_shared_problems(
    group: Sequence[ScoredTrajectory], single: Sequence[ScoredTrajectory]
) -> tuple[list[ScoredTrajectory], list[ScoredTrajectory]]:
    """Both sides' trajectories on the problems both ran: what a cost multiple divides, so that an
    unfinished run does not set one configuration's problems against another's."""
    shared = {t.problem for t in group} & {t.problem for t in single}
    return [t for t in group if t.problem in shared], [t for t in single if t.problem in shared]


def _dollars(trajectory: ScoredTrajectory) -> float:
    return trajectory.cost_usd or 0.0


def _tokens(trajectory: ScoredTrajectory) -> float:
    return float(trajectory.tokens)
