"""Experiments: specs, the runner, the crash-safe store; scoring samples files and self-testing benchmarks."""

from refinelab.experiment._details import (
    AttemptDetail,
    CriticDetail,
    ProblemInfo,
    StoredConfiguration,
    StoredProblem,
    TestRun,
    TrajectoryDetail,
)
from refinelab.experiment._migrations import MIGRATIONS
from refinelab.experiment._process import ProcessId
from refinelab.experiment._runner import Progress, RunSummary, Settings, run_experiment, score_attempts, select
from refinelab.experiment._samples import (
    Sample,
    ScoredSample,
    Summary,
    format_hint,
    read_samples,
    score_samples,
    summarize,
)
from refinelab.experiment._selection import (
    GeneratedTestSet,
    Selection,
    SelectionOptions,
    read_any_samples,
    read_generated_tests,
    select_by_agreement,
)
from refinelab.experiment._selftest import Discrepancy, SelfTestReport, self_test, stub_program
from refinelab.experiment._spec import (
    SAME,
    BenchmarkChoice,
    Configuration,
    ExperimentSpec,
    SandboxChoice,
    load_spec,
)
from refinelab.experiment._store import (
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
    "SAME",
    "SCHEMA_VERSION",
    "AttemptDetail",
    "BenchmarkChoice",
    "Configuration",
    "CriticDetail",
    "Discrepancy",
    "ExperimentSpec",
    "Failure",
    "GeneratedTestSet",
    "ProblemInfo",
    "ProcessId",
    "Progress",
    "RunInfo",
    "RunListing",
    "RunStatus",
    "RunSummary",
    "Sample",
    "SandboxChoice",
    "ScoredSample",
    "Selection",
    "SelectionOptions",
    "SelfTestReport",
    "Settings",
    "Store",
    "StoredConfiguration",
    "StoredProblem",
    "Summary",
    "TestRun",
    "TrajectoryDetail",
    "Unit",
    "format_hint",
    "load_spec",
    "read_any_samples",
    "read_generated_tests",
    "read_samples",
    "run_experiment",
    "score_attempts",
    "score_samples",
    "select",
    "select_by_agreement",
    "self_test",
    "stub_program",
    "summarize",
]
