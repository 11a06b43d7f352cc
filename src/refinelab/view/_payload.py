"""What the viewer's pages show, computed from a store: the run index, one run's overview and case
lists, one problem's trajectories in full, and the comparison of two configurations.

The numbers are the report's (``report_json`` is embedded as it is, so the overview cannot drift from
``refinelab report --format json``); the case lists come from the metrics' own case functions, so a
filter lists exactly what a table counts. Records are frozen dataclasses, turned into JSON at the edge.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from refinelab.metrics import (
    ScoredAttempt,
    ScoredTrajectory,
    compare_paired,
    critic_call,
    critic_call_attempts,
    disagreements,
    improved,
    regression_error_attempts,
    worsened,
)
from refinelab.report import (
    HEADLINE,
    Report,
    failure_lines,
    figures_missing,
    header_lines,
    overview_html,
    paired_cells,
    report_json,
    tables_html,
)
from refinelab.store import AttemptDetail, ProblemInfo, RunInfo, Store, TrajectoryDetail


def slug(text: str) -> str:
    """A short file-name-safe id for a run or a problem key."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Side:
    """One configuration of one run: what the compare page puts side by side."""

    run: str
    """Run id."""
    run_slug: str
    """The run's file-name id."""
    config: str
    """Configuration key."""
    position: int
    """The configuration's place in its run's spec."""
    label: str
    """``strategy(args) · actor / critic``."""

    @property
    def file(self) -> str:
        """How data files name this side."""
        return f"{self.run_slug}.{self.position}"


@dataclass(frozen=True)
class TrajectorySummary:
    """One trajectory as the case lists show it."""

    config: str
    """Configuration key."""
    problem: str
    """``benchmark/problem_id``."""
    repeat: int
    """Repetition number."""
    hidden: tuple[bool, ...]
    """Each attempt passed the hidden tests."""
    verdicts: tuple[str | None, ...]
    """The critic's verdict on each attempt (None: no critic, or unreadable)."""
    final: int | None
    """The returned attempt."""
    passed: bool
    """The returned attempt passes the hidden tests."""
    stop_reason: str
    """Why the strategy stopped."""
    tokens: int
    """Tokens spent (actor and critic)."""
    reasoning_tokens: int
    """The part of them spent thinking."""
    cost_usd: float | None
    """Dollars spent; None when a price is unknown."""
    seconds: float
    """Model time."""
    regression_errors: tuple[int, ...]
    """Attempts counted as regression errors (passing, rejected, then broken by the next attempt)."""
    false_rejections: tuple[int, ...]
    """Passing attempts the critic rejected."""
    false_acceptances: tuple[int, ...]
    """Failing attempts the critic accepted."""
    improved: bool
    """Wrong at first, right at the end."""
    worsened: bool
    """Right at first, wrong at the end."""


def runs_payload(store: Store, runs: Sequence[RunInfo]) -> dict[str, object]:
    """The run list and every side the compare page can choose."""
    entries, sides = [], []
    for run in runs:
        configs = store.configurations(run.id)
        entries.append({**_run_header(run), "configurations": len(configs), "problems": len(store.problems(run.id)),
                        "trajectories": len(store.done(run.id))})  # fmt: skip
        sides += [asdict(side) | {"file": side.file} for side in run_sides(store, run)]
    return {"runs": entries, "sides": sides}


def run_sides(store: Store, run: RunInfo) -> list[Side]:
    """The configurations of a run, as compare sides."""
    return [Side(run.id, slug(run.id), c.key, i, c.label) for i, c in enumerate(store.configurations(run.id))]


def _run_header(run: RunInfo) -> dict[str, object]:
    return {"id": run.id, "slug": slug(run.id), "name": run.name, "status": run.status, "created": run.created}


def run_payload(
    store: Store, report: Report, figures: Sequence[tuple[str, str]], trajectories: Sequence[ScoredTrajectory]
) -> dict[str, object]:
    """One run's overview (the report's numbers and tables), its problems and every trajectory's
    summary; ``figures`` are (name, title) of the report's figures (none, and ``figures_note`` saying why,
    without matplotlib), ``trajectories`` the run's (read in the same snapshot of the store as ``report``)."""
    run = report.run
    problems = store.problem_details(run.id)
    note = figures_missing()
    return {
        "run": _run_header(run),
        "report": json.loads(report_json(report)),
        "header": header_lines(report),
        "headline": HEADLINE,
        "failures": failure_lines(report),
        "overview_html": [overview_html(table) for table in report.overview],
        "tables_html": tables_html(report),
        "figures": [] if note else [{"name": name, "title": title} for name, title in figures],
        "figures_note": note,
        "configs": [asdict(side) for side in run_sides(store, run)],
        "problems": [_problem_entry(p) for p in problems],
        "trajectories": [asdict(summarize_trajectory(t)) for t in trajectories],
        "disagreements": [[problem, repeat] for problem, repeat in disagreements(trajectories)],
        "efforts": report.efforts.shown,
        "overthinking": overthinking_cases(report),
    }


def overthinking_cases(report: Report) -> list[list[object]]:
    """``[config, problem, repeat]`` of every trajectory a higher effort got wrong where a lower effort of the
    same strategy got right (the higher effort's trajectory; the report's effort comparisons count them)."""
    found: dict[tuple[str, str, int], None] = {}
    for comparison in report.efforts.comparisons:
        for problem, repeat in comparison.overthinking:
            found.setdefault((comparison.higher_config, problem, repeat))
    return [list(key) for key in found]


def problems_payload(store: Store, run: RunInfo) -> dict[str, object]:
    """One run's problems, read from the store without its report: what a trajectory page needs to find
    a problem's file, so a deep link never waits for a big run's report."""
    return {"run": _run_header(run), "problems": [_problem_entry(p) for p in store.problem_details(run.id)]}


def _problem_entry(problem: ProblemInfo) -> dict[str, object]:
    return {"key": problem.key, "slug": slug(problem.key), "benchmark": problem.benchmark,
            "difficulty": problem.difficulty, "kind": problem.kind, "visible_tests": problem.visible_tests,
            "hidden_tests": problem.hidden_tests}  # fmt: skip


def summarize_trajectory(trajectory: ScoredTrajectory) -> TrajectorySummary:
    """The case list entry of a trajectory (its cases from the metrics' case functions)."""
    attempts = trajectory.attempts
    return TrajectorySummary(
        config=trajectory.config,
        problem=trajectory.problem,
        repeat=trajectory.repeat,
        hidden=tuple(a.hidden_passed for a in attempts),
        verdicts=tuple(a.critic_verdict for a in attempts),
        final=trajectory.final,
        passed=trajectory.passed,
        stop_reason=trajectory.stop_reason,
        tokens=trajectory.tokens,
        reasoning_tokens=trajectory.reasoning_tokens,
        cost_usd=trajectory.cost_usd,
        seconds=trajectory.latency_seconds,
        regression_errors=tuple(regression_error_attempts(trajectory)),
        false_rejections=tuple(critic_call_attempts(trajectory, "false_reject")),
        false_acceptances=tuple(critic_call_attempts(trajectory, "false_accept")),
        improved=improved(trajectory),
        worsened=worsened(trajectory),
    )


def problem_payload(
    store: Store, run_id: str, problem: ProblemInfo, trajectories: Sequence[ScoredTrajectory]
) -> dict[str, object]:
    """One problem: its statement and every trajectory on it in full, each attempt with its diff from
    the previous attempt and the critic's verdict judged against the hidden tests, with each
    trajectory's case summary (``trajectories``: the run's, read in the same snapshot as the details)."""
    details = store.trajectory_details(run_id, problem.key)
    return {
        "problem": {**_problem_entry(problem), "prompt": problem.prompt, "metadata": problem.metadata},
        "trajectories": [_trajectory_entry(t) for t in details],
        "summaries": [asdict(summarize_trajectory(t)) for t in trajectories if t.problem == problem.key],
    }


def _trajectory_entry(trajectory: TrajectoryDetail) -> dict[str, object]:
    attempts = []
    previous: str | None = None
    for attempt in trajectory.attempts:
        attempts.append({**asdict(attempt), "diff": _diff(previous, attempt.code), "call": _call(attempt)})
        previous = attempt.code if attempt.code is not None else previous
    return {**asdict(trajectory), "attempts": attempts}


def _call(attempt: AttemptDetail) -> str | None:
    """true_accept / false_accept / true_reject / false_reject, as the confusion matrix counts it."""
    verdict = attempt.critic.verdict if attempt.critic is not None else None
    return critic_call(ScoredAttempt(attempt.index, attempt.origin, attempt.hidden.passed, critic_verdict=verdict))


def _diff(previous: str | None, code: str | None) -> list[tuple[str, str]] | None:
    """``(kind, line)`` pairs, kind ``" "``, ``"-"``, ``"+"`` or ``"@"`` (a hunk header); None for the
    first attempt or an attempt without code."""
    if previous is None or code is None:
        return None
    lines = difflib.unified_diff(previous.splitlines(), code.splitlines(), "previous", "this", n=3, lineterm="")
    return [(line[0], line[1:]) for line in list(lines)[2:]]


def compare_payload(
    a: Side, b: Side, first: Sequence[ScoredTrajectory], second: Sequence[ScoredTrajectory]
) -> dict[str, object]:
    """Two configurations (of one run or two; ``first`` and ``second`` are their runs' trajectories) on
    the problems both ran, A against B in this order: :func:`refinelab.metrics.compare_paired`'s numbers
    (the ones ``refinelab report`` shows against single pass and ``--baseline``), the pairs only one side
    solved and the problems only one side ran, and ``shown``, each number as the page and the text report
    print it (:func:`refinelab.report.paired_cells`), so the page computes nothing."""
    found = compare_paired([t for t in first if t.config == a.config], [t for t in second if t.config == b.config])
    numbers = {key: getattr(found, key) for key in COMPARED}
    keys = {
        "only_a_keys": [list(k) for k in found.only_a_keys],
        "only_b_keys": [list(k) for k in found.only_b_keys],
        "unpaired_a_keys": [list(k) for k in found.unpaired_a],
        "unpaired_b_keys": [list(k) for k in found.unpaired_b],
    }
    counts = {"unpaired_a": len(found.unpaired_a), "unpaired_b": len(found.unpaired_b)}
    return {"a": asdict(a), "b": asdict(b), **numbers, **counts, **keys, "shown": paired_cells(found)}


COMPARED = ("pairs", "pass_a", "pass_b", "both", "neither", "only_a", "only_b", "p_value", "difference")
"""The numbers of a comparison the page shows."""
