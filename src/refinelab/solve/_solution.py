"""The result of a solve: the code, whether it is verified, the evidence, and the whole trajectory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from refinelab.models import Usage
from refinelab.problems import ProblemKind
from refinelab.sandbox import TestOutcome
from refinelab.solve._tests import TestOrigin
from refinelab.strategies import Trajectory

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class TestCheck:
    """One test and how the returned code did on it."""

    test: str
    """The test as written (``fib(1) == [0]``, an assert, or ``'1 2\\n' => '3'``)."""
    origin: TestOrigin
    """given, docstring, io or generated."""
    outcome: TestOutcome | None
    """What happened (``None`` when no code could be run)."""

    @property
    def passed(self) -> bool:
        """The code passed this test."""
        return self.outcome is not None and self.outcome.passed

    @property
    def label(self) -> str:
        """The test in one line: a test function by its call (``test_five()``), any other as written."""
        return self.test.splitlines()[-1] if "\n" in self.test else self.test

    def to_json(self) -> dict[str, object]:
        """``test``, ``origin``, ``passed``, ``verdict`` and, on failure, ``message``."""
        data: dict[str, object] = {"test": self.test, "origin": self.origin, "passed": self.passed}
        data["verdict"] = None if self.outcome is None else self.outcome.verdict
        if self.outcome is not None and not self.outcome.passed and self.outcome.message:
            data["message"] = self.outcome.message
        return data


STOPPED = {
    "accepted": "the critic accepted it",
    "visible_tests_passed": "the tests passed",
    "max_iterations": "iteration cap reached",
    "single_pass": "single pass",
    "sampled": "every sample drawn",
    "budget": "budget spent",
    "critic_unreadable": "the critic's reply could not be read",
    "agreement": "chosen by agreement",
    "verified": "verified's stopping rule met",
    "interrupted": "interrupted",
    "no_tests": "no tests to refine against",
}
"""Why a strategy stopped (its ``stop_reason``), in words."""
_OWN_CHECKS = frozenset({"accepted", "visible_tests_passed", "agreement", "verified"})


@dataclass(frozen=True)
class Evidence:
    """Why the result is, or is not, verified, and what it cost."""

    tests: tuple[TestCheck, ...]
    """Every given or generated test with its outcome on the returned code."""
    generated: bool
    """No tests were given: the tests were written by the model, and verified means agreeing with them."""
    attempts: int
    """Programs the strategy produced."""
    chosen: int | None
    """Index of the attempt returned (the strategy's answer, or the best attempt when that fails)."""
    usage: Usage
    """Tokens of every model call (cached replies included)."""
    cost_usd: float | None
    """Dollars; ``None`` when a price is unknown."""
    seconds: float
    """Wall time of the solve."""
    stop_reason: str
    """Why the strategy stopped (``interrupted`` after a cancel or Ctrl-C)."""
    model: str
    """The model that wrote the code."""
    strategy: str
    """The strategy, with its arguments."""
    cached: bool
    """Every reply came from the response cache (a repeated request)."""
    run_id: str | None = None
    """The run the solve is recorded as in the store (``None`` when not recorded)."""
    effort: str | None = None
    """The reasoning effort every call asked for (``None``: the model's default)."""

    @property
    def passed(self) -> int:
        """Tests the returned code passes."""
        return sum(check.passed for check in self.tests)

    @property
    def deciding(self) -> tuple[TestCheck, ...]:
        """The tests the verdict rests on: the given ones, or the generated ones when none were given."""
        return self.tests if self.generated else tuple(c for c in self.tests if c.origin != "generated")

    @property
    def agreeing(self) -> tuple[TestCheck, ...]:
        """Tests the strategy generated beside the given ones (shown, not part of the verdict)."""
        return () if self.generated else tuple(c for c in self.tests if c.origin == "generated")


@dataclass(frozen=True)
class Solution:
    """What :func:`refinelab.solve` returns; shows itself in a notebook and with rich."""

    code: str | None
    """The returned program (``None`` when the model never produced readable code)."""
    verified: bool
    """The code passes every given test (or, with none given, every generated one)."""
    kind: ProblemKind
    """``function`` or ``stdio``."""
    evidence: Evidence
    """The tests, attempts, tokens, time and cost behind the verdict."""
    trajectory: Trajectory
    """Every attempt the strategy made, with the feedback that drove each refinement."""
    schema_version: int = SCHEMA_VERSION
    """Version of this record's layout."""

    @property
    def verdict(self) -> str:
        """``VERIFIED`` or ``UNVERIFIED`` with the count behind it."""
        evidence = self.evidence
        which = "generated" if evidence.generated else "given"
        deciding, agreeing = evidence.deciding, evidence.agreeing
        if not deciding:
            return "UNVERIFIED: no tests to check it against (none given or in the prompt, and none generated)"
        counts = f"passes {sum(c.passed for c in deciding)} of {len(deciding)} {which} tests"
        if agreeing:
            counts += f"; agrees with {sum(c.passed for c in agreeing)} of {len(agreeing)} generated tests"
        return f"{'VERIFIED' if self.verified else 'UNVERIFIED'}: {counts}"

    @property
    def stopped(self) -> str:
        """Why the strategy stopped, in words that agree with the verdict: a strategy that stopped because
        its own check passed (``verified``'s stopping rule, the tests it ran, a critic) says so, and an
        unverified result says that check was not this verdict's tests."""
        reason = self.evidence.stop_reason
        words = STOPPED.get(reason, reason)
        if not self.verified and reason in _OWN_CHECKS:
            return f"{words}, by its own check (not the verdict's tests)"
        return words

    def to_json(self) -> dict[str, object]:
        """The ``--json`` object: code, verified, kind, tests, attempts, usage (its thinking tokens included),
        cost_usd, seconds, the reasoning effort, and more (keys named as ``refinelab export`` names them)."""
        evidence = self.evidence
        usage = evidence.usage
        return {
            "code": self.code,
            "verified": self.verified,
            "kind": self.kind,
            "tests": [check.to_json() for check in evidence.tests],
            "generated_tests": evidence.generated,
            "attempts": evidence.attempts,
            "chosen_attempt": evidence.chosen,
            "usage": {
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "total_tokens": usage.total_tokens,
                "reasoning_tokens": usage.reasoning_tokens,
                "estimated": usage.estimated,
            },
            "reasoning_effort": evidence.effort,
            "cost_usd": evidence.cost_usd,
            "seconds": round(evidence.seconds, 3),
            "stop_reason": evidence.stop_reason,
            "model": evidence.model,
            "strategy": evidence.strategy,
            "cached": evidence.cached,
            "run_id": evidence.run_id,
            "schema_version": self.schema_version,
        }

    def _repr_html_(self) -> str:
        from refinelab.solve._render import solution_html

        return solution_html(self)

    def __rich__(self) -> Any:
        from refinelab.solve._render import solution_rich

        return solution_rich(self)

    def __str__(self) -> str:
        return f"{self.verdict}\n{self.code or '(no code)'}"
