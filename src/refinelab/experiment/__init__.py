"""Experiments: specs, the runner, the crash-safe store; scoring samples files and self-testing benchmarks."""

from refinelab.experiment._details import AttemptDetail, CriticDetail, ProblemInfo, TestRun, TrajectoryDetail
from refinelab.experiment._process import ProcessId
from refinelab.experiment._recall import (
    DraftPair,
    Judgement,
    RecallOnDraft,
    draft_pairs,
    judge_drafts,
    read_judgement,
    recall_on_draft,
)
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
from refinelab.experiment._store import MIGRATIONS, SCHEMA_VERSION, Failure, RunInfo, RunListing, RunStatus, Store, Unit

__all__ = [
    "MIGRATIONS",
    "SAME",
    "SCHEMA_VERSION",
    "AttemptDetail",
    "BenchmarkChoice",
    "Configuration",
    "CriticDetail",
    "Discrepancy",
    "DraftPair",
    "ExperimentSpec",
    "Failure",
    "GeneratedTestSet",
    "Judgement",
    "ProblemInfo",
    "ProcessId",
    "Progress",
    "RecallOnDraft",
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
    "Summary",
    "TestRun",
    "TrajectoryDetail",
    "Unit",
    "draft_pairs",
    "format_hint",
    "judge_drafts",
    "load_spec",
    "read_any_samples",
    "read_generated_tests",
    "read_judgement",
    "read_samples",
    "recall_on_draft",
    "run_experiment",
    "score_attempts",
    "score_samples",
    "select",
    "select_by_agreement",
    "self_test",
    "stub_program",
    "summarize",
]
