"""Recording a solve in the store, as a one-problem run of one configuration, so ``refinelab report``
lists it and shows its trajectory like any experiment's."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from refinelab.experiment import BenchmarkChoice, ExperimentSpec, begin_run
from refinelab.models import ModelsConfig
from refinelab.runtime import SandboxChoice
from refinelab.sandbox import RunResult
from refinelab.store import SOLVE_BENCHMARK, RunHeader, RunProblem, Store, Unit
from refinelab.strategies import StrategySpec

if TYPE_CHECKING:
    from refinelab.solve._solution import Solution
    from refinelab.solve._task import Task

BENCHMARK = SOLVE_BENCHMARK
"""The benchmark name solves are stored under (``solve/<problem id>``): it marks the run as a solve."""
_NAME_WORDS = 6


@dataclass(frozen=True, kw_only=True)
class SolveRun:
    """What a solve ran, as its run records it."""

    task: Task
    """The problem and its tests."""
    strategy: StrategySpec
    """The strategy and its arguments."""
    model: str
    """The actor's model string."""
    header: RunHeader
    """Versions, isolation, limits and the model's endpoint."""
    sandbox: SandboxChoice = field(default_factory=SandboxChoice)
    """The sandbox it was chosen (recorded in its spec, as a run's is)."""
    effort: str | None = None
    """The reasoning effort every call asked for (``None``: the model's default)."""
    models: ModelsConfig = field(default_factory=ModelsConfig)
    """The settings' ``[models]`` table: what an alias stood for and its deployment, recorded as a run's."""


def record(store: Store, run: SolveRun, solution: Solution, hidden: Sequence[RunResult | None]) -> str:
    """Store the solve as a new run; return its id."""
    problem = run.task.problem
    spec = ExperimentSpec(
        (BenchmarkChoice(BENCHMARK, problems=(problem.id,)),),
        (run.strategy,),
        (run.model,),
        name=_name(problem.prompt),
        sandbox=run.sandbox,
        reasoning_effort=() if run.effort is None else (run.effort,),
        models=run.models,
    )
    configuration = spec.configurations()[0]
    run_id = f"solve-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    key = f"{BENCHMARK}/{problem.id}"
    begin_run(store, spec, run.header, [RunProblem(key, problem)], run_id=run_id)
    store.save(run_id, Unit(configuration.key, key, 0), solution.trajectory, list(hidden))
    if solution.evidence.stop_reason == "interrupted":
        store.finish_run(run_id, "interrupted", "cancelled; the best attempt so far was returned")
    else:
        store.finish_run(run_id, "complete")
    return run_id


def _name(prompt: str) -> str:
    words = prompt.split()
    return "solve: " + " ".join(words[:_NAME_WORDS]) + (" ..." if len(words) > _NAME_WORDS else "")
