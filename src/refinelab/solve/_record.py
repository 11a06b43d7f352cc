"""Recording a solve in the store, as a one-problem run of one configuration, so ``refinelab report``
lists it and shows its trajectory like any experiment's."""

from __future__ import annotations

import platform
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from refinelab import __version__
from refinelab.experiment import BenchmarkChoice, ExperimentSpec
from refinelab.sandbox import RunResult
from refinelab.store import Store
from refinelab.strategies import StrategySpec

if TYPE_CHECKING:
    from refinelab.solve._solution import Solution
    from refinelab.solve._task import Task

BENCHMARK = "solve"
"""The benchmark name solves are stored under (``solve/<problem id>``)."""
_NAME_WORDS = 6


def record(
    path: Path,
    what: tuple[Task, StrategySpec, str],
    solution: Solution,
    hidden: Sequence[RunResult | None],
    header: Mapping[str, object],
) -> str:
    """Store the solve as a new run (``what``: the task, the strategy and the model); return its id."""
    task, strategy, model = what
    spec = ExperimentSpec(
        (BenchmarkChoice(BENCHMARK, problems=(task.problem.id,)),),
        (strategy,),
        (model,),
        name=_name(task.problem.prompt),
    )
    configuration = spec.configurations()[0]
    run_id = f"solve-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    key = f"{BENCHMARK}/{task.problem.id}"
    limits = header["limits"]
    full_header = {
        "versions": {"refinelab": __version__, "python": platform.python_version()},
        "isolation": header["isolation"],
        "limits": asdict(limits) if is_dataclass(limits) and not isinstance(limits, type) else limits,
    }
    with Store(path) as store:
        store.open_run(run_id, spec.to_json(), full_header)
        store.add_configurations(run_id, [configuration])
        store.add_problems(run_id, [(key, task.problem)])
        store.save(run_id, (configuration.key, key, 0), solution.trajectory, list(hidden))
        if solution.evidence.stop_reason == "interrupted":
            store.finish_run(run_id, "interrupted", "cancelled; the best attempt so far was returned")
        else:
            store.finish_run(run_id, "complete")
    return run_id


def _name(prompt: str) -> str:
    words = prompt.split()
    return "solve: " + " ".join(words[:_NAME_WORDS]) + (" ..." if len(words) > _NAME_WORDS else "")
