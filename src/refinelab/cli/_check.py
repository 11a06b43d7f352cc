"""``refinelab check``: score samples files, or self-test a benchmark."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from refinelab._collection import batch_pace
from refinelab._files import LinesInOrder, write_atomically
from refinelab._progress import ProgressHook
from refinelab._validate import is_seconds
from refinelab._words import counted
from refinelab.check import (
    CheckInputs,
    CheckOptions,
    GeneratedTestSet,
    Sample,
    ScoredSample,
    Selection,
    SelectionOptions,
    SelfTestReport,
    SkipCause,
    check_samples,
    format_hint,
    read_any_samples,
    read_generated_tests,
    self_test,
    summarize,
)
from refinelab.cli import _options, _signals
from refinelab.cli._progress import ProgressDisplay
from refinelab.errors import UserError
from refinelab.problems import BENCHMARKS, BenchmarkFiles, Problem, valid_date
from refinelab.runtime import Runtime, open_runtime
from refinelab.sandbox import ClusterEvent, ClusterSandbox, Loading, Sandbox, WorkerPool, stages, stream_benchmark
from refinelab.verification import AGREEMENT_SECONDS, agreement_limits


def add_parser(commands: Any, environ: Mapping[str, str]) -> None:
    """Register ``check``."""
    parser = commands.add_parser("check", help="score samples (human-eval/evalplus format) or self-test a benchmark")
    parser.add_argument(
        "samples",
        nargs="?",
        type=Path,
        help="JSONL with task_id and completion or solution (or CodeT's prompt and samples, or "
        "LiveCodeBench's JSON list of question_id and code_list)",
    )
    parser.add_argument("--benchmark", required=True, choices=sorted(BENCHMARKS), help="which problems")
    add_benchmark_options(parser)
    parser.add_argument(
        "--workers",
        type=int,
        help="sandbox workers (default: $REFINELAB_WORKERS, else [sandbox] workers in refinelab.toml, else one "
        "per core)",
    )
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
    _options.add_sandbox(parser)
    _options.add_cluster(parser)
    _options.add_config(parser)
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="where downloaded benchmarks and computed HumanEval+/MBPP+ outputs are kept (default: "
        "$REFINELAB_CACHE_DIR, else cache_dir in refinelab.toml, else $XDG_CACHE_HOME/refinelab, else "
        "~/.cache/refinelab)",
    )
    _add_selection_options(parser)
    parser.set_defaults(run=lambda args: run(args, environ))


def print_cluster_events(events: Iterable[ClusterEvent]) -> None:
    """Say on stderr what happened to cluster nodes that a reader should know (lost, refused, retried)."""
    for event in events:
        if event.kind != "joined":
            print(f"refinelab: cluster: node {event.node} {event.kind}: {event.detail}", file=sys.stderr)


def cluster_events(sandboxes: Iterable[Sandbox]) -> list[ClusterEvent]:
    """What happened to the nodes of every cluster among ``sandboxes``, in order."""
    return [event for sandbox in sandboxes if isinstance(sandbox, ClusterSandbox) for event in sandbox.events]


def add_benchmark_options(parser: Any) -> None:
    """``--data``, ``--release``, ``--after`` and ``--before`` (``check`` and ``run`` share them)."""
    parser.add_argument(
        "--data", type=Path, help="benchmark file (default: the benchmark's pinned source, downloaded once and cached)"
    )
    parser.add_argument(
        "--release",
        help="release as upstream spells it: livecodebench release_v1..release_v6 (cumulative), v5 (one release), "
        "v4_v5 (a range); apps introductory/interview/competition; mbpp test/train/validation/prompt/full",
    )
    parser.add_argument("--after", type=_date, metavar="YYYY-MM-DD", help="only problems dated on or after this day")
    parser.add_argument("--before", type=_date, metavar="YYYY-MM-DD", help="only problems dated before this day")


def _date(text: str) -> str:
    if not valid_date(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a date written YYYY-MM-DD")
    return text


def describe_source(files: BenchmarkFiles) -> list[str]:
    """What a benchmark was read from, in lines: the source, then every file with its hash."""
    provenance = files.provenance
    return [f"benchmark: {provenance.describe()}", *(f"  {line}" for line in provenance.file_lines())]


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


def run(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Validate the arguments, then score or self-test."""
    if args.workers is not None and args.workers < 1:
        raise UserError("--workers must be at least 1")
    if args.after and args.before and args.after >= args.before:
        raise UserError(f"--before ({args.before}) must be later than --after ({args.after})")
    for flag, seconds in (("--timeout", args.timeout), ("--agreement-timeout", args.agreement_timeout)):
        if seconds is not None and not is_seconds(seconds):
            raise UserError(f"{flag} must be a positive number of seconds")
    if not args.self_test and args.samples is None:
        raise UserError("give a SAMPLES file, or --self-test")
    _check_selection_args(args)
    settings = _options.settings(args, environ, ("config", "cache_dir", "workers", "cluster", "sandbox"))
    options = CheckOptions(
        benchmark=args.benchmark,
        data=args.data,
        release=args.release,
        after=args.after,
        before=args.before,
        timeout=args.timeout,
        test_details=args.test_details,
        isolation=settings.isolation,
        allow_packages=tuple(args.allow_package),
        agreement_timeout=args.agreement_timeout,
    )
    for package in options.missing_packages:
        print(
            f"refinelab: note: {args.benchmark}'s own grader lets programs import {package}, which is not "
            f"installed here; programs that import it will fail (pip install {package})",
            file=sys.stderr,
        )

    async def check() -> int:
        async with open_runtime(settings) as runtime:
            try:
                return await _check(args, options, runtime)
            finally:
                print_cluster_events(cluster_events(runtime.sandboxes))

    with batch_pace():
        try:
            return asyncio.run(_signals.until_sigterm(check()))
        except asyncio.CancelledError:
            print("refinelab: terminated (SIGTERM)", file=sys.stderr)
            return _signals.TERMINATED


async def _check(args: argparse.Namespace, options: CheckOptions, runtime: Runtime) -> int:
    with ProgressDisplay(sys.stderr) as show:
        files = options.files(runtime.settings.fetch_options(show))
        show.close()
        if files.provenance.revision is not None:  # downloaded: say which revision, release and bytes
            print("\n".join(describe_source(files)), file=sys.stderr)
        sandbox = await runtime.open_sandbox(options.sandbox())
        # Problems load while the first tasks' programs are scored; the samples are read (and a bad file
        # rejected) against every problem without its hidden tests, before anything is computed.
        cache_dir = runtime.settings.cache_dir
        async with stream_benchmark(files, pool=sandbox, cache_dir=cache_dir, progress=show) as loading:
            if args.self_test:
                report = await self_test(options.in_window(await loading.problems()), sandbox, progress=show)
                show.close()
                _print_self_test(report, sandbox)
                return 1 if report.discrepancies else 0
            problems = options.in_window(loading.bare)
            inputs = _inputs(args, problems, loading.bare)
            hook = _after_loading(show, loading)
            if args.select:
                selection = _selection_options(args, options)
                result = await check_samples(inputs, sandbox, selection, hook, whole=loading.whole)
            else:
                with _scored_out(args.out, len(inputs.samples)) as out:
                    result = await check_samples(inputs, sandbox, None, hook, out, whole=loading.whole)
        show.close()
    if result.selections is not None:
        _print_summary(result.scored, problems, sandbox)
        _print_selection(result.selections, inputs.tests, args)
        _write_out(args.out, result.selections)
        return 0
    _print_summary(result.scored, problems, sandbox)
    hint = format_hint(inputs.samples)
    if hint is not None:
        sys.stdout.flush()
        print(f"refinelab: hint: {hint}", file=sys.stderr)
    return 0


def _after_loading(show: ProgressHook, loading: Loading) -> ProgressHook:
    """``show``, with scoring's progress held back until every problem has loaded: a display shows one phase
    at a time, and while expected outputs are computed that is the one to watch (scoring's shows how far it
    got when it starts)."""

    def hook(what: str, done: int, total: int) -> None:
        if what != "scoring" or loading.finished():
            show(what, done, total)

    return hook


def _inputs(args: argparse.Namespace, problems: Sequence[Problem], every: Sequence[Problem]) -> CheckInputs:
    """The samples of ``problems`` (the date window's; samples of ``every`` other problem are left out,
    with a note, as LiveCodeBench scores a window), with a note on CodeT records that matched no task,
    then the generated tests."""
    samples, unmatched = read_any_samples(args.samples, every)
    samples = _in_window(samples, problems, args.samples)
    if unmatched:
        print(
            f"refinelab: note: {len(unmatched)} samples records matched no task: {_listing(unmatched)}",
            file=sys.stderr,
        )
    tests = read_generated_tests(args.generated_tests, problems) if args.generated_tests else None
    return CheckInputs(samples, unmatched, tests)


def _in_window(samples: list[Sample], problems: Sequence[Problem], path: Path) -> list[Sample]:
    """The samples of ``problems`` (each task's keep their numbers); a note on the rest."""
    ids = {problem.id for problem in problems}
    kept = [sample for sample in samples if sample.problem.id in ids]
    if len(kept) == len(samples):
        return samples
    outside = sorted({sample.problem.id for sample in samples} - ids)
    note = f"{len(samples) - len(kept)} samples of {len(outside)} tasks outside the date window left out"
    print(f"refinelab: note: {note}: {_listing(outside, 5)}", file=sys.stderr)
    if not kept:
        raise UserError(f"{path}: no sample is of a task in the date window")
    return kept


def _write_out(path: Path | None, selections: Sequence[Selection]) -> None:
    if path is not None:
        write_atomically(path, [json.dumps(item.to_json()) + "\n" for item in selections])


@contextmanager
def _scored_out(path: Path | None, count: int) -> Iterator[Callable[[int, ScoredSample], None] | None]:
    """Where each scored sample's ``--out`` line goes as soon as it is known (written in file order while
    the rest are scored: 1,640 HumanEval+ lines took 1.5 s to write after the last result); ``None``
    without ``--out``."""
    if path is None:
        yield None
        return
    with LinesInOrder(path, count) as lines:
        yield lambda index, scored: lines.put(index, scored.json_line())


def _check_selection_args(args: argparse.Namespace) -> None:
    if args.select is None:
        if args.generated_tests is not None or args.tests_per_sample is not None:
            raise UserError("--generated-tests and --tests-per-sample need --select dual-agreement")
        return
    if args.self_test:
        raise UserError("--select chooses among samples; it does not combine with --self-test")
    if args.generated_tests is None and args.visible_tests != "join":
        raise UserError("--select dual-agreement needs --generated-tests TESTS (or --visible-tests join)")
    if args.tests_per_sample is not None and args.tests_per_sample < 1:
        raise UserError("--tests-per-sample must be at least 1")


def _selection_options(args: argparse.Namespace, options: CheckOptions) -> SelectionOptions:
    return SelectionOptions(
        score=args.agreement_score,
        visible=args.visible_tests,
        per_sample=args.tests_per_sample,
        limits=agreement_limits(options.choice().agreement_timeout),
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


def _print_summary(scored: Sequence[ScoredSample], problems: Sequence[Problem], pool: Sandbox) -> None:
    summary = summarize(scored)
    print(f"{summary.samples} samples on {summary.problems} of {len(problems)} problems ({_isolation(pool)})")
    for k, value in summary.pass_at.items():
        print(f"pass@{k}: {value:.4f}")
    counts = ", ".join(f"{verdict} {count}" for verdict, count in sorted(summary.verdicts.items()))
    print(f"test outcomes: {counts}")
    if pool.limits.stop_at_failure and summary.verdicts.get("skipped"):
        print(_skipped_line(summary.skipped))


def _skipped_line(skipped: Mapping[SkipCause, int]) -> str:
    """Which tests were skipped, and why (only each program's verdict was asked for)."""
    parts = []
    if skipped.get("failure"):
        parts.append(f"{skipped['failure']} after an error, timeout or crash (the program's later tests)")
    if skipped.get("stage"):
        sizes = ", ".join(str(len(stage)) for stage in stages(10**6, staged=True)[:3])
        parts.append(
            f"{skipped['stage']} after a wrong answer (tests run in stages of {sizes}...; expected values stay out "
            "of the sandbox, so a wrong answer is judged once its stage ends and stops only the later stages)"
        )
    return f"  skipped: {'; '.join(parts)}; --test-details runs every one"


def _print_self_test(report: SelfTestReport, pool: Sandbox) -> None:
    print(f"self-test: {report.problems} problems, {report.references} with a reference solution ({_isolation(pool)})")
    for found in report.discrepancies:
        print(f"  {found.problem_id}: {found.which}: {found.detail}")
    print(_visible_line(report))
    print(_self_test_summary(report))


def _self_test_summary(report: SelfTestReport) -> str:
    """What was checked, in words: stubs on every problem, references where there are any, and references
    on the visible tests where there are both."""
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
        visible = report.visible_checked - sum(d.which == "visible" for d in report.discrepancies)
        if report.visible_checked:
            found += f", and their visible tests on {visible} of {report.visible_checked}"
    return f"{found}; {counted(len(report.discrepancies), 'discrepancy', 'discrepancies')}"


def _visible_line(report: SelfTestReport) -> str:
    """How many problems have no visible tests (a strategy that runs tests has nothing to run there)."""
    some, none = report.problems - report.without_visible, report.without_visible
    verb = "has" if none == 1 else "have"
    return f"visible tests: {some} of {counted(report.problems, 'problem')} have some; {none} {verb} none"


def _isolation(pool: Sandbox) -> str:
    where = f", on {counted(len(pool.joined), 'cluster node')}" if isinstance(pool, ClusterSandbox) else ""
    got = f" ({pool.isolation_note})" if isinstance(pool, WorkerPool) and pool.isolation_note else ""
    return f"isolation: {pool.isolation}{got}, {pool.limits.rule()}{where}"
