"""The store: one SQLite file of runs, their problems, configurations, trajectories, attempts, critic
outputs, generated tests, decisions and infrastructure failures; its named migrations and its readers."""

from refinelab.store._details import (
    AttemptDetail,
    CriticDetail,
    ProblemInfo,
    StoredConfiguration,
    StoredProblem,
    TestRun,
    TrajectoryDetail,
)
from refinelab.store._generated import GeneratedTest, GenerationDetail
from refinelab.store._migrations import MIGRATIONS
from refinelab.store._process import ProcessId
from refinelab.store._store import (
    SCHEMA_VERSION,
    Failure,
    RunInfo,
    RunListing,
    RunStatus,
    Store,
    Unit,
)

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "AttemptDetail",
    "CriticDetail",
    "Failure",
    "GeneratedTest",
    "GenerationDetail",
    "ProblemInfo",
    "ProcessId",
    "RunInfo",
    "RunListing",
    "RunStatus",
    "Store",
    "StoredConfiguration",
    "StoredProblem",
    "TestRun",
    "TrajectoryDetail",
    "Unit",
]
