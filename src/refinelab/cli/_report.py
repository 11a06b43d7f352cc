"""``refinelab report`` and ``refinelab export``: views over stored runs."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from refinelab._files import write_atomically
from refinelab._words import counted
from refinelab.cli import _options
from refinelab.errors import UserError
from refinelab.report import (
    build_report,
    figures_missing,
    render_html,
    render_text,
    report_csv,
    report_json,
    why_text,
)
from refinelab.store import RunListing, Store


def add_parsers(commands: Any, environ: Mapping[str, str]) -> None:
    """Register ``report`` and ``export``."""
    report = commands.add_parser("report", help="tables (and --html plots) of stored runs")
    report.add_argument(
        "runs", nargs="*", metavar="RUN", help="run ids or unique prefixes (default: the newest run with results)"
    )
    _options.add_store(report)
    report.add_argument("--format", choices=["text", "csv", "json"], default="text", help="output format")
    report.add_argument("--out", type=Path, help="write to FILE instead of standard output")
    report.add_argument("--html", type=Path, metavar="FILE", help="also write a self-contained HTML page")
    report.add_argument("--baseline", metavar="RUN", help="show differences against this run")
    report.add_argument(
        "--list", action="store_true", help="list stored runs: date, status, configurations, units done/total"
    )
    report.add_argument(
        "--why",
        metavar="PROBLEM",
        help="why each configuration returned what it did on PROBLEM (benchmark/id, or an id unique in the run): "
        "the decisions of codet and verified, in order",
    )
    report.set_defaults(run=lambda args: run_report(args, environ))
    export = commands.add_parser("export", help="one JSON line per attempt of a stored run")
    export.add_argument(
        "run_id", nargs="?", metavar="RUN", help="run id or unique prefix (default: the newest run with results)"
    )
    _options.add_store(export)
    export.add_argument("--out", type=Path, required=True, help="FILE.jsonl")
    export.set_defaults(run=lambda args: run_export(args, environ))


def _open(args: argparse.Namespace, environ: Mapping[str, str]) -> Store:
    path = _options.settings(args, environ, ("store",)).store
    if not path.exists():
        raise UserError(f"{path}: no store here (run `refinelab run` first, or pass --store)")
    return Store(path)


def run_report(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Print (or write) the report of each run."""
    with _open(args, environ) as store:
        if args.list:
            print(run_listing(store.listing()), end="")
            return 0
        if args.why is not None:
            return _emit(args, _why(store, args.runs, args.why))
        reports = [build_report(store, run, baseline=args.baseline) for run in (args.runs or [None])]
    render = {"text": render_text, "csv": report_csv, "json": report_json}[args.format]
    _emit(args, "\n".join(render(report) for report in reports))
    if args.html is not None:
        write_atomically(args.html, "\n".join(render_html(report) for report in reports))
        if (missing := figures_missing()) is not None:
            print(f"refinelab: {args.html}: every table, no figures: {missing}", file=sys.stderr)
    return 0


def _emit(args: argparse.Namespace, text: str) -> int:
    if args.out is not None:
        write_atomically(args.out, text)
    else:
        print(text, end="")
    return 0


def _why(store: Store, runs: Sequence[str], problem: str) -> str:
    """``report --why``: the decisions on one problem of one run."""
    if len(runs) > 1:
        raise UserError("--why takes one run")
    run = store.run(runs[0] if runs else None)
    keys = [p.key for p in store.problems(run.id)]
    matches = [k for k in keys if k == problem] or [k for k in keys if k.split("/", 1)[-1] == problem]
    if len(matches) != 1:
        found = "several problems" if matches else "no problem"
        raise UserError(f"--why {problem}: {found} of run {run.id} match (write benchmark/id, e.g. {keys[0]})")
    details = store.trajectory_details(run.id, matches[0])
    return why_text(run.id, matches[0], details, store.configurations(run.id))


def run_listing(runs: Sequence[RunListing]) -> str:
    """``report --list``: one line per run, oldest first, experiments then solves apart (``report`` with no
    RUN shows the newest experiment with results; a solve is reached by its id)."""
    if not runs:
        return "no runs stored yet\n"
    experiments = [r for r in runs if r.info.kind == "experiment"]
    solves = [r for r in runs if r.info.kind == "solve"]
    parts = [_listing_table(experiments)] if experiments else ["no experiments stored yet\n"]
    if solves:
        parts.append(f"solves ({len(solves)}; `refinelab report ID` shows one):\n" + _listing_table(solves))
    return "\n".join(parts)


def _listing_table(runs: Sequence[RunListing]) -> str:
    rows = [["run", "started", "status", "configurations", "units done", "name"]]
    for found in runs:
        info = found.info
        started = datetime.fromtimestamp(info.created).strftime("%Y-%m-%d %H:%M")
        rows.append(
            [info.id, started, info.status, str(found.configurations), f"{found.done}/{found.total}", info.name]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n" for row in rows)


def run_export(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Write every attempt of a run as JSON lines."""
    with _open(args, environ) as store:
        run = store.run(args.run_id)
        lines = [json.dumps(row) + "\n" for row in store.export_rows(run.id)]
    write_atomically(args.out, lines)
    print(f"{counted(len(lines), 'attempt')} of run {run.id} -> {args.out}")
    return 0
