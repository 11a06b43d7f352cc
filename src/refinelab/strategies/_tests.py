"""What the selecting strategies share: writing tests through the budget, hiding the visible tests, the
generated-test pool, agreement groups as decisions, and choosing among samples by dual agreement."""

from __future__ import annotations

from dataclasses import dataclass, replace

from refinelab.models import GenerateConfig
from refinelab.problems import Problem, Test
from refinelab.strategies._env import Env
from refinelab.strategies._trajectory import Attempt, Decision, TestGeneration
from refinelab.verification import (
    Agreement,
    GeneratedTests,
    MatrixJob,
    Score,
    dual_agreement,
    parse_tests,
    pooled,
    run_matrices,
    test_request,
)

DEFAULT_TESTS_PER_SAMPLE = 10
"""Tests asked for in each test-writing call, unless a strategy says otherwise."""
TEST_SAMPLE_OFFSET = 500_000
"""Sample indices of test-writing calls start here, so they never share a cache entry with a program."""


@dataclass(frozen=True)
class TestPlan:
    """How a selecting strategy gets its tests."""

    samples: int
    """Test-writing calls (``m``)."""
    per_sample: int
    """Tests asked for in each call."""
    limit: int | None
    """Tests kept from each reply (its first ones; CodeT keeps 5); ``None`` keeps all."""
    config: GenerateConfig
    """Settings of the test-writing calls."""


def hidden_view(problem: Problem, hide_visible: bool) -> Problem:
    """The problem as the strategy may see it: without its visible tests in the execution-free setting
    (they are then never shown to a model nor run)."""
    return replace(problem, visible_tests=()) if hide_visible else problem


async def write_tests(env: Env, problem: Problem, plan: TestPlan) -> tuple[list[TestGeneration], str | None]:
    """The test-writing calls (samples of one request, drawn by :meth:`Env.generate_n`), in sample order;
    and the budget note if the budget refused some (their tokens count in the budget like any call)."""
    messages = test_request(problem, count=plan.per_sample)
    drawn = await env.generate_n("actor", messages, plan.config, n=plan.samples, first_sample=TEST_SAMPLE_OFFSET)
    read: dict[str, GeneratedTests] = {}  # identical replies, frequent among many samples, are read once
    for text in {c.text for c in drawn.completions}:
        read[text] = parse_tests(text, problem)
    return [TestGeneration.of_reply(c, problem, read[c.text]) for c in drawn.completions], drawn.refused


def generated_pool(generations: list[TestGeneration], limit: int | None) -> tuple[Test, ...]:
    """The distinct generated tests, first seen first, at most ``limit`` from each reply."""
    return pooled([g.tests for g in generations], limit=limit)


def group_decisions(agreement: Agreement, total: int) -> list[Decision]:
    """One ``group`` decision per agreement group, best first."""
    return [
        Decision(
            "group",
            f"{len(g.members)} program(s) pass the same {len(g.passed)} of {total} tests (score {g.score:.3g})",
            known_passed=len(g.passed),
            known_total=total,
            members=g.members,
        )
        for g in agreement.groups
    ]


def tests_decision(visible: int, total: int) -> Decision:
    """The ``tests`` decision: what the programs are judged by."""
    return Decision("tests", f"judged by {total} tests: {visible} visible, {total - visible} generated")


async def pass_matrix(
    env: Env, programs: list[str | None], tests: tuple[Test, ...], visible: int, problem: Problem
) -> list[frozenset[int]]:
    """Which tests each program passes: the first ``visible`` (the problem's own) on the sandbox's limit,
    the generated ones on the agreement's (``env.agreement``), in shared sandbox batches."""
    own = (env.sandbox.limits.cpu_seconds,) * visible + (None,) * (len(tests) - visible)
    (passed,) = await run_matrices(env.sandbox, [MatrixJob(programs, tests, problem, own)], limits=env.agreement)
    return passed


async def agreement_choice(
    env: Env, problem: Problem, attempts: list[Attempt], tests: tuple[Test, ...], *, visible: int, score: Score
) -> tuple[int | None, list[Decision]]:
    """Run every attempt on every test (the first ``visible`` of them the problem's own); the earliest
    member of the best dual-agreement group (by ``score``), and the ``group`` and ``choose`` decisions
    that say why."""
    passed = await pass_matrix(env, [a.code for a in attempts], tests, visible, problem)
    agreement = dual_agreement(passed, score=score)
    decisions = group_decisions(agreement, len(tests))
    best = agreement.best
    if best is not None and agreement.chosen is not None:
        reason = (
            f"earliest member of the best group ({len(best.members)} program(s) passing {len(best.passed)} of "
            f"{len(tests)} tests, score {best.score:.3g})"
        )
        chosen = attempts[agreement.chosen].index
        decisions.append(
            Decision(
                "choose",
                reason,
                attempt=chosen,
                known_passed=len(best.passed),
                known_total=len(tests),
                members=best.members,
            )
        )
    return agreement.chosen, decisions
