"""Tests the model writes when the user gives none, read by :mod:`refinelab.verification`.

They become the problem's tests for any strategy (the ``verified`` strategy adds its own on top), and the
result says the verdict rests on them.
"""

from __future__ import annotations

from dataclasses import replace

from refinelab.models import GenerateConfig
from refinelab.solve._task import Task
from refinelab.solve._tests import GivenTest, TestSet
from refinelab.strategies import Env, TestGeneration, Trajectory
from refinelab.verification import parse_tests, test_request

TESTS_ASKED = 10
"""Tests asked for in the one test-writing call."""
CONFIG = GenerateConfig(temperature=0.0)
"""Deterministic, so a repeated solve is answered from the response cache."""


async def generated_tests(task: Task, env: Env) -> tuple[TestSet, TestGeneration]:
    """Tests written by the actor for the task (marked ``generated``), and the call as the trajectory
    records it."""
    completion = await env.generate("actor", test_request(task.problem, count=TESTS_ASKED), CONFIG)
    parsed = parse_tests(completion.text, task.problem)
    generation = TestGeneration(
        completion.text,
        parsed.tests,
        tuple(r.reason for r in parsed.rejected),
        completion.usage,
        completion.latency_seconds,
        completion.cost_usd,
        completion.cached,
    )
    return TestSet(tuple(GivenTest(t, "generated") for t in parsed.tests)), generation


def with_generation(trajectory: Trajectory, generation: TestGeneration | None) -> Trajectory:
    """The trajectory with solve's own test-writing call first among its generations (its tokens count)."""
    if generation is None:
        return trajectory
    return replace(trajectory, generations=(generation, *trajectory.generations))
