"""Numbers out: CSV and JSON of a report's tables."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict

from refinelab.experiment import ExperimentSpec
from refinelab.metrics import PairedComparison
from refinelab.report._build import Report
from refinelab.report._effort import EffortSection
from refinelab.store import Failure, RunInfo


def report_json(report: Report) -> str:
    """The report's numbers as JSON (one object per configuration, plus the run's header)."""
    data = {
        "run": _run_json(report.run),
        "problems": report.problems,
        "hidden_tests": report.hidden_tests,
        "configurations": [row.to_json() for row in report.rows],
        "comparisons": [asdict(c) for c in report.comparisons],
        "equal_tokens": [{"configuration": a, "sampler": b, **asdict(e)} for a, b, e in report.equal_tokens],
        "infrastructure_failures": [_failure_json(f) for f in report.failures],
        "pending": report.pending,
        "overview": [asdict(table) for table in report.overview],
        "selection": asdict(report.selection),
        "baseline": _baseline(report),
    }
    if report.efforts.shown:  # runs without efforts or thinking export as they always did
        data["efforts"] = efforts_json(report.efforts)
    return json.dumps(data, indent=2, default=str) + "\n"


def efforts_json(section: EffortSection) -> dict[str, object]:
    """The reasoning section: points on the tokens-against-pass@1 plane, effort comparisons with their
    overthinking cases, and the settings not sent."""
    comparisons = [
        {**{k: v for k, v in asdict(c).items() if k != "paired"}, **_paired(c.paired),
         "overthinking": [list(key) for key in c.overthinking]}
        for c in section.comparisons
    ]  # fmt: skip
    return {
        "points": [asdict(point) for point in section.points],
        "comparisons": comparisons,
        "not_sent": [asdict(count) for count in section.not_sent],
    }


def _paired(paired: PairedComparison) -> dict[str, object]:
    found = asdict(paired)
    return {key: found[key] for key in ("pairs", "pass_a", "pass_b", "only_a", "only_b", "p_value", "difference")}


def _run_json(run: RunInfo) -> dict[str, object]:
    """The run as the JSON report has always shown it: its header's fields beside the others, the spec
    read back as this refinelab reads it; and where each model role was served, for runs that recorded it."""
    header = run.header
    return {
        "id": run.id,
        "name": run.name,
        "created": run.created,
        "spec": ExperimentSpec.from_json(run.spec).to_json(),
        "versions": dict(header.versions),
        "isolation": header.isolation,
        "limits": dict(header.limits),
        "status": run.status,
        "finished": run.finished,
        "note": run.note,
        "process": None if run.process is None else asdict(run.process),
        **({} if header.endpoints is None else {"endpoints": [use.to_json() for use in header.endpoints]}),
    }


def _failure_json(failure: Failure) -> dict[str, object]:
    unit = failure.unit
    return {
        "unit": [unit.config, unit.problem, unit.repeat],
        "kind": failure.kind,
        "message": failure.message,
        "resolved": failure.resolved,
    }


def _baseline(report: Report) -> dict[str, object] | None:
    """``--baseline``: each configuration against the baseline run's (A) on the problems both ran."""
    if report.baseline is None:
        return None
    rows = [{"label": row.label, **(asdict(row.paired) if row.paired else {})} for row in report.baseline.rows]
    return {
        "run": report.baseline.run,
        "configurations": rows,
        "only_in_baseline": list(report.baseline.only_in_baseline),
    }


def report_csv(report: Report, *more: Report) -> str:
    """One CSV row per configuration with its headline numbers (``pass_itN`` empty where the
    configuration has no iteration ``N``: see ``metrics.pass_at_iteration``); with ``more`` reports,
    their rows too, under one header that has every report's columns."""
    reports = (report, *more)
    depth = max((len(r.passes.by_iteration) for one in reports for r in one.rows), default=1)
    header = ["run_id", "configuration", "strategy", "actor", "critic", "n"]
    header += [f"pass_it{i}" for i in range(depth)]
    header += ["pass_final", "regression_errors", "avg_refinements", "avg_attempts", "tokens_per_task"]
    header += ["seconds_per_task", "cost_per_task_usd", "tokens_x_single", "cost_x_single", "improvement_rate"]
    header += ["regression_rate", "false_accepts", "false_rejects", "critic_attempts_judged", "tests_generated_on"]
    thinking = any(one.efforts.shown for one in reports)  # runs without efforts or thinking keep their columns
    header += ["effort", "critic_effort", "reasoning_tokens_per_task"] if thinking else []
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for one in reports:
        writer.writerows(_csv_rows(one, depth, thinking))
    return out.getvalue()


def _csv_rows(report: Report, depth: int, thinking: bool) -> list[list[object]]:
    rows: list[list[object]] = []
    for r in report.rows:
        its = [_blank(value) for value in r.passes.by_iteration]
        its += [""] * (depth - len(its))
        single = r.vs_single
        rows.append(
            [
                report.run.id,
                r.label,
                r.strategy,
                r.actor,
                r.critic or "",
                r.trajectories,
                *its,
                r.passes.final,
                r.refinement.regression_errors,
                _blank(r.refinement.refinements),
                r.refinement.attempts,
                r.use.tokens,
                r.use.seconds,
                _blank(r.use.cost_usd),
                _blank(single and single.tokens),
                _blank(single and single.cost_usd),
                _blank(r.refinement.improvement.value),
                _blank(r.refinement.regression.value),
                _blank(r.judged.confusion and r.judged.confusion.false_accept),
                _blank(r.judged.confusion and r.judged.confusion.false_reject),
                _blank(r.judged.confusion and r.judged.covered.count),
                r.tests_generated.count,
                *([_blank(r.effort), _blank(r.critic_effort), r.reasoning_tokens] if thinking else []),
            ]
        )
    return rows


def _blank(value: object) -> object:
    return "" if value is None else value
