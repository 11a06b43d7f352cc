"""Measures of selecting strategies (``codet``, ``verified``): how good the generated tests are, how
often the choice is right when a right candidate exists, and refinement at equal tokens."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from refinelab.metrics._refinement import Rate
from refinelab.records import ScoredAttempt, ScoredTrajectory


def generated_test_accuracy(trajectories: Sequence[ScoredTrajectory]) -> Rate:
    """Generated tests the reference solution passes, of those judged (problems with a reference only),
    as Reflexion's test-accuracy runs report."""
    judged = [t for t in trajectories if t.generated_correct is not None]
    return Rate(sum(t.generated_correct or 0 for t in judged), sum(t.generated_tests for t in judged))


def tests_generated(trajectories: Sequence[ScoredTrajectory]) -> Rate:
    """Trajectories in which the strategy wrote at least one test, of all: every one for ``codet`` and
    ``verified``; for ``exec-refine``, the problems that had no visible tests (``when_no_tests="generate"``)."""
    return Rate(sum(t.generated_tests > 0 for t in trajectories), len(trajectories))


def selection_accuracy(trajectories: Sequence[ScoredTrajectory]) -> Rate:
    """Trajectories whose chosen program passes the hidden tests, of those where any candidate does:
    how well the strategy picks when there is something right to pick."""
    eligible = [t for t in trajectories if any(a.hidden_passed for a in t.attempts)]
    return Rate(sum(t.passed for t in eligible), len(eligible))


@dataclass(frozen=True)
class AtEqualTokens:
    """One strategy against another given the tokens the first spent on each problem."""

    problems: int
    """Problems (x repeats) both ran."""
    reference: float
    """The first strategy's pass rate."""
    other: float
    """The other's pass rate when cut at the first's tokens on each problem."""
    reference_tokens: float
    """Tokens the first spent per problem, on average."""
    other_tokens: float
    """Tokens the other spent per problem within the cut, on average."""


def refinement_at_equal_tokens(
    reference: Sequence[ScoredTrajectory], other: Sequence[ScoredTrajectory]
) -> AtEqualTokens | None:
    """For each problem both ran, stop ``other`` (an iterative strategy) where its tokens would exceed
    what ``reference`` spent: its answer is then its last attempt within them (at least its first), or
    its own final answer when it finished within them. ``None`` when they share no problem."""
    spent = {(t.problem, t.repeat): t for t in reference}
    rows = []
    for trajectory in other:
        mine = spent.get((trajectory.problem, trajectory.repeat))
        if mine is None or not trajectory.attempts:
            continue
        answer, used = _cut(trajectory, mine.tokens)
        rows.append((float(mine.passed), float(answer.hidden_passed), float(mine.tokens), float(used)))
    if not rows:
        return None
    n = len(rows)
    return AtEqualTokens(n, *(sum(r[i] for r in rows) / n for i in range(4)))


def _cut(trajectory: ScoredTrajectory, tokens: int) -> tuple[ScoredAttempt, int]:
    if trajectory.tokens <= tokens and trajectory.final is not None:
        return trajectory.attempts[trajectory.final], trajectory.tokens
    used = trajectory.test_tokens + trajectory.attempts[0].tokens
    answer = trajectory.attempts[0]
    for attempt in trajectory.attempts[1:]:
        if used + attempt.tokens > tokens:
            break
        answer, used = attempt, used + attempt.tokens
    return answer, used
