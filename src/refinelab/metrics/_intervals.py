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

    def mean(self, data: PerProblem) -> Interval | None:
        """Mean over every observation; None when there is none."""
        return self._interval(lambda weights: _weighted_mean(weights, data))

    def ratio(self, data: PerProblem, baseline: PerProblem) -> Interval | None:
        """Mean of ``data`` divided by the mean of ``baseline`` (a cost multiple), with both resampled
        by the same problems; None when either is empty or the baseline's mean is 0."""

        def statistic(weights: Sequence[int]) -> float | None:
            mean, base = _weighted_mean(weights, data), _weighted_mean(weights, baseline)
            return None if mean is None or not base else mean / base

        return self._interval(statistic)

    def total(self, values: Sequence[float]) -> Interval | None:
        """Sum over problems (a count such as regression errors); None when there are no problems."""
        if not self.problems:
            return None
        self._check(len(values))
        return self._interval(lambda weights: _dot(weights, values))

    def _interval(self, statistic: Callable[[Sequence[int]], float | None]) -> Interval | None:
        """The statistic on the problems as they are, and the percentile interval of its resamples
        (resamples where it is undefined, such as an empty baseline, are left out)."""
        value = statistic([1] * self.problems)
        if value is None:
            return None
        draws = sorted(s for w in self.weights if (s := statistic(w)) is not None)
        if not draws:
            return Interval(value, value, value)
        tail, last = (1 - self.level) / 2, len(draws) - 1
        return Interval(value, draws[int(tail * last)], draws[int((1 - tail) * last)])

    def _check(self, length: int) -> None:
        if length != self.problems:
            raise ValueError(f"expected {self.problems} per-problem values, got {length}")


def _draw(rng: random.Random, problems: int) -> list[int]:
    weights = [0] * problems
    for index in rng.choices(range(problems), k=problems):
        weights[index] += 1
    return weights


def _dot(weights: Sequence[int], values: Sequence[float]) -> float:
    return float(sum(map(operator.mul, weights, values)))


def _weighted_mean(weights: Sequence[int], data: PerProblem) -> float | None:
    if len(data.sums) != len(weights) or len(data.counts) != len(weights):
        raise ValueError(f"expected {len(weights)} per-problem sums and counts, "
                         f"got {len(data.sums)} and {len(data.counts)}")  # fmt: skip
    count = _dot(weights, data.counts)
    return _dot(weights, data.sums) / count if count else None
