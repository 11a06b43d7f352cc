"""Experiments: specs and the runner (the store is :mod:`refinelab.store`; scoring samples files and
self-testing benchmarks is :mod:`refinelab.check`)."""

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
from refinelab.experiment._spec import (
    SAME,
    BenchmarkChoice,
    Configuration,
    ExperimentSpec,
    SandboxChoice,
    load_spec,
)

__all__ = [
    "SAME",
    "BenchmarkChoice",
    "Configuration",
    "DraftPair",
    "ExperimentSpec",
    "Judgement",
    "Progress",
    "RecallOnDraft",
    "RunSummary",
    "SandboxChoice",
    "Settings",
    "draft_pairs",
    "judge_drafts",
    "load_spec",
    "read_judgement",
    "recall_on_draft",
    "run_experiment",
    "score_attempts",
    "select",
]
