"""``refinelab report`` and ``refinelab export``: views over stored runs."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from refinelab._files import write_atomically
from refinelab._words import counted
from refinelab.cli import _options
from refinelab.errors import UserError
from refinelab.report import (
    Report,
    build_report,
    figures_missing,
    render_html,
    render_text,
    report_csv,
    report_json,
    why_text,
)
from refinelab.runtime import Settings, open_runtime
from refinelab.store import RunListing, Store


def add_parsers(commands: Any, environ: Mapping[str, str]) -> None:
    """Register ``report`` and ``export``."""
    report = commands.add_parser("report", help="tables (and --html plots) of stored runs")
    report.add_argument(
        "runs", nargs="*", metavar="RUN", help="run ids or unique prefixes (default: the newest run with results)"
    )
    _options.add_store(report)
    report.add_argument(
        "--format",
        choices=["text", "csv", "json"],
        default="text",
        help="output format (several runs: CSV rows under one header, JSON a list of reports)",
    )
    report.add_argument("--out", type=Path, help="write to FILE instead of standard output")
    report.add_argument(
        "--html",
        type=Path,
        nargs="?",
        const=DEFAULT_HTML,
        metavar="FILE",
        help=f"also write a self-contained HTML page (FILE default: {DEFAULT_HTML})",
    )
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
    export.add_argument("--out", type=Path, required=True, help="FILE.jsonl, or - for standard output")
    export.set_defaults(run=lambda args: run_export(args, environ))


T = TypeVar("T")
DEFAULT_HTML = Path("report.html")
"""Where ``report --html`` with no file name writes the page (in the current directory)."""


def with_store(settings: Settings, read: Callable[[Store], T]) -> T:
    """``read`` over the settings' store, opened through the runtime (a user error when there is none); from
    inside a running event loop (a notebook, a browser driver's), on a loop of its own in a helper thread."""

    async def opened() -> T:
        async with open_runtime(settings) as runtime:
            return read(runtime.open_store(create=False))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(opened())
    with ThreadPoolExecutor(1) as helper:
        return helper.submit(asyncio.run, opened()).result()


def stored_report(settings: Settings, run_id: str | None, baseline: str | None = None) -> Report:
    """The report of a stored run (the newest with results when ``run_id`` is None)."""
    return with_store(settings, lambda store: build_report(store, run_id, baseline=baseline))


def _settings(args: argparse.Namespace, environ: Mapping[str, str]) -> Settings:
    return _options.settings(args, environ, ("store",))


def run_report(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Print (or write) the report of each run."""
    settings = _settings(args, environ)
    if args.list:
        print(with_store(settings, lambda store: run_listing(store.listing())), end="")
        return 0
    if args.why is not None:
        return _emit(args, with_store(settings, lambda store: _why(store, args.runs, args.why)))
    reports = with_store(
        settings, lambda store: [build_report(store, run, baseline=args.baseline) for run in args.runs or [None]]
    )
    _emit(args, _rendered(reports, args.format))
    if args.html is not None:
        write_atomically(args.html, "\n".join(render_html(report) for report in reports))
        if args.html is DEFAULT_HTML:  # no name given: say where it went
            print(f"refinelab: HTML report -> {args.html}", file=sys.stderr)
        if (missing := figures_missing()) is not None:
            print(f"refinelab: {args.html}: every table, no figures: {missing}", file=sys.stderr)
    return 0


def _rendered(reports: Sequence[Report], form: str) -> str:
    """The reports in one format: text one after another; CSV under one header; JSON one document (a
    list when there are several), so that every format parses as a whole."""
    if form == "csv":
        return report_csv(*reports)
    if form == "json" and len(reports) > 1:
        return json.dumps([json.loads(report_json(report)) for report in reports], indent=2) + "\n"
    render = render_text if form == "text" else report_json
    return "\n".join(render(report) for report in reports)


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

    def rows(store: Store) -> tuple[str, list[str]]:
        run = store.run(args.run_id)
        return run.id, [json.dumps(row) + "\n" for row in store.export_rows(run.id)]

    run_id, lines = with_store(_settings(args, environ), rows)
    if str(args.out) == "-":  # to a pipe: the lines alone on standard output, the count on standard error
        sys.stdout.writelines(lines)
        print(f"{counted(len(lines), 'attempt')} of run {run_id}", file=sys.stderr)
        return 0
    write_atomically(args.out, lines)
    print(f"{counted(len(lines), 'attempt')} of run {run_id} -> {args.out}")
    return 0
