"""Tests the model writes when the user gives none, read by :mod:`refinelab.verification`.

They become the problem's tests for any strategy (the ``verified`` strategy adds its own on top), and the
result says the verdict rests on them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from refinelab.models import GenerateConfig
from refinelab.problems import as_value_test
from refinelab.sandbox import RunResult, Sandbox, Suite
from refinelab.solve._task import Task
from refinelab.solve._tests import GivenTest, TestSet, describe
from refinelab.strategies import Env, TestGeneration, Trajectory
from refinelab.verification import pooled, test_request

TESTS_ASKED = 10
"""Tests asked for in the one test-writing call."""
CONFIG = GenerateConfig(temperature=0.0)
"""Deterministic, so a repeated solve is answered from the response cache."""


async def generated_tests(task: Task, env: Env) -> tuple[TestSet, TestGeneration]:
    """Tests written by the actor for the task (marked ``generated``), and the call as the trajectory
    records it."""
    completion = await env.generate("actor", test_request(task.problem, count=TESTS_ASKED), CONFIG)
    generation = TestGeneration.of_reply(completion, task.problem)
    return TestSet(tuple(GivenTest(t, "generated") for t in generation.tests)), generation


def with_generation(trajectory: Trajectory, generation: TestGeneration | None) -> Trajectory:
    """The trajectory with solve's own test-writing call first among its generations (its tokens count)."""
    if generation is None:
        return trajectory
    return replace(trajectory, generations=(generation, *trajectory.generations))


@dataclass(frozen=True)
class StrategyTests:
    """The tests a strategy wrote for itself beside the user's, and the returned code's results on them."""

    tests: tuple[GivenTest, ...] = ()
    """The strategy's own tests the user's do not repeat."""
    result: RunResult | None = None
    """The returned code's results on them (``None`` when there are none)."""


async def strategy_tests(task: Task, trajectory: Trajectory, code: str | None, sandbox: Sandbox) -> StrategyTests:
    """The tests the strategy itself wrote (``verified``, ``codet``) that the user's do not repeat, and the
    returned code's results on them: which generated tests it agrees with. Nothing when there are no
    given tests (the generated ones are then the verdict's own tests) or no code."""
    if task.generated or code is None:
        return StrategyTests()
    given = {t.text for t in task.tests.tests}
    written = [as_value_test(t) for t in pooled([g.tests for g in trajectory.generations])]
    tests = [t for t in written if describe(t) not in given]
    if not tests:
        return StrategyTests()
    result = await sandbox.run(code, Suite.for_problem(task.problem, tests))
    return StrategyTests(tuple(GivenTest(t, "generated") for t in tests), result)
