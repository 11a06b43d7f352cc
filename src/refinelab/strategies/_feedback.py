"""Turning visible-test results into feedback for the actor, and condensing history between rounds.

Three feedback formats (switchable, for ablations): ``raw`` (exception, traceback, assertion text),
``diff`` (expected vs observed for each failing test) and ``summary`` (a deterministic plain-language
count of which tests failed how; no model involved).
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from refinelab.problems import CallTest, Problem, StdioTest, Test
from refinelab.sandbox import RunResult, TestOutcome

FeedbackFormat = Literal["raw", "diff", "summary"]
MemoryPolicy = Literal["full", "last", "compressed"]

_MAX_TEST_TEXT = 400


def describe_test(test: Test) -> str:
    """A short description of a visible test, as the actor may see it."""
    if isinstance(test, CallTest):
        return test.expr
    if isinstance(test, StdioTest):
        return f"input {_clip(test.stdin)!r}"
    return _clip(test.code)


def _clip(text: str, limit: int = _MAX_TEST_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def feedback(problem: Problem, result: RunResult, style: FeedbackFormat, *, kind: str = "visible") -> str:
    """Feedback on a run of the problem's visible tests, in the chosen format; ``kind`` names them to the
    actor (``generated`` where they are tests the actor wrote itself, not the problem's)."""
    failing = [(t, o) for t, o in zip(problem.visible_tests, result.outcomes) if not o.passed]
    if style == "summary":
        return _summary(len(result.outcomes), failing, kind)
    lines = [f"{len(failing)} of {len(result.outcomes)} {kind} tests failed."]
    for test, outcome in failing:
        lines.append(_raw(test, outcome) if style == "raw" else _diff(test, outcome))
    return "\n".join(lines)


def _raw(test: Test, outcome: TestOutcome) -> str:
    head = f"Test {describe_test(test)}: {outcome.verdict}"
    if outcome.traceback:
        return f"{head}\n{_clip(outcome.traceback, 1500)}"
    return f"{head}: {outcome.message}" if outcome.message else head


def _diff(test: Test, outcome: TestOutcome) -> str:
    if outcome.verdict == "fail":
        expected, observed = _clip(outcome.expected or ""), _clip(outcome.actual or "")
    else:
        expected, observed = _expected(test), f"{outcome.verdict} ({outcome.error_type or outcome.message})"
    return f"Test {describe_test(test)}\n  expected: {expected}\n  observed: {observed}"


def _expected(test: Test) -> str:
    if isinstance(test, CallTest):
        return _clip(repr(test.expected))
    if isinstance(test, StdioTest):
        return _clip(repr(test.expected))
    return "no exception"


def _summary(total: int, failing: list[tuple[Test, TestOutcome]], kind: str) -> str:
    if not failing:
        return f"All {total} {kind} tests passed."
    kinds = Counter(outcome.error_type or outcome.verdict for _, outcome in failing)
    parts = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
    return f"{len(failing)} of {total} {kind} tests failed ({parts}); first failing: {describe_test(failing[0][0])}."


def compress(rounds: list[tuple[str, str]]) -> str:
    """A deterministic digest of earlier rounds (what was tried, how it failed), one line each."""
    lines = []
    for index, (code, outcome) in enumerate(rounds):
        first_line = next((line.strip() for line in code.splitlines() if line.strip().startswith("def ")), "")
        lines.append(f"Attempt {index}: {first_line or 'program'} -> {outcome.splitlines()[0] if outcome else ''}")
    return "\n".join(lines)
