"""Dual execution agreement (CodeT): programs that pass the same tests agree with each other and with
those tests; the largest agreement over the most tests wins.

See docs/verification.md for how the two scores relate to CodeT's released code.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Score = Literal["codet", "product"]
"""``product``: (programs in the group) x (tests they pass), as the paper states it; ``codet``: the
square root of the group size times the tests, as CodeT's released code ranks."""


@dataclass(frozen=True)
class Group:
    """Programs that pass exactly the same set of tests."""

    members: tuple[int, ...]
    """Indices of the programs, ascending."""
    passed: frozenset[int]
    """Indices of the tests every member passes (and no member passes any other)."""
    tests: int
    """Weight of the tests passed: their number, or the sum of their weights when weights were given."""
    score: float
    """The group's agreement score (see :data:`Score`)."""


@dataclass(frozen=True)
class Agreement:
    """Programs grouped by the tests they pass, best group first."""

    groups: tuple[Group, ...]
    """Every group, in rank order: higher score, then more tests, then larger, then earliest member."""
    chosen: int | None
    """The selected program: the earliest member of the best group; None when there are no programs."""
    score: Score = "codet"
    """How the groups were scored."""

    def to_json(self) -> dict[str, object]:
        """A JSON-ready record of the decision (for trajectories): every group, best first, and the choice."""
        return {
            "score": self.score,
            "chosen": self.chosen,
            "groups": [
                {"members": list(g.members), "passed": sorted(g.passed), "tests": g.tests, "score": g.score}
                for g in self.groups
            ],
        }

    @property
    def best(self) -> Group | None:
        """The first-ranked group."""
        return self.groups[0] if self.groups else None

    @property
    def tied(self) -> tuple[int, ...]:
        """Every program in a group whose score equals the best score (CodeT picks among these at
        random; its reported pass@1 is the share of them that are correct)."""
        if not self.groups:
            return ()
        top = _key(self.groups[0], self.score)
        return tuple(sorted(m for g in self.groups if _key(g, self.score) == top for m in g.members))


def dual_agreement(
    passed: Sequence[frozenset[int]], *, score: Score = "codet", weights: Sequence[int] | None = None
) -> Agreement:
    """Group programs by the exact set of tests they pass and rank the groups.

    Args:
        passed: For each program, the indices of the tests it passes (:func:`run_matrix`'s result).
        score: ``codet`` (sqrt(group size) x tests, CodeT's released ranking) or ``product``
            (group size x tests, the paper's formula).
        weights: Optional weight of each test (how many samples produced it, as CodeT counts
            duplicate tests); every test weighs 1 when omitted.

    Ties are broken deterministically: higher score (for ``codet`` the floating-point value CodeT's code
    computes and compares), then more tests passed, then the larger group, then the group holding the
    earliest program; the chosen program is that group's earliest member.
    Programs that pass nothing form a group of score 0, chosen only when no program passes a test.
    """
    members: dict[frozenset[int], list[int]] = {}
    for index, tests in enumerate(passed):
        members.setdefault(frozenset(tests), []).append(index)
    groups = [_group(tuple(m), tests, score, weights) for tests, m in members.items()]
    groups.sort(key=lambda group: _rank(group, score))
    return Agreement(tuple(groups), groups[0].members[0] if groups else None, score)


def _group(members: tuple[int, ...], tests: frozenset[int], score: Score, weights: Sequence[int] | None) -> Group:
    weight = sum(weights[t] for t in tests) if weights is not None else len(tests)
    if score == "codet":
        # CodeT's own arithmetic (tests x the float square root of the size), so its ranking is ours.
        return Group(members, tests, weight, weight * math.sqrt(len(members)))
    return Group(members, tests, weight, float(len(members) * weight))


def _key(group: Group, score: Score) -> float | int:
    """What groups are ranked and tied by. ``codet``: the floating-point score, compared exactly as
    CodeT's released code compares it, so two scores equal in exact arithmetic whose square roots round
    apart (sqrt(2) x 6 and sqrt(18) x 2) are not tied, as they are not in CodeT. ``product``: the integer."""
    return group.score if score == "codet" else len(group.members) * group.tests


def _rank(group: Group, score: Score) -> tuple[float | int, int, int, int]:
    return (-_key(group, score), -group.tests, -len(group.members), group.members[0])
