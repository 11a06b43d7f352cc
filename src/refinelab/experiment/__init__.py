"""Experiments: the spec (what runs) and the runner (running it, resumably, into the store).

The store is :mod:`refinelab.store`; where things live and run comes from :mod:`refinelab.runtime`;
scoring samples files and self-testing benchmarks is :mod:`refinelab.check`. Recall on draft, a judged
follow-up over a stored run's trajectories, is here too.
"""

from refinelab.experiment._problems import choose_problems, resolve_sources, select
from refinelab.experiment._recall import (
    DraftPair,
    Judgement,
    RecallOnDraft,
    draft_pairs,
    judge_drafts,
    read_judgement,
    recall_on_draft,
)
from refinelab.experiment._record import begin_run
from refinelab.experiment._runner import Progress, RunSummary, run_experiment, sandbox_settings
from refinelab.experiment._spec import (
    SAME,
    BenchmarkChoice,
    Configuration,
    ExperimentSpec,
    SandboxChoice,
    load_spec,
)
from refinelab.experiment._units import ScoredRun, score_attempts

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
    "ScoredRun",
    "begin_run",
    "choose_problems",
    "draft_pairs",
    "judge_drafts",
    "load_spec",
    "read_judgement",
    "recall_on_draft",
    "resolve_sources",
    "run_experiment",
    "sandbox_settings",
    "score_attempts",
    "select",
]
