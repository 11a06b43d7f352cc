"""``refinelab run``: run (or resume) an experiment from a spec file or from flags, then report."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from refinelab._validate import is_seconds
from refinelab._words import counted, dollars
from refinelab.cli import _options, _signals
from refinelab.cli._check import add_benchmark_options, print_cluster_events
from refinelab.cli._progress import ProgressDisplay
from refinelab.cli._report import stored_report, with_store
from refinelab.errors import UserError
from refinelab.experiment import (
    SAME,
    BenchmarkChoice,
    EndpointChange,
    ExperimentSpec,
    Progress,
    RunOptions,
    load_spec,
    resolve_sources,
    run_experiment,
)
from refinelab.models import checked_effort, url_problem
from refinelab.problems import BENCHMARKS
from refinelab.report import render_text
from refinelab.runtime import NOT_GIVEN, SandboxRequest, Settings, choose_sandbox, parse_sandbox
from refinelab.strategies import StrategySpec

_ONE_OFF = (
    "benchmark",
    "data",
    "release",
    "after",
    "before",
    "limit",
    "problems",
    "strategy",
    "param",
    "model",
    "critic",
    "repeats",
    "name",
)


def add_parser(commands: Any, environ: Mapping[str, str]) -> None:
    """Register ``run``."""
    parser = commands.add_parser("run", help="run strategies on a benchmark with models; resumable")
    parser.add_argument("spec", nargs="?", type=Path, help="experiment spec (TOML); or use the flags below")
    one_off = parser.add_argument_group("one-off runs (instead of a spec file)")
    one_off.add_argument("--benchmark", choices=sorted(BENCHMARKS), help="which problems")
    add_benchmark_options(one_off)
    one_off.add_argument("--limit", type=int, help="at most N problems")
    one_off.add_argument("--problems", help="only these task ids, comma-separated")
    one_off.add_argument("--strategy", action="append", help="e.g. 'self-refine(max_iters=3)' (repeatable)")
    one_off.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="strategy argument")
    one_off.add_argument("--model", action="append", help="actor model (repeatable)")
    one_off.add_argument("--critic", action="append", help="critic model for critic strategies (default: the actor)")
    one_off.add_argument("--repeats", type=int, help="repetitions of each problem (default 1)")
    one_off.add_argument("--name", help="a name for the run (part of its id)")
    parser.add_argument(
        "--base-url",
        action="append",
        help="OpenAI-compatible server for the actors (vLLM, Ollama, llama.cpp...), over their own [models.endpoints] "
        "entries and base_url in the spec; repeat for replicas",
    )
    parser.add_argument(
        "--critic-base-url",
        action="append",
        help="server for the critics that are not also actors (default: their own [models.endpoints] entry, "
        "else critic_base_url in the spec, else --base-url)",
    )
    moved = parser.add_mutually_exclusive_group()
    moved.add_argument(
        "--endpoint-moved",
        action="store_true",
        help="a model the run recorded at another server is the same model, moved: resume the run, keeping its "
        "stored and cached answers",
    )
    moved.add_argument(
        "--fresh",
        action="store_true",
        help="a model the run recorded at another server was another model: start a new run (ID.2...) whose "
        "moved roles ask their own server again instead of taking the old server's cached answers",
    )
    parser.add_argument(
        "--reasoning-effort",
        action="append",
        metavar="LEVEL",
        help="reasoning effort to cross with every strategy (repeatable): none, minimal, low, medium, high, xhigh, "
        "or a thinking-token budget (2048); replaces a spec's reasoning_effort",
    )
    _options.add_config(parser)
    parser.add_argument("--concurrency", type=int, help="problems in flight (default 8)")
    parser.add_argument(
        "--timeout",
        type=float,
        help="CPU seconds for every test (default: [sandbox] timeout in the spec, else the benchmarks' graders': "
        "evalplus's max(1, 4 x the reference's time) for humaneval-plus and mbpp-plus, 6 for livecodebench, else 4)",
    )
    _options.add_sandbox(parser)
    _options.add_cluster(parser)
    _options.add_store(parser)
    _options.add_cache(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress line and no report at the end")
    parser.set_defaults(run=lambda args: run(args, environ))


def run(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Build the spec, run it, print the report; 1 when infrastructure failures are left to retry."""
    settings = _options.settings(args, environ, ("config", "store", "cache", "cluster", "sandbox"))
    spec, options = _spec(args, settings), _run_options(args)  # every flag checked before anything is downloaded
    spec = replace(spec, models=settings.models.merge(spec.models))  # the spec's own table wins
    with ProgressDisplay(sys.stderr) as show:
        spec = resolve_sources(spec, settings, None if args.quiet else show)
    display = TerminalProgress(sys.stderr, quiet=args.quiet)
    progress = Progress(on_update=_announcing(display, spec, settings.store, args.quiet))
    try:
        summary = asyncio.run(_signals.until_sigterm(run_experiment(spec, settings, progress, options=options)))
    except (KeyboardInterrupt, asyncio.CancelledError) as exc:
        display.finish()
        what = "interrupted" if isinstance(exc, KeyboardInterrupt) else "terminated (SIGTERM)"
        print(f"refinelab: {what}; finished trajectories are stored: run the same command to resume", file=sys.stderr)
        return INTERRUPTED if isinstance(exc, KeyboardInterrupt) else TERMINATED
    display.finish()
    print_cluster_events(summary.events)
    if args.quiet:  # no report to print: only the failures are read (a report reads every trajectory)
        failures = with_store(settings, lambda store: tuple(store.failures(summary.run_id)))
    else:
        report = stored_report(settings, summary.run_id)
        print(render_text(report), end="")
        failures = report.failures
    open_failures = [f for f in failures if not f.resolved]
    if open_failures:
        print(
            f"refinelab: {len(open_failures)} trajectories hit infrastructure failures; run the same command to retry",
            file=sys.stderr,
        )
        return 1
    return 0


def _announcing(
    display: TerminalProgress, spec: ExperimentSpec, store: Path, quiet: bool
) -> Callable[[Progress], None]:
    """``display.update``, first saying (once the runner has chosen the run: the spec's own, or a fresh
    generation of it) which run it is and what its benchmarks were read from."""
    pending = [True]

    def update(progress: Progress) -> None:
        if pending and progress.run_id:
            pending.clear()
            count = counted(len(spec.configurations()), "configuration")
            display.note(f"run {progress.run_id}: {count} · store {store}")
            for choice in spec.benchmarks:
                if choice.source is not None and not quiet:
                    display.note(f"benchmark: {choice.source.describe()}")
        display.update(progress)

    return update


INTERRUPTED = 128 + signal.SIGINT
"""Exit code after Ctrl-C (130, the shell's convention)."""
TERMINATED = _signals.TERMINATED
"""Exit code after SIGTERM (143): the run is marked interrupted, its stored work kept."""


def _spec(args: argparse.Namespace, settings: Settings) -> ExperimentSpec:
    given = [name for name in _ONE_OFF if getattr(args, name) not in (None, [])]
    if args.spec is not None and given:
        raise UserError(f"give a spec file or --{given[0].replace('_', '-')} and the other one-off flags, not both")
    layers = (_sandbox_flags(args), settings.sandbox_request())  # a spec file's [sandbox] goes between them
    if args.spec is not None:
        spec = load_spec(args.spec, sandbox=layers[0], defaults=layers[1])
    else:
        spec = _from_flags(args, layers)
    efforts = tuple(dict.fromkeys(checked_effort(e, "--reasoning-effort") for e in args.reasoning_effort or ()))
    return replace(
        spec,
        concurrency=_positive(args.concurrency, "--concurrency") or spec.concurrency,
        reasoning_effort=efforts or spec.reasoning_effort,
    )


def _sandbox_flags(args: argparse.Namespace) -> SandboxRequest:
    """What ``--timeout`` and ``--sandbox`` (``--isolation``) say, over a spec file's ``[sandbox]`` table
    (both go through :func:`refinelab.runtime.choose_sandbox`, as ``check`` and ``solve`` do)."""
    if args.timeout is not None and not is_seconds(args.timeout):
        raise UserError("--timeout must be a positive number of seconds")
    return SandboxRequest(
        isolation=NOT_GIVEN if args.sandbox is None else parse_sandbox(args.sandbox).isolation,
        timeout=NOT_GIVEN if args.timeout is None else args.timeout,
    )


def _from_flags(args: argparse.Namespace, sandbox: tuple[SandboxRequest, ...]) -> ExperimentSpec:
    if args.benchmark is None or not args.strategy or not args.model:
        raise UserError("give a spec file, or at least --benchmark, --strategy and --model")
    params = dict(_param(text) for text in args.param)
    strategies = [StrategySpec.parse(text) for text in args.strategy]
    strategies = [StrategySpec(s.name, {**s.params, **params}) for s in strategies]
    for strategy in strategies:
        strategy.bind()  # unknown arguments are errors now, not after the first problem
    problems = tuple(p.strip() for p in args.problems.split(",") if p.strip()) if args.problems else ()
    data = str(args.data.resolve()) if args.data else None
    if args.after and args.before and args.after >= args.before:
        raise UserError(f"--before ({args.before}) must be later than --after ({args.after})")
    benchmark = BenchmarkChoice(
        args.benchmark,
        data,
        problems,
        after=args.after,
        before=args.before,
        release=args.release,
        limit=_positive(args.limit, "--limit"),
    )
    return ExperimentSpec(
        (benchmark,),
        tuple(strategies),
        tuple(args.model),
        tuple(args.critic or [SAME]),
        _positive(args.repeats, "--repeats") or 1,
        args.name or f"{args.benchmark}",
        sandbox=choose_sandbox([args.benchmark], *sandbox),
    )


def _run_options(args: argparse.Namespace) -> RunOptions:
    """The servers the flags name (over the spec's, below a model's own entry: see docs/experiments.md) and
    what to do when a role's server moved since the run was recorded."""
    for flag, urls in (("--base-url", args.base_url), ("--critic-base-url", args.critic_base_url)):
        for url in urls or ():
            if (problem := url_problem(url)) is not None:
                raise UserError(f"{flag}: {problem}")
    change: EndpointChange = "moved" if args.endpoint_moved else "fresh" if args.fresh else "stop"
    return RunOptions(_urls(args.base_url), _urls(args.critic_base_url), change)


def _urls(given: list[str] | None) -> str | tuple[str, ...] | None:
    """One ``--base-url``, or several (replicas of the model)."""
    if not given:
        return None
    return given[0] if len(given) == 1 else tuple(given)


def _positive(value: int | None, flag: str) -> int | None:
    if value is not None and value < 1:
        raise UserError(f"{flag} must be at least 1")
    return value


def _param(text: str) -> tuple[str, object]:
    try:
        return StrategySpec.argument(text)
    except UserError:
        raise UserError(f"--param {text!r}: expected KEY=VALUE") from None


Clock = Callable[[], float]
"""Seconds, for rates and times left."""


class TerminalProgress:
    """A run's progress on standard error (:class:`ProgressDisplay`, the display ``check`` uses): a bar with
    done/total, rate, time left, tokens and cost on a terminal; a line per tenth elsewhere. Cost says
    ``unknown`` until a price is known (never a $0 before the first priced call)."""

    PHASE = "trajectories"
    """What the bar counts: units (configuration x problem x repeat)."""

    def __init__(
        self,
        stream: TextIO,
        *,
        quiet: bool = False,
        tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.quiet = quiet
        self.display = ProgressDisplay(stream, tty=tty, clock=clock)

    def update(self, progress: Progress) -> None:
        """Show the current state."""
        if self.quiet or progress.total == 0:
            return
        finished = progress.skipped + progress.done + progress.failed
        self.display(self.PHASE, finished, progress.total, run_detail(progress))

    def note(self, text: str) -> None:
        """A line of its own on the stream (see :meth:`ProgressDisplay.note`)."""
        self.display.note(text)

    def finish(self) -> None:
        """End the bar."""
        self.display.close()


def run_detail(progress: Progress) -> str:
    """Tokens and cost so far (and units from before, infrastructure failures)."""
    known = progress.cost_usd is not None and progress.tokens > 0
    cost = dollars(progress.cost_usd) if known else "unknown"
    parts = [f"{progress.tokens:,} tokens", f"cost {cost}"]
    if progress.skipped:
        parts.append(f"{progress.skipped} from before")
    if progress.failed:
        parts.append(f"{progress.failed} infrastructure failures")
    return " · ".join(parts)
