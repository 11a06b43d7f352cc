"""``refinelab recall-draft``: SELF-REDRAFT's recall on draft over a stored run, judged by a model."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Mapping
from typing import Any

from refinelab.cli import _options
from refinelab.experiment import RecallOnDraft, draft_pairs, judge_drafts, recall_on_draft
from refinelab.metrics import Rate
from refinelab.models import EndpointSetting, RoleEndpoint, choose_endpoint
from refinelab.runtime import Settings, open_runtime


def add_parser(commands: Any, environ: Mapping[str, str]) -> None:
    """Register ``recall-draft``."""
    parser = commands.add_parser(
        "recall-draft",
        help="ask a judge model whether each 'redraft' suggestion really changed the approach (recall on draft)",
    )
    parser.add_argument("run_id", nargs="?", metavar="RUN", help="run id or unique prefix (default: the newest)")
    parser.add_argument("--judge", required=True, metavar="MODEL", help="the auxiliary model that judges the pairs")
    parser.add_argument("--base-url", help="any OpenAI-compatible server for the judge")
    _options.add_config(parser)
    _options.add_store(parser)
    parser.add_argument(
        "--with-refine", action="store_true", help="also judge pairs after 'refine' suggestions (for contrast)"
    )
    parser.set_defaults(run=lambda args: run(args, environ))


def run(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Judge every pair of the run and print recall on draft per configuration."""
    settings = _options.settings(args, environ, ("config", "store"))
    judge = choose_endpoint("judge", args.judge, settings.models, over=[EndpointSetting(args.base_url, "--base-url")])
    return asyncio.run(_recall(args, settings, judge))


async def _recall(args: argparse.Namespace, settings: Settings, judge: RoleEndpoint) -> int:
    async with open_runtime(settings) as runtime:
        store = runtime.open_store(create=False)
        model = runtime.model(judge.model, base_url=judge.base_url)
        run_id = store.run(args.run_id).id
        pairs = draft_pairs(store, run_id, suggestions=("redraft", "refine") if args.with_refine else ("redraft",))
        if not pairs:
            print(f"run {run_id}: no critic suggested a redraft followed by a readable program; nothing to judge")
            return 0
        judgements = await judge_drafts(model, pairs)
        rows = recall_on_draft(store, run_id, judgements)
    print(f"run {run_id}: {len(pairs)} pairs judged by {model.name} at {judge.address} ({judge.chosen_by})")
    for line in _table(rows, args.with_refine):
        print(line)
    return 0


def _rate(rate: Rate) -> str:
    return "–" if rate.value is None else f"{100 * rate.value:.1f}% ({rate.count}/{rate.of})"


def _table(rows: list[RecallOnDraft], with_refine: bool) -> list[str]:
    header = ["configuration", "recall on draft", *(["changed after refine"] if with_refine else []), "unreadable"]
    body = [[r.label, _rate(r.redraft), *([_rate(r.refine)] if with_refine else []), str(r.unreadable)] for r in rows]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in [header, *body]]
