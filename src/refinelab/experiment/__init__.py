"""Experiments: the spec (what runs) and the runner (running it, resumably, into the store).

The store is :mod:`refinelab.store`; where things live and run comes from :mod:`refinelab.runtime`;
scoring samples files and self-testing benchmarks is :mod:`refinelab.check`. Recall on draft, a judged
follow-up over a stored run's trajectories, is here too.
"""

from refinelab.experiment._endpoints import EndpointChange, RunOptions, run_endpoints
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
from refinelab.experiment._spec import SAME, BenchmarkChoice, Configuration, ExperimentSpec
from refinelab.experiment._spec_file import load_spec
from refinelab.experiment._units import ScoredRun, score_attempts
from refinelab.runtime import SandboxChoice

__all__ = [
    "SAME",
    "BenchmarkChoice",
    "Configuration",
    "DraftPair",
    "EndpointChange",
    "ExperimentSpec",
    "Judgement",
    "Progress",
    "RecallOnDraft",
    "RunOptions",
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
    "run_endpoints",
    "run_experiment",
    "sandbox_settings",
    "score_attempts",
    "select",
]
