"""One unit of a run: a strategy run on one problem, its generated tests judged by the reference
solution, and every attempt scored on the hidden tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from refinelab.experiment._spec import Configuration
from refinelab.models import Model
from refinelab.problems import Problem
from refinelab.sandbox import RunResult, Sandbox, Suite, run_scored
from refinelab.store import RunProblem, Unit
from refinelab.strategies import Budget, Env, Trajectory
from refinelab.verification import test_accuracy


@dataclass(frozen=True)
class WorkItem:
    """A unit the runner has still to run."""

    configuration: Configuration
    """The strategy and its models."""
    problem: RunProblem
    """The problem, under its key."""
    repeat: int
    """Repetition number."""

    @property
    def unit(self) -> Unit:
        """The unit as the store names it."""
        return Unit(self.configuration.key, self.problem.key, self.repeat)


@dataclass(frozen=True)
class Roles:
    """The models a unit runs with."""

    actor: Model
    """Writes the programs."""
    critic: Model | None = None
    """Reviews them, for critic strategies."""


@dataclass(frozen=True)
class ScoredRun:
    """A finished trajectory and each attempt's result on the hidden tests (``None`` without code)."""

    trajectory: Trajectory
    """What the strategy did."""
    hidden: list[RunResult | None]
    """Each attempt's hidden-test result, in attempt order."""


async def run_unit(item: WorkItem, roles: Roles, sandbox: Sandbox, budget: Budget) -> ScoredRun:
    """Run the strategy, judge its generated tests, then score every attempt on the hidden tests."""
    problem = item.problem.problem
    env = Env(roles.actor, sandbox, critic=roles.critic, budget=budget, repeat=item.repeat)
    trajectory = await with_reference_verdicts(await item.configuration.strategy.run(problem, env), problem, sandbox)
    return ScoredRun(trajectory, await score_attempts(trajectory, problem, sandbox))


async def score_attempts(trajectory: Trajectory, problem: Problem, sandbox: Sandbox) -> list[RunResult | None]:
    """Each attempt's result on the hidden tests (``None`` for an attempt without code); identical
    programs are run once."""
    suite = Suite.hidden(problem)
    programs = sorted({a.code for a in trajectory.attempts if a.code is not None})
    results = await run_scored(sandbox, [(code, suite) for code in programs]) if programs else []
    by_code = dict(zip(programs, results))
    return [None if a.code is None else by_code[a.code] for a in trajectory.attempts]


async def with_reference_verdicts(trajectory: Trajectory, problem: Problem, sandbox: Sandbox) -> Trajectory:
    """The trajectory with each generated test judged by the problem's reference solution (unchanged
    when the problem has none or no tests were written)."""
    if problem.reference is None or not trajectory.generations:
        return trajectory
    judged = []
    for generation in trajectory.generations:
        accuracy = await test_accuracy(sandbox, generation.tests, problem)
        correct = frozenset() if accuracy is None else accuracy.correct
        judged.append(replace(generation, reference_passed=tuple(i in correct for i in range(len(generation.tests)))))
    return replace(trajectory, generations=tuple(judged))


def work_items(configurations: Sequence[Configuration], problems: Sequence[RunProblem], repeats: int) -> list[WorkItem]:
    """Every unit of a run, in order: configuration, then problem, then repeat."""
    return [WorkItem(c, p, r) for c in configurations for p in problems for r in range(repeats)]
