"""Stated confidence against correctness: Brier score and reliability bins."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from refinelab.records import ScoredTrajectory


@dataclass(frozen=True)
class Bin:
    """Predictions whose confidence fell in ``[low, high)`` (the last bin includes 1)."""

    low: float
    """Lower edge."""
    high: float
    """Upper edge."""
    count: int
    """Predictions in the bin."""
    mean_confidence: float | None
    """Their mean stated confidence."""
    accuracy: float | None
    """Share that were right."""


def brier(pairs: Sequence[tuple[float, bool]]) -> float | None:
    """Mean squared gap between stated confidence and outcome (0 is perfect; always saying 0.5 gives 0.25)."""
    return sum((p - float(y)) ** 2 for p, y in pairs) / len(pairs) if pairs else None


def reliability(pairs: Sequence[tuple[float, bool]], bins: int = 5) -> list[Bin]:
    """Equal-width bins of confidence with the accuracy inside each."""
    found: list[list[tuple[float, bool]]] = [[] for _ in range(bins)]
    for p, y in pairs:
        found[min(int(p * bins), bins - 1)].append((p, y))
    return [
        Bin(
            i / bins,
            (i + 1) / bins,
            len(group),
            sum(p for p, _ in group) / len(group) if group else None,
            sum(y for _, y in group) / len(group) if group else None,
        )
        for i, group in enumerate(found)
    ]


def actor_confidence(trajectories: Sequence[ScoredTrajectory]) -> list[tuple[float, bool]]:
    """(stated confidence, passes the hidden tests) for every attempt that stated one."""
    return [
        (_clip(a.confidence), a.hidden_passed) for t in trajectories for a in t.attempts if a.confidence is not None
    ]


def critic_confidence(trajectories: Sequence[ScoredTrajectory]) -> list[tuple[float, bool]]:
    """(stated confidence in the verdict, the verdict matched the hidden tests) for every critique with one."""
    return [
        (_clip(a.critic_confidence), (a.critic_verdict == "pass") == a.hidden_passed)
        for t in trajectories
        for a in t.attempts
        if a.critic_confidence is not None and a.critic_verdict is not None
    ]


def _clip(value: float) -> float:
    return min(max(value, 0.0), 1.0)
