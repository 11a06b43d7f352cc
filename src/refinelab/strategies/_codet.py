"""``codet``: n programs and m test-writing samples, drawn concurrently; every program runs on every test
and the answer comes from the best dual-agreement group (CodeT). Also the pieces ``verified`` shares:
writing tests through the budget, hiding the visible tests, and the known-test pool."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Annotated

from annotated_types import Ge

from refinelab.models import GenerateConfig
from refinelab.problems import Problem, Test
from refinelab.strategies._env import BudgetExhausted, Env
from refinelab.strategies._execution import LIVECODEBENCH_CONFIG, _finish, _Request, concurrently
from refinelab.strategies._prompts import DEFAULT_PROMPTS, Prompts
from refinelab.strategies._registry import strategy
from refinelab.strategies._trajectory import Attempt, Decision, TestGeneration, Trajectory
from refinelab.verification import Agreement, Score, dual_agreement, parse_tests, pooled, run_matrix, test_request

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
    """The test-writing calls, concurrently, in sample order; and the budget note if the budget refused
    some (their tokens count in the budget like any call)."""
    calls = [_one_generation(env, problem, plan, i) for i in range(plan.samples)]
    results = await asyncio.gather(*calls, return_exceptions=True)
    failed = [r for r in results if isinstance(r, BaseException) and not isinstance(r, BudgetExhausted)]
    if failed:
        raise failed[0]
    refused = [r for r in results if isinstance(r, BudgetExhausted)]
    return [r for r in results if isinstance(r, TestGeneration)], (refused[0].reason if refused else None)


async def _one_generation(env: Env, problem: Problem, plan: TestPlan, index: int) -> TestGeneration:
    messages = test_request(problem, count=plan.per_sample)
    completion = await env.generate("actor", messages, plan.config, sample=TEST_SAMPLE_OFFSET + index)
    parsed = parse_tests(completion.text, problem)
    return TestGeneration(
        completion.text,
        parsed.tests,
        tuple(r.reason for r in parsed.rejected),
        completion.usage,
        completion.latency_seconds,
        completion.cost_usd,
        completion.cached,
    )


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


@strategy("codet")
async def codet(  # noqa: PLR0913 - flat knobs map one to one onto ``codet(key=value)`` specs
    problem: Problem,
    env: Env,
    *,
    n: Annotated[int, Ge(1)] = 8,
    m: Annotated[int, Ge(0)] = 2,
    tests_per_sample: Annotated[int, Ge(1)] = 10,
    test_limit: Annotated[int, Ge(1)] | None = None,
    use_visible: bool = True,
    hide_visible: bool = False,
    score: Score = "codet",
    config: GenerateConfig = LIVECODEBENCH_CONFIG,
    prompts: Prompts = DEFAULT_PROMPTS,
) -> Trajectory:
    """``n`` programs and ``m`` test-writing samples, concurrently; the tests are the distinct generated
    ones (at most ``test_limit`` per reply) plus the visible ones (``use_visible``, unless
    ``hide_visible``); every program runs on every test; the answer is the earliest program of the best
    dual-agreement group (``score``: ``codet`` or ``product``, see :func:`refinelab.verification.dual_agreement`).

    ``hide_visible`` is the execution-free setting: the visible tests are never shown nor run.
    """
    params: dict[str, object] = {
        "n": n,
        "m": m,
        "tests_per_sample": tests_per_sample,
        "test_limit": test_limit,
        "use_visible": use_visible,
        "hide_visible": hide_visible,
        "score": score,
        "config": config.key(),
        "prompts": prompts.label(),
    }
    seen = hidden_view(problem, hide_visible)
    requests = [_Request(prompts.draft(seen), config, "sample", i, sample=i, prompts=prompts) for i in range(n)]
    plan = TestPlan(m, tests_per_sample, test_limit, config)
    (attempts, note), (generations, test_note) = await asyncio.gather(
        concurrently(env, seen, requests), write_tests(env, seen, plan)
    )
    tests = (seen.visible_tests if use_visible else ()) + generated_pool(generations, test_limit)
    passed = await run_matrix(env.sandbox, [a.code for a in attempts], tests, seen)
    agreement = dual_agreement(passed, score=score)
    decisions = [_tests_decision(seen, use_visible, len(tests)), *group_decisions(agreement, len(tests))]
    if agreement.chosen is not None:
        decisions.append(_choice(agreement, attempts, len(tests)))
    note = note or test_note
    trajectory = _finish(seen, ("codet", params), attempts, "budget" if note else "agreement", note=note)
    return replace(trajectory, final=agreement.chosen, generations=tuple(generations), decisions=tuple(decisions))


def _tests_decision(problem: Problem, use_visible: bool, total: int) -> Decision:
    visible = len(problem.visible_tests) if use_visible else 0
    return Decision("tests", f"judged by {total} tests: {visible} visible, {total - visible} generated")


def _choice(agreement: Agreement, attempts: list[Attempt], total: int) -> Decision:
    best = agreement.best
    assert best is not None and agreement.chosen is not None
    reason = (
        f"earliest member of the best group ({len(best.members)} program(s) passing {len(best.passed)} of "
        f"{total} tests, score {best.score:.3g})"
    )
    return Decision("choose", reason, attempts[agreement.chosen].index, None, len(best.passed), total, best.members)
