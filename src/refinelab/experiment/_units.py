"""One unit of a run: a strategy run on one problem, its generated tests judged by the reference
solution, and every attempt scored on the hidden tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from refinelab.experiment._batching import HiddenScoring, RunLimits
from refinelab.experiment._spec import Configuration
from refinelab.models import Model
from refinelab.problems import Problem, Test
from refinelab.sandbox import Limits, RunResult, Sandbox, Suite, run_scored
from refinelab.store import RunProblem, Unit
from refinelab.strategies import Budget, Env, Trajectory
from refinelab.verification import test_accuracy, test_key


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


async def run_unit(
    item: WorkItem, roles: Roles, scoring: HiddenScoring, budget: Budget, limits: RunLimits
) -> ScoredRun:
    """Run the strategy (generated tests on the agreement's limits), judge its generated tests, and score
    every attempt on the hidden tests (each distinct program once per run, through ``scoring``; an
    attempt's scoring starts as soon as the strategy has its program, beside its visible tests)."""
    problem = item.problem.problem
    sandbox = scoring.sandbox
    env = Env(roles.actor, sandbox, critic=roles.critic, budget=budget, repeat=item.repeat, agreement=limits.agreement)
    env.on_attempt = lambda code: scoring.start(code, problem)
    env.efforts = item.configuration.efforts
    strategy_run = await item.configuration.strategy.run(problem, env)
    trajectory = await with_reference_verdicts(strategy_run, problem, sandbox, limits.agreement)
    return ScoredRun(trajectory, await scoring.score(trajectory, problem))


async def score_attempts(
    trajectory: Trajectory, problem: Problem, sandbox: Sandbox, *, limits: Limits | None = None
) -> list[RunResult | None]:
    """Each attempt's result on the hidden tests (``None`` for an attempt without code), under ``limits``
    (the sandbox's when None); identical programs are run once."""
    suite = Suite.hidden(problem)
    programs = sorted({a.code for a in trajectory.attempts if a.code is not None})
    results = await run_scored(sandbox, [(code, suite) for code in programs], limits=limits) if programs else []
    by_code = dict(zip(programs, results))
    return [None if a.code is None else by_code[a.code] for a in trajectory.attempts]


async def with_reference_verdicts(
    trajectory: Trajectory, problem: Problem, sandbox: Sandbox, limits: Limits | None = None
) -> Trajectory:
    """The trajectory with each generated test judged by the problem's reference solution (unchanged
    when the problem has none or no tests were written): every distinct test once, in one sandbox call,
    under ``limits`` (the agreement's; see :func:`refinelab.verification.agreement_limits`)."""
    if problem.reference is None or not trajectory.generations:
        return trajectory
    distinct: dict[str, int] = {}
    tests: list[Test] = []
    for generation in trajectory.generations:
        for test in generation.tests:
            if distinct.setdefault(test_key(test), len(tests)) == len(tests):
                tests.append(test)
    accuracy = await test_accuracy(sandbox, tests, problem, limits=limits)
    correct = frozenset() if accuracy is None else accuracy.correct
    judged = [
        replace(g, reference_passed=tuple(distinct[test_key(t)] in correct for t in g.tests))
        for g in trajectory.generations
    ]
    return replace(trajectory, generations=tuple(judged))


def work_items(configurations: Sequence[Configuration], problems: Sequence[RunProblem], repeats: int) -> list[WorkItem]:
    """Every unit of a run, in order: configuration, then problem, then repeat."""
    return [WorkItem(c, p, r) for c in configurations for p in problems for r in range(repeats)]
