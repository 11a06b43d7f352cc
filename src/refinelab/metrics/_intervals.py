"""Bootstrap intervals over problems: how much a number could move if the benchmark had drawn other
problems like these.

The unit of resampling is the problem (its repeats stay together), because problems, not attempts,
are what a benchmark samples. One :class:`Bootstrap` draws the resampling weights once, seeded, and
every statistic of a table uses the same draws, so the intervals of one table are consistent with
each other and the same run always gets the same intervals. Intervals are percentile intervals (the
same rule as :func:`refinelab.metrics.bootstrap_difference`).
"""

from __future__ import annotations

import operator
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Interval:
    """A number with its bootstrap interval."""

    value: float
    """The number computed on the problems as they are."""
    low: float
    """Lower end of the interval."""
    high: float
    """Upper end of the interval."""


@dataclass(frozen=True)
class PerProblem:
    """Observations grouped by problem: problem ``i`` holds ``counts[i]`` observations (its repeats;
    possibly none) that add up to ``sums[i]``."""

    sums: tuple[float, ...]
    """Sum of the observations of each problem."""
    counts: tuple[float, ...]
    """Number of observations of each problem."""


class Bootstrap:
    """Resampling weights over ``problems`` units: how often each problem is drawn in each resample.

    Args:
        problems: Number of problems (units) the statistics are computed over.
        resamples: Number of resamples.
        level: Coverage of the interval (0.95 for a 95% interval).
        seed: Seed of the draws; the same seed gives the same intervals.
    """

    def __init__(self, problems: int, *, resamples: int = 2000, level: float = 0.95, seed: int = 0) -> None:
        if problems < 0 or resamples < 1 or not 0 < level < 1:
            raise ValueError(f"bootstrap needs problems >= 0, resamples >= 1 and 0 < level < 1 "
                             f"(got {problems}, {resamples}, {level})")  # fmt: skip
        self.problems, self.level = problems, level
        rng = random.Random(seed)  # noqa: S311 - resampling, not cryptography
        self.weights = [_draw(rng, problems) for _ in range(resamples)] if problems else []
        self._cache: dict[tuple[float, ...], list[float]] = {}

    def mean(self, data: PerProblem) -> Interval | None:
        """Mean over every observation; None when there is none."""
        value = _divide(sum(data.sums), sum(data.counts))
        if value is None:
            return None
        draws = [_divide(s, c) for s, c in zip(self._dots(data.sums), self._dots(data.counts))]
        return self._interval(value, draws)

    def ratio(self, data: PerProblem, baseline: PerProblem) -> Interval | None:
        """Mean of ``data`` divided by the mean of ``baseline`` (a cost multiple), with both resampled
        by the same problems; None when either is empty or the baseline's mean is 0."""
        value = _ratio(sum(data.sums), sum(data.counts), sum(baseline.sums), sum(baseline.counts))
        if value is None:
            return None
        parts = (self._dots(data.sums), self._dots(data.counts), self._dots(baseline.sums), self._dots(baseline.counts))
        return self._interval(value, [_ratio(*draw) for draw in zip(*parts)])

    def total(self, values: Sequence[float]) -> Interval | None:
        """Sum over problems (a count such as regression errors); None when there are no problems."""
        if not self.problems:
            return None
        return self._interval(float(sum(values)), list(self._dots(values)))

    def _dots(self, values: Sequence[float]) -> list[float]:
        """Each resample's weighted sum of ``values`` (cached: a table reuses its count vectors)."""
        key = tuple(values)
        if len(key) != self.problems:
            raise ValueError(f"expected {self.problems} per-problem values, got {len(key)}")
        if key not in self._cache:
            self._cache[key] = _weighted_sums(self.weights, key)
        return self._cache[key]

    def _interval(self, value: float, draws: Sequence[float | None]) -> Interval:
        """The value and the percentile interval of the resamples (those where the statistic is
        undefined, such as an empty baseline, are left out)."""
        kept = sorted(d for d in draws if d is not None)
        if not kept:
            return Interval(value, value, value)
        tail, last = (1 - self.level) / 2, len(kept) - 1
        return Interval(value, kept[int(tail * last)], kept[int((1 - tail) * last)])


def _draw(rng: random.Random, problems: int) -> list[int]:
    weights = [0] * problems
    for index in rng.choices(range(problems), k=problems):
        weights[index] += 1
    return weights


def _weighted_sums(weights: Sequence[Sequence[int]], values: tuple[float, ...]) -> list[float]:
    """Each resample's weighted sum of ``values``. Whole-number values (passes, changes, counts, tokens:
    nearly every statistic of a table) are summed value by value, each from the draw counts of the
    problems holding it: the same numbers (whole numbers add exactly), several times faster than a
    product per problem, which is what makes a large run's first overview slow."""
    if not all(float(v).is_integer() for v in values):
        return [_dot(w, values) for w in weights]
    where: dict[float, list[int]] = {}
    for index, value in enumerate(values):
        if value:
            where.setdefault(value, []).append(index)
    groups = [(value, _picker(indices)) for value, indices in where.items()]
    return [float(sum(value * sum(pick(w)) for value, pick in groups)) for w in weights]


def _picker(indices: list[int]) -> Callable[[Sequence[int]], Sequence[int]]:
    """The entries at ``indices`` of a sequence, always as a tuple (itemgetter of one index is not)."""
    if len(indices) == 1:
        only = indices[0]
        return lambda weights: (weights[only],)
    return operator.itemgetter(*indices)


def _dot(weights: Sequence[int], values: Sequence[float]) -> float:
    return float(sum(map(operator.mul, weights, values)))


def _divide(total: float, count: float) -> float | None:
    return total / count if count else None


def _ratio(total: float, count: float, base_total: float, base_count: float) -> float | None:
    mean, base = _divide(total, count), _divide(base_total, base_count)
    return None if mean is None or not base else mean / base
