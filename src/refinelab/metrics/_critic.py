"""How good the critic's verdicts were, judged against the hidden tests."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from refinelab.metrics._cases import critic_call
from refinelab.metrics._refinement import Rate
from refinelab.records import ScoredTrajectory


@dataclass(frozen=True)
class ConfusionMatrix:
    """Critic verdicts (accept = pass; reject = refine or redraft) against hidden-test truth."""

    true_accept: int = 0
    """Accepted code that passes."""
    false_accept: int = 0
    """Accepted code that fails (the critic let a bug through)."""
    true_reject: int = 0
    """Rejected code that fails."""
    false_reject: int = 0
    """Rejected code that passes (the hallucinated flaw that invites a regression)."""

    @property
    def total(self) -> int:
        """Verdicts counted."""
        return self.true_accept + self.false_accept + self.true_reject + self.false_reject

    @property
    def accept_rate(self) -> Rate:
        """Verdicts that accepted, of all."""
        return Rate(self.true_accept + self.false_accept, self.total)

    @property
    def false_rejection_rate(self) -> Rate:
        """Correct code rejected, of correct code judged."""
        return Rate(self.false_reject, self.false_reject + self.true_accept)

    @property
    def false_acceptance_rate(self) -> Rate:
        """Wrong code accepted, of wrong code judged."""
        return Rate(self.false_accept, self.false_accept + self.true_reject)

    @property
    def accuracy(self) -> Rate:
        """Verdicts that matched the tests."""
        return Rate(self.true_accept + self.true_reject, self.total)


def confusion_matrix(trajectories: Sequence[ScoredTrajectory]) -> ConfusionMatrix:
    """Every readable verdict of the critic, against whether the judged attempt passes the hidden tests."""
    counts = Counter(call for t in trajectories for a in t.attempts if (call := critic_call(a)) is not None)
    return ConfusionMatrix(counts["true_accept"], counts["false_accept"], counts["true_reject"], counts["false_reject"])


def critic_coverage(trajectories: Sequence[ScoredTrajectory]) -> Rate:
    """Attempts with a readable critic verdict, of all attempts: which attempts the confusion matrix
    covers. Self-Refine and Self-Redraft do not ask about the attempt at the iteration cap (nothing could
    follow the verdict) unless told to (``critique_last``), and a trajectory stopped by an unreadable
    verdict or the budget has an attempt without one."""
    attempts = [a for t in trajectories for a in t.attempts]
    return Rate(sum(a.critic_verdict is not None for a in attempts), len(attempts))


@dataclass(frozen=True)
class DecisionCount:
    """How often the critic made one decision, and how often it led to passing code."""

    count: int
    """Times the critic said it."""
    led_to_pass: int
    """For pass: the accepted attempt passes; for refine or redraft: the next attempt passes."""


def decisions(trajectories: Sequence[ScoredTrajectory]) -> dict[str, DecisionCount]:
    """pass / refine / redraft counts and their outcomes (a decision with no next attempt, because a
    budget ended the run, counts as not leading to a pass)."""
    found: dict[str, list[int]] = {"pass": [0, 0], "refine": [0, 0], "redraft": [0, 0]}
    for trajectory in trajectories:
        attempts = trajectory.attempts
        for i, attempt in enumerate(attempts):
            verdict = attempt.critic_verdict
            if verdict is None:
                continue
            judged = attempt if verdict == "pass" else (attempts[i + 1] if i + 1 < len(attempts) else None)
            found[verdict][0] += 1
            found[verdict][1] += judged is not None and judged.hidden_passed
    return {verdict: DecisionCount(count, passed) for verdict, (count, passed) in found.items()}
