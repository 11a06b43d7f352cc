"""Recording a run's start in the store — its spec, header, configurations and problems — the one
sequence ``refinelab run`` and ``solve`` share."""

from __future__ import annotations

from collections.abc import Sequence

from refinelab.experiment._spec import ExperimentSpec
from refinelab.store import RunHeader, RunProblem, Store


def begin_run(
    store: Store, spec: ExperimentSpec, header: RunHeader, problems: Sequence[RunProblem], *, run_id: str | None = None
) -> bool:
    """Record the run (as ``run_id``, else the spec's own id) as running in this process, with every
    configuration and problem; True when it was stored before (a resume)."""
    run_id = run_id or spec.run_id
    created = store.open_run(run_id, spec.to_json(), header)
    store.add_configurations(run_id, [configuration.stored() for configuration in spec.configurations()])
    store.add_problems(run_id, problems)
    return not created
