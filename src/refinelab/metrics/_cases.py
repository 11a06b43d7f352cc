"""The cases behind the counts: which attempts and trajectories a metric counts.

Each count in :mod:`refinelab.metrics` that a reader may want to inspect one by one (regression
errors, the critic's false rejections and acceptances, improvements, problems where configurations
disagree) is the length of a list computed here, so a viewer that lists the cases lists exactly what
the table counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Literal

from refinelab.records import ScoredAttempt, ScoredTrajectory

CriticCall = Literal["true_accept", "false_accept", "true_reject", "false_reject"]
"""A critic verdict judged against the hidden tests: accepting is saying pass; rejecting is refine or redraft."""


def rejected(attempt: ScoredAttempt) -> bool:
    """The critic asked for another attempt (refine or redraft)."""
    return attempt.critic_verdict in ("refine", "redraft")


def critic_call(attempt: ScoredAttempt) -> CriticCall | None:
    """How the critic's verdict on this attempt compares with the hidden tests; None without a
    readable verdict."""
    if attempt.critic_verdict is None:
        return None
    accept = attempt.critic_verdict == "pass"
    right = accept == attempt.hidden_passed
    return ("true_" if right else "false_") + ("accept" if accept else "reject")  # type: ignore[return-value]


def regression_error_attempts(trajectory: ScoredTrajectory) -> list[int]:
    """Indices of passing attempts the critic rejected and the actor then refined into a failing one
    (a regression error; the next attempt is the broken one). A trajectory that begins with samples
    (sampling, codet, verified) has none: its next attempt is another candidate, not the rejected one
    refined, whatever a critic consulted on a tie said."""
    attempts = trajectory.attempts
    if attempts and attempts[0].origin == "sample":
        return []
    return [
        attempt.index
        for attempt, following in pairwise(attempts)
        if attempt.hidden_passed and rejected(attempt) and not following.hidden_passed
    ]


def critic_call_attempts(trajectory: ScoredTrajectory, call: CriticCall) -> list[int]:
    """Indices of the attempts whose critic verdict was ``call``."""
    return [a.index for a in trajectory.attempts if critic_call(a) == call]


def improved(trajectory: ScoredTrajectory) -> bool:
    """The first attempt fails the hidden tests and the returned answer passes."""
    return bool(trajectory.attempts) and not trajectory.attempts[0].hidden_passed and trajectory.passed


def worsened(trajectory: ScoredTrajectory) -> bool:
    """The first attempt passes the hidden tests and the returned answer fails."""
    return bool(trajectory.attempts) and trajectory.attempts[0].hidden_passed and not trajectory.passed


def disagreements(trajectories: Sequence[ScoredTrajectory]) -> list[tuple[str, int]]:
    """``(problem, repeat)`` pairs, in first-seen order, where some configuration's returned answer
    passes the hidden tests and another's fails."""
    outcomes: dict[tuple[str, int], set[bool]] = {}
    for trajectory in trajectories:
        outcomes.setdefault((trajectory.problem, trajectory.repeat), set()).add(trajectory.passed)
    return [key for key, seen in outcomes.items() if len(seen) == 2]
