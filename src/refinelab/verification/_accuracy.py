"""How many generated tests are right, judged by a reference solution (Reflexion's test accuracy)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from refinelab.problems import Problem, Test
from refinelab.sandbox import Limits, Sandbox
from refinelab.verification._matrix import run_matrix


@dataclass(frozen=True)
class TestAccuracy:
    """Generated tests checked against the problem's reference solution."""

    total: int
    """Tests checked."""
    correct: frozenset[int]
    """Indices of the tests the reference passes (the tests that are right)."""

    @property
    def share(self) -> float | None:
        """The share of tests the reference passes; None when there were no tests."""
        return len(self.correct) / self.total if self.total else None

    def to_json(self) -> dict[str, object]:
        """A JSON-ready record."""
        return {"total": self.total, "correct": len(self.correct), "share": self.share}


TestAccuracy.__test__ = False  # type: ignore[attr-defined]  # not a pytest test class, despite the name


async def test_accuracy(
    sandbox: Sandbox, tests: Sequence[Test], problem: Problem, *, limits: Limits | None = None
) -> TestAccuracy | None:
    """Run the problem's reference solution on generated tests: a test it fails is a wrong test.

    Returns None when the problem ships no reference solution.
    """
    if problem.reference is None:
        return None
    (passed,) = await run_matrix(sandbox, [problem.reference], tests, problem, limits=limits)
    return TestAccuracy(len(tests), passed)


test_accuracy.__test__ = False  # type: ignore[attr-defined]  # not a pytest test, despite the name
