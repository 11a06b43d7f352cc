"""The store: one SQLite file of runs, their problems, configurations, trajectories, attempts, critic
outputs, generated tests, decisions and infrastructure failures; its named migrations and its readers.

Every SQL statement refinelab runs is in this package. Writers take and readers return the frozen records
of this package (a run's header, its units, its configurations and problems, every attempt in detail).
"""

from refinelab.store._details import AttemptDetail, CriticDetail, ProblemInfo, TestRun, TrajectoryDetail
from refinelab.store._generated import GeneratedTest, GenerationDetail
from refinelab.store._migrations import MIGRATIONS
from refinelab.store._process import ProcessId
from refinelab.store._records import (
    SOLVE_BENCHMARK,
    EndpointUse,
    Failure,
    RunHeader,
    RunInfo,
    RunKind,
    RunListing,
    RunProblem,
    RunStatus,
    StoredConfiguration,
    StoredProblem,
    Unit,
)
from refinelab.store._store import SCHEMA_VERSION, Store

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "SOLVE_BENCHMARK",
    "AttemptDetail",
    "CriticDetail",
    "EndpointUse",
    "Failure",
    "GeneratedTest",
    "GenerationDetail",
    "ProblemInfo",
    "ProcessId",
    "RunHeader",
    "RunInfo",
    "RunKind",
    "RunListing",
    "RunProblem",
    "RunStatus",
    "Store",
    "StoredConfiguration",
    "StoredProblem",
    "TestRun",
    "TrajectoryDetail",
    "Unit",
]
