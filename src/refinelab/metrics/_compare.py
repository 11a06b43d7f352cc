"""Comparing strategies: paired tests on the same problems, cost multiples, and refinement against
sampling at the same token budget."""

from __future__ import annotations

import math
import operator
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from refinelab.metrics._passk import mean_pass_at_k
from refinelab.metrics._refinement import sampled
from refinelab.records import ScoredAttempt, ScoredTrajectory, total_cost


@dataclass(frozen=True)
class Paired:
    """Two strategies' hidden-test verdicts on the same (problem, repeat) pairs."""

    a: tuple[bool, ...]
    """Strategy A's verdicts."""
    b: tuple[bool, ...]
    """Strategy B's, in the same order."""
    keys: tuple[tuple[str, int], ...] = ()
    """The ``(problem, repeat)`` of each pair, in the same order (empty when built by hand)."""

    @property
    def only_a(self) -> int:
        """Pairs only A passed."""
        return sum(map(operator.gt, self.a, self.b))  # True > False only

    @property
    def only_b(self) -> int:
        """Pairs only B passed."""
        return sum(map(operator.gt, self.b, self.a))

    @property
    def both(self) -> int:
        """Pairs both passed."""
        return sum(map(operator.and_, self.a, self.b))

    @property
    def neither(self) -> int:
        """Pairs neither passed."""
        return sum(not x and not y for x, y in zip(self.a, self.b))

    def only(self, side: Literal["a", "b"]) -> list[tuple[str, int]]:
        """The ``(problem, repeat)`` pairs only ``side`` passed (as many as :attr:`only_a` or :attr:`only_b`)."""
        first, second = (self.a, self.b) if side == "a" else (self.b, self.a)
        return [key for key, x, y in zip(self.keys, first, second) if x and not y]


def paired(a: Sequence[ScoredTrajectory], b: Sequence[ScoredTrajectory]) -> Paired:
    """Align two configurations' trajectories by (problem, repeat); unmatched ones are left out."""
    by_key = {(t.problem, t.repeat): t.passed for t in b}
    keys = [(t.problem, t.repeat) for t in a if (t.problem, t.repeat) in by_key]
    passed_a = {(t.problem, t.repeat): t.passed for t in a}
    return Paired(tuple(passed_a[k] for k in keys), tuple(by_key[k] for k in keys), tuple(keys))


EXACT_DISCORDANT = 4096
"""Up to this many discordant pairs the McNemar tail is summed in integers (exact, correctly rounded);
beyond it, in log space (the integers' cost grows with the square of the count)."""


def mcnemar(pairs: Paired) -> float:
    """Exact two-sided McNemar p-value: the discordant pairs under a fair coin.

    Linear in the discordant pairs: each binomial coefficient comes from the one before it, in integers
    up to :data:`EXACT_DISCORDANT` pairs and in log space beyond (relative error about 1e-10, checked
    against scipy's ``binomtest`` in the tests).
    """
    only_a, only_b = pairs.only_a, pairs.only_b
    low, n = min(only_a, only_b), only_a + only_b
    if n == 0:
        return 1.0
    tail = _exact_tail(n, low) if n <= EXACT_DISCORDANT else math.exp(_log_tail(n, low))
    return min(1.0, 2 * tail)


def _exact_tail(n: int, low: int) -> float:
    """P(X <= low) for X ~ Binomial(n, 1/2), summed in integers and divided once."""
    term = total = 1
    for i in range(low):
        term = term * (n - i) // (i + 1)
        total += term
    tail: float = total / 2**n
    return tail


def _log_tail(n: int, low: int) -> float:
    """log P(X <= low) for X ~ Binomial(n, 1/2) and ``low <= n / 2``: the largest term (at ``low``) times
    the sum of the others relative to it, walking down until they no longer count."""
    log_top = math.lgamma(n + 1) - math.lgamma(low + 1) - math.lgamma(n - low + 1) - n * math.log(2)
    term = total = 1.0
    for i in range(low, 0, -1):
        term *= i / (n - i + 1)
        total += term
        if term < 1e-17 * total:
            break
    return log_top + math.log(total)


def bootstrap_difference(
    pairs: Paired, *, resamples: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float, float] | None:
    """Pass rate of B minus A, with a percentile bootstrap interval over paired problems (seeded)."""
    n = len(pairs.a)
    if n == 0:
        return None
    diffs = [float(y) - float(x) for x, y in zip(pairs.a, pairs.b)]
    rng = random.Random(seed)  # noqa: S311 - resampling, not cryptography
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    tail = (1 - level) / 2
    low, high = means[int(tail * (resamples - 1))], means[int((1 - tail) * (resamples - 1))]
    return sum(diffs) / n, low, high


@dataclass(frozen=True)
class PairedComparison:
    """Two configurations (of one run or two) on the (problem, repeat) pairs both ran, A against B: the
    numbers ``refinelab report`` (against single pass, and ``--baseline``) and the viewer's Compare page
    show, computed once here."""

    pairs: int
    """Pairs both ran."""
    pass_a: float | None
    """A's pass rate over the pairs (``None`` without pairs)."""
    pass_b: float | None
    """B's pass rate over the pairs."""
    both: int
    """Pairs both solved."""
    neither: int
    """Pairs neither solved."""
    only_a: int
    """Pairs only A solved."""
    only_b: int
    """Pairs only B solved."""
    p_value: float
    """Exact two-sided McNemar p-value (:func:`mcnemar`)."""
    difference: tuple[float, float, float] | None
    """B - A over the pairs with its 95% paired bootstrap interval (:func:`bootstrap_difference`)."""
    only_a_keys: tuple[tuple[str, int], ...]
    """The pairs only A solved."""
    only_b_keys: tuple[tuple[str, int], ...]
    """The pairs only B solved."""
    unpaired_a: tuple[tuple[str, int], ...]
    """(problem, repeat) only A ran: left out of every number above."""
    unpaired_b: tuple[tuple[str, int], ...]
    """(problem, repeat) only B ran: left out of every number above."""
    tokens_a: float | None = None
    """A's mean tokens per pair."""
    tokens_b: float | None = None
    """B's mean tokens per pair."""


def compare_paired(a: Sequence[ScoredTrajectory], b: Sequence[ScoredTrajectory]) -> PairedComparison:
    """A against B, paired by (problem, repeat): what each solved, the exact McNemar test, B - A with its
    bootstrap interval, and the problems only one side ran (kept out of the numbers)."""
    pairs = paired(a, b)
    keys_a, keys_b = {(t.problem, t.repeat) for t in a}, {(t.problem, t.repeat) for t in b}
    n = len(pairs.a)
    shared = set(pairs.keys)
    return PairedComparison(
        pairs=n,
        pass_a=sum(pairs.a) / n if n else None,
        pass_b=sum(pairs.b) / n if n else None,
        both=pairs.both,
        neither=pairs.neither,
        only_a=pairs.only_a,
        only_b=pairs.only_b,
        p_value=mcnemar(pairs),
        difference=bootstrap_difference(pairs),
        only_a_keys=tuple(pairs.only("a")),
        only_b_keys=tuple(pairs.only("b")),
        unpaired_a=tuple(sorted(keys_a - keys_b)),
        unpaired_b=tuple(sorted(keys_b - keys_a)),
        tokens_a=_mean_tokens(a, shared),
        tokens_b=_mean_tokens(b, shared),
    )


def _mean_tokens(trajectories: Sequence[ScoredTrajectory], keys: set[tuple[str, int]]) -> float | None:
    used = [t.tokens for t in trajectories if (t.problem, t.repeat) in keys]
    return sum(used) / len(used) if used else None


def trajectories_pass_at_k(trajectories: Sequence[ScoredTrajectory], k: int) -> float | None:
    """Unbiased pass@k: over a sampling strategy's samples of each problem, or else over the repeats'
    returned answers; None when some problem has fewer than ``k``."""
    counts: dict[str, list[bool]] = {}
    for trajectory in trajectories:
        outcomes = counts.setdefault(trajectory.problem, [])
        if sampled(trajectory):  # the samples only: a refinement of one is not another sample
            outcomes.extend(a.hidden_passed for a in trajectory.attempts if a.origin == "sample")
        else:
            outcomes.append(trajectory.passed)
    return mean_pass_at_k(((len(v), sum(v)) for v in counts.values()), k)


@dataclass(frozen=True)
class Means:
    """Mean use per problem."""

    tokens: float
    """Tokens (prompt + completion, actor + critic)."""
    seconds: float
    """Model time."""
    cost_usd: float | None
    """Dollars; None when any price is unknown."""


def means(trajectories: Sequence[ScoredTrajectory]) -> Means | None:
    """Mean tokens, model time and cost per trajectory."""
    if not trajectories:
        return None
    n = len(trajectories)
    total = total_cost(t.cost_usd for t in trajectories)
    cost = None if total is None else total / n
    return Means(sum(t.tokens for t in trajectories) / n, sum(t.latency_seconds for t in trajectories) / n, cost)


def multiple(value: float | None, baseline: float | None) -> float | None:
    """``value / baseline``, or None when either is unknown or the baseline is 0."""
    if value is None or baseline is None or baseline == 0:
        return None
    return value / baseline


@dataclass(frozen=True)
class EqualTokens:
    """Sampling given the tokens refinement spent on each problem."""

    problems: int
    """Problems compared."""
    refinement: float
    """Refinement's pass rate."""
    sampling: float
    """Pass rate of sampling's choice (by visible tests) among the samples that fit in the same tokens."""
    any_sample: float
    """Share where any of those samples passes (an oracle's upper bound)."""
    mean_samples: float
    """Samples that fit, on average (at least one)."""


def sampling_at_equal_tokens(
    refinement: Sequence[ScoredTrajectory], sampling: Sequence[ScoredTrajectory]
) -> EqualTokens | None:
    """For each problem both ran: take samples in order while their tokens fit within what refinement
    spent on it (at least one), choose among them as the sampling strategy does, and score."""
    spent = {(t.problem, t.repeat): t for t in refinement}
    rows = []
    for trajectory in sampling:
        reference = spent.get((trajectory.problem, trajectory.repeat))
        if reference is None or not trajectory.attempts:
            continue
        prefix = _prefix_within(trajectory.attempts, reference.tokens)
        rows.append(
            (reference.passed, _select(prefix).hidden_passed, any(a.hidden_passed for a in prefix), len(prefix))
        )
    if not rows:
        return None
    n = len(rows)
    return EqualTokens(n, *(sum(float(r[i]) for r in rows) / n for i in range(4)))


def _prefix_within(attempts: Sequence[ScoredAttempt], tokens: int) -> list[ScoredAttempt]:
    chosen, used = [attempts[0]], attempts[0].tokens
    for attempt in attempts[1:]:
        if used + attempt.tokens > tokens:
            break
        chosen.append(attempt)
        used += attempt.tokens
    return chosen


def _select(attempts: Sequence[ScoredAttempt]) -> ScoredAttempt:
    """The sampling strategy's rule: first passing the visible tests, else most passed, ties earliest."""
    passing = [a for a in attempts if a.visible_passed]
    return passing[0] if passing else max(attempts, key=lambda a: (a.visible_pass_count, -a.index))
