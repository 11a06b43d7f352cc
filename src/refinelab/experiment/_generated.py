"""Generated tests and selection decisions in the store (``codet``, ``verified``), and scoring generated
tests against a problem's reference solution (their accuracy: the share the reference passes)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, replace

from refinelab.problems import Problem, Test
from refinelab.sandbox import Sandbox
from refinelab.strategies import Decision, TestGeneration, Trajectory
from refinelab.verification import test_accuracy

"""The store migration that adds generated tests and decisions (and counts test-writing calls as model
calls)."""

Key = tuple[str, str, str, int]


def test_json(test: Test) -> dict[str, object]:
    """A test as stored: its type and fields."""
    return {"type": type(test).__name__, **asdict(test)}


def save_rows(db: sqlite3.Connection, key: Key, trajectory: Trajectory) -> None:
    """Insert a trajectory's test generations and decisions (inside the caller's transaction)."""
    for index, generation in enumerate(trajectory.generations):
        db.execute(
            "INSERT INTO test_generations VALUES (" + ", ".join(["?"] * 14) + ")",  # noqa: S608 - placeholders only
            _generation_row(key, index, generation),
        )
    for seq, decision in enumerate(trajectory.decisions):
        db.execute(
            "INSERT INTO decisions VALUES (" + ", ".join(["?"] * 12) + ")",  # noqa: S608 - placeholders only
            _decision_row(key, seq, decision),
        )


def _generation_row(key: Key, index: int, generation: TestGeneration) -> tuple[object, ...]:
    usage = generation.usage
    reference = None if generation.reference_passed is None else json.dumps(list(generation.reference_passed))
    return (
        *key, index, generation.raw, json.dumps([test_json(t) for t in generation.tests], default=str),
        json.dumps(list(generation.rejected)), reference, usage.prompt_tokens, usage.completion_tokens,
        generation.cost_usd, generation.latency_seconds, int(generation.cached),
    )  # fmt: skip


def _decision_row(key: Key, seq: int, decision: Decision) -> tuple[object, ...]:
    return (
        *key, seq, decision.kind, decision.reason, decision.attempt, decision.parent, decision.known_passed,
        decision.known_total, json.dumps(list(decision.members)),
    )  # fmt: skip


Totals = tuple[int, float | None, int, int | None]
"""Test-writing tokens, their cost, tests generated, tests the reference passes (``None``: no reference)."""


def generation_totals(db: sqlite3.Connection, run_id: str) -> dict[tuple[str, str, int], Totals]:
    """Per unit: tokens and cost of the test-writing calls, generated tests, and how many of them the
    reference passes (``None`` when the problem has no reference)."""
    totals: dict[tuple[str, str, int], Totals] = {}
    rows = db.execute(
        "SELECT config, problem, repeat, prompt_tokens + completion_tokens, cost_usd, tests, reference_passed "
        "FROM test_generations WHERE run_id = ? ORDER BY config, problem, repeat, idx",
        (run_id,),
    )
    for config, problem, repeat, tokens, cost, tests, reference in rows:
        unit = (str(config), str(problem), int(repeat))
        before = totals.get(unit, (0, 0.0, 0, None))
        verdicts = None if reference is None else json.loads(reference)
        correct = None if verdicts is None else (before[3] or 0) + sum(bool(v) for v in verdicts)
        spent = None if before[1] is None or cost is None else before[1] + float(cost)
        totals[unit] = (before[0] + int(tokens), spent, before[2] + len(json.loads(tests)), correct)
    return totals


async def with_reference_verdicts(trajectory: Trajectory, problem: Problem, pool: Sandbox) -> Trajectory:
    """The trajectory with each generated test judged by the problem's reference solution (unchanged
    when the problem has none or no tests were written)."""
    if problem.reference is None or not trajectory.generations:
        return trajectory
    judged = []
    for generation in trajectory.generations:
        accuracy = await test_accuracy(pool, generation.tests, problem)
        correct = frozenset() if accuracy is None else accuracy.correct
        judged.append(replace(generation, reference_passed=tuple(i in correct for i in range(len(generation.tests)))))
    return replace(trajectory, generations=tuple(judged))
