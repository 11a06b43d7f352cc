"""``refinelab solve PROMPT``: verified code for a prompt, with the evidence.

Exit codes: 0 when the code passes every given test (or, with none given, every generated one); 1 with
the best attempt, labelled UNVERIFIED, when it does not; 2 for a user error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

from refinelab._files import write_atomically
from refinelab._words import counted, dollars
from refinelab.cli import _options, _signals
from refinelab.errors import UserError
from refinelab.runtime import Settings
from refinelab.sandbox import Limits
from refinelab.solve import (
    Solution,
    SolveOptions,
    SolveProgress,
    parse_given_tests,
    parse_io_pair,
    read_io_file,
    solve_async,
)
from refinelab.strategies import Budget

VERIFIED, UNVERIFIED = 0, 1


def add_parser(commands: Any, environ: Mapping[str, str]) -> None:
    """Register ``solve``."""
    parser = commands.add_parser("solve", help="write code for a prompt and verify it against tests")
    parser.add_argument("prompt", help="what the code should do: text, @FILE, or - for standard input")
    parser.add_argument("--model", help="model (default: $REFINELAB_MODEL, else model in refinelab.toml)")
    parser.add_argument(
        "--base-url",
        action="append",
        help="any OpenAI-compatible server, e.g. http://localhost:8000/v1 (repeat: replicas)",
    )
    _options.add_config(parser)
    tests = parser.add_argument_group("tests (the prompt's own examples count too)")
    tests.add_argument("--test", action="append", default=[], metavar="ASSERT", help="e.g. 'fib(1) == [0]'")
    tests.add_argument("--tests", type=Path, action="append", default=[], metavar="FILE", help="asserts or test_*()")
    tests.add_argument("--io", action="append", default=[], metavar="'IN=>OUT'|FILE", help="stdin/stdout pair(s)")
    parser.add_argument("--kind", choices=["function", "stdio"], help="detected when omitted")
    parser.add_argument("--signature", help="starter code: 'def fib(n: int) -> list[int]:' or @FILE")
    parser.add_argument("--strategy", default="verified", help="any registered strategy (default: verified)")
    parser.add_argument(
        "--reasoning-effort",
        metavar="LEVEL",
        help="how long a reasoning model thinks: none, minimal, low, medium, high, xhigh, or a thinking-token budget",
    )
    budget = parser.add_argument_group("budget")
    budget.add_argument("--max-calls", type=int, help="model calls")
    budget.add_argument("--max-tokens", type=int, help="prompt plus completion tokens")
    budget.add_argument("--max-cost", type=float, help="US dollars")
    parser.add_argument("--out", type=Path, help="also write the code to FILE")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    _options.add_store(parser, "where the solve is recorded")
    _options.add_cache(parser)
    parser.add_argument("--no-record", action="store_true", help="do not record the solve in the store")
    parser.add_argument("--timeout", type=float, default=Limits().cpu_seconds, help="CPU seconds per test")
    _options.add_sandbox(parser)
    _options.add_cluster(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress display")
    parser.set_defaults(run=lambda args: run(args, environ))


def run(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Solve, print the code and the evidence (or JSON), write ``--out``; the exit code says verified."""
    settings = _options.settings(args, environ, ("config", "store", "cache", "model", "cluster", "sandbox"))
    if not settings.model:
        raise UserError("give --model (or set $REFINELAB_MODEL), e.g. --model ollama:qwen2.5-coder:7b")
    prompt = _text(args.prompt, "PROMPT")
    for value in args.test:
        parse_given_tests(value, f"--test {value!r}")  # a bad one is named before any model call
    tests = [*args.test, *(_test_file(path) for path in args.tests)]
    io = [pair for value in args.io for pair in _io(value)]
    display = _Display(sys.stderr, quiet=args.quiet)
    options = _solve_options(args, settings, display)
    received = _signals.Received()
    solving = solve_async(prompt, settings.model, tests=tests, io=io, kind=args.kind, options=options)
    try:
        solution = asyncio.run(_signals.until_sigterm(solving, received))
    except asyncio.CancelledError:  # SIGTERM before any attempt was run
        return _terminated()
    finally:
        display.finish()
    if args.out is not None:
        header = "" if solution.verified else f"# {solution.verdict}\n"
        write_atomically(args.out, header + (solution.code or ""))
    if args.json:
        print(json.dumps(solution.to_json(), indent=2))
    else:
        show(solution, sys.stdout)
    if received.sigterm:  # answered with the best attempt so far, as Ctrl-C is; the exit still says why
        return _terminated()
    return VERIFIED if solution.verified else UNVERIFIED


def _terminated() -> int:
    print("refinelab: terminated (SIGTERM)", file=sys.stderr)
    return _signals.TERMINATED


def _solve_options(args: argparse.Namespace, settings: Settings, display: _Display) -> SolveOptions:
    """The options of the solve, with the settings resolved above (a solve resolves them once)."""
    budget = Budget(args.max_calls, args.max_tokens, args.max_cost)
    return SolveOptions(
        signature=_text(args.signature, "--signature") if args.signature else None,
        strategy=args.strategy,
        budget=budget,
        reasoning_effort=args.reasoning_effort,
        base_url=args.base_url[0] if args.base_url and len(args.base_url) == 1 else args.base_url,
        record=not args.no_record,
        timeout=args.timeout,
        isolation=settings.isolation,
        on_progress=display.update,
        settings=settings,
    )


def _text(value: str, what: str) -> str:
    """Text as given, ``@FILE``'s content, or standard input for ``-``."""
    if value == "-":
        return sys.stdin.read()
    if value.startswith("@"):
        path = Path(value[1:])
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UserError(f"{what}: {path}: no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"{what}: {path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    return value


def _test_file(path: Path) -> str:
    text = _text(f"@{path}", "--tests")
    parse_given_tests(text, str(path))  # a bad file is reported with its name and line, before any model call
    return text


def _io(value: str) -> list[tuple[str, str]]:
    if "=>" in value:
        pairs = [parse_io_pair(value, "--io")]
    elif Path(value).is_file():
        pairs = read_io_file(Path(value))
    else:
        raise UserError(f"--io {value!r}: no such file, and not INPUT=>OUTPUT (\\n for a new line)")
    return [(pair.stdin, pair.expected) for pair in pairs]


def show(solution: Solution, stream: TextIO) -> None:
    """The verdict, the code (highlighted on a terminal), each test's outcome, and what it took."""
    from rich.console import Console
    from rich.syntax import Syntax

    console = Console(file=stream, soft_wrap=True, highlight=False)
    style = "bold green" if solution.verified else "bold red"
    console.print(solution.verdict, style=style)
    if stream.isatty():
        console.print(Syntax(solution.code or "(no code)", "python", background_color="default"))
    else:
        stream.write((solution.code or "(no code)").rstrip() + "\n")
    for check in solution.evidence.tests:
        mark = "✓" if check.passed else "✗"
        why = "" if check.passed or check.outcome is None else f": {check.outcome.verdict} {check.outcome.message}"
        console.print(f"{mark} {check.label} ({check.origin}){why.rstrip()}", style=None if check.passed else "red")
    console.print(_summary(solution), style="dim")


def _summary(solution: Solution) -> str:
    evidence = solution.evidence
    cost = dollars(evidence.cost_usd)
    generated = "; tests generated by the model (none were given)" if evidence.generated else ""
    cached = " (from the cache)" if evidence.cached else ""
    recorded = f"; recorded as run {evidence.run_id}" if evidence.run_id else ""
    attempts = counted(evidence.attempts, "attempt")
    return (
        f"{attempts}, {evidence.usage.total_tokens:,} tokens{cached}, {evidence.seconds:.1f} s, "
        f"cost {cost}; {evidence.strategy} with {evidence.model}, stopped: {solution.stopped}{generated}{recorded}"
    )


class _Display:
    """Progress on standard error: a live rich status line on a terminal (its clock keeps running while a
    model call is in flight), a line per attempt elsewhere."""

    def __init__(self, stream: TextIO, *, quiet: bool, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.quiet, self.clock = stream, quiet, clock
        self.tty = stream.isatty()
        self.status: Any = None
        self.shown = 0
        self.latest: SolveProgress | None = None
        self.received = clock()

    def update(self, progress: SolveProgress) -> None:
        """Show where the solve stands."""
        if self.quiet:
            return
        self.latest, self.received = progress, self.clock()
        if self.tty:
            self._live()
        elif progress.attempt > self.shown:
            self.shown = progress.attempt
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def line(self) -> str:
        """The status: attempt, phase, tests passing (and the best so far), tokens, elapsed."""
        progress = self.latest
        if progress is None:
            return "starting"
        seconds = progress.seconds + (self.clock() - self.received if progress.phase != "done" else 0.0)
        return (
            f"attempt {progress.attempt}: {progress.phase} · tests passing {progress.passing}/{progress.total} "
            f"(best {progress.best}) · {progress.tokens:,} tokens · {seconds:.1f} s"
        )

    def __rich__(self) -> str:
        return self.line()

    def _live(self) -> None:
        if self.status is None:
            from rich.console import Console

            self.status = Console(file=self.stream).status(self)  # re-rendered with the spinner: a live clock
            self.status.start()

    def finish(self) -> None:
        """Take the status line down."""
        if self.status is not None:
            self.status.stop()
            self.status = None
