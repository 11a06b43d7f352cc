"""Think longer, refine or sample, at equal tokens: each (strategy x effort) configuration's tokens against its
pass@1 with intervals and the Pareto frontier, and effort levels of one strategy compared problem by problem.

"Overthinking" is counted as regressions are: the problems a higher effort of a strategy got wrong that a
lower effort of the same strategy (same arguments, actor and critic) got right, paired by (problem, repeat).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

from refinelab.metrics._compare import PairedComparison, compare_paired
from refinelab.metrics._intervals import Bootstrap, Interval, PerProblem
from refinelab.records import EFFORT_ORDER, ScoredTrajectory


@dataclass(frozen=True)
class TokenPoint:
    """One configuration on the tokens-against-pass@1 plane."""

    config: str
    """Configuration key."""
    label: str
    """``strategy(args) · actor / critic · effort LEVEL``."""
    strategy: str
    """Strategy name."""
    effort: str | None
    """The actor's reasoning effort (``None``: the model's default)."""
    trajectories: int
    """Trajectories it ran."""
    tokens: Interval
    """Mean tokens per problem (prompt + visible + thinking, actor + critic + test-writing), 95% interval."""
    prompt: float
    """Mean prompt tokens per problem."""
    visible: float
    """Mean answer tokens per problem (completion tokens that were not thinking)."""
    thinking: float
    """Mean thinking tokens per problem."""
    pass_at_1: Interval
    """Pass@1 of the returned answer, 95% interval (problems resampled, repeats kept together)."""
    frontier: bool
    """No other configuration passes as often or more with fewer tokens (the Pareto frontier)."""


@dataclass(frozen=True)
class EffortComparison:
    """Two effort levels of one strategy, paired by (problem, repeat)."""

    lower: str
    """Label of the lower-effort configuration (A)."""
    higher: str
    """Label of the higher-effort configuration (B)."""
    lower_config: str
    """Configuration key of A."""
    higher_config: str
    """Configuration key of B."""
    lower_effort: str
    """A's effort."""
    higher_effort: str
    """B's effort."""
    paired: PairedComparison
    """:func:`compare_paired` of A against B (B - A)."""

    @property
    def overthinking(self) -> tuple[tuple[str, int], ...]:
        """(problem, repeat) the lower effort solved and the higher did not."""
        return self.paired.only_a_keys


def effort_rank(effort: str | None) -> tuple[int, float] | None:
    """Where an effort sorts: levels in :data:`EFFORT_ORDER` order, thinking-token budgets by size (after the
    levels; a level and a budget are never compared); ``None`` (the model's default) has no place."""
    if effort is None:
        return None
    if effort.isdigit():
        return 1, float(effort)
    return (0, float(EFFORT_ORDER.index(effort))) if effort in EFFORT_ORDER else None


def pareto_frontier(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both cost (lower x) and pass rate (higher y), cheapest
    first; of equal points the first is kept."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], -points[i][1], i))
    found: list[int] = []
    for index in order:
        if not found or points[index][1] > points[found[-1]][1]:
            found.append(index)
    return found


def token_points(groups: Sequence[Sequence[ScoredTrajectory]], *, seed: int = 0) -> tuple[TokenPoint, ...]:
    """Each configuration (one group of trajectories each, non-empty) on the tokens-against-pass@1 plane, its
    intervals from one bootstrap over the problems any of them ran, and which lie on the Pareto frontier."""
    problems = sorted({t.problem for group in groups for t in group})
    index = {problem: i for i, problem in enumerate(problems)}
    bootstrap = Bootstrap(len(problems), seed=seed)
    found = [_point(group, index, bootstrap) for group in groups]
    frontier = set(pareto_frontier([(p.tokens.value, p.pass_at_1.value) for p in found]))
    return tuple(TokenPoint(**{**vars(p), "frontier": i in frontier}) for i, p in enumerate(found))


def _point(group: Sequence[ScoredTrajectory], index: dict[str, int], bootstrap: Bootstrap) -> TokenPoint:
    first, n = group[0], len(group)
    passes, tokens = _per_problem(group, index, lambda t: float(t.passed)), _per_problem(group, index, _tokens)
    usage = [t.spend.usage for t in group]
    pass_at_1, spent = bootstrap.mean(passes), bootstrap.mean(tokens)
    assert pass_at_1 is not None and spent is not None
    return TokenPoint(
        config=first.config, label=first.label, strategy=first.strategy, effort=first.effort, trajectories=n,
        tokens=spent, prompt=sum(u.prompt_tokens for u in usage) / n, visible=sum(u.visible_tokens for u in usage) / n,
        thinking=sum(u.reasoning_tokens for u in usage) / n, pass_at_1=pass_at_1, frontier=False,
    )  # fmt: skip


def _tokens(trajectory: ScoredTrajectory) -> float:
    return float(trajectory.tokens)


def _per_problem(
    group: Sequence[ScoredTrajectory], index: dict[str, int], value: Callable[[ScoredTrajectory], float]
) -> PerProblem:
    sums, counts = [0.0] * len(index), [0.0] * len(index)
    for trajectory in group:
        at = index[trajectory.problem]
        sums[at] += value(trajectory)
        counts[at] += 1
    return PerProblem(tuple(sums), tuple(counts))


def effort_comparisons(groups: Sequence[Sequence[ScoredTrajectory]]) -> tuple[EffortComparison, ...]:
    """Every pair of effort levels of one strategy (same arguments, actor, critic, and a critic effort that is
    the actor's in both or the same in both), lower against higher, in the groups' order."""
    found = []
    for a, b in combinations([g for g in groups if g and effort_rank(g[0].effort) is not None], 2):
        if not _same_arm(a[0], b[0]):
            continue
        rank_a, rank_b = effort_rank(a[0].effort), effort_rank(b[0].effort)
        assert rank_a is not None and rank_b is not None
        if rank_a[0] != rank_b[0] or rank_a == rank_b:
            continue
        low, high = (a, b) if rank_a < rank_b else (b, a)
        found.append(_comparison(low, high))
    return tuple(found)


def _same_arm(a: ScoredTrajectory, b: ScoredTrajectory) -> bool:
    """Two configurations that differ only in effort."""
    follows = (a.critic_effort == a.effort) and (b.critic_effort == b.effort)
    same = (a.strategy, a.params, a.actor, a.critic) == (b.strategy, b.params, b.actor, b.critic)
    return same and (follows or a.critic_effort == b.critic_effort)


def _comparison(low: Sequence[ScoredTrajectory], high: Sequence[ScoredTrajectory]) -> EffortComparison:
    a, b = low[0], high[0]
    assert a.effort is not None and b.effort is not None
    return EffortComparison(
        lower=a.label, higher=b.label, lower_config=a.config, higher_config=b.config, lower_effort=a.effort,
        higher_effort=b.effort, paired=compare_paired(low, high),
    )  # fmt: skip
