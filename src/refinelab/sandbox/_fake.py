"""A sandbox double for unit tests: trusted test code run in the caller's own process.

:class:`FakeSandbox` runs each program with ``exec`` in a fresh namespace, with no isolation and no
limits, and judges the results with the real judge (values go through the same codec), so a strategy
test sees the outcomes, messages and feedback a :class:`~refinelab.sandbox.WorkerPool` would give for
the same program — without bubblewrap or worker processes. Only for code the test wrote itself: a
program that loops forever hangs the test (an exit is an error, as in a worker). Results say
``isolation="fake"``.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import sys
from collections.abc import Sequence

from refinelab.problems import AssertTest, CallTest, StdioTest, Test
from refinelab.sandbox._judge import judge, value_tests, values_of
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._machine import this_machine
from refinelab.sandbox._outcome import IsolationLevel, RunResult, TestOutcome
from refinelab.sandbox._protocol import Sandbox
from refinelab.sandbox._suite import Item, Suite
from refinelab.sandbox._worker import codec
from refinelab.sandbox._worker import protocol as wire
from refinelab.sandbox._worker.child import CANDIDATE_FILE, entry_point, error_message

Report = dict[str, object]


class FakeSandbox(Sandbox):
    """Runs trusted programs in-process and judges them as the real sandbox does (see the module).

    A :class:`~refinelab.sandbox.Sandbox`. ``runs`` records every (program, suite) it ran, in
    order, so a test can check what a strategy executed.
    """

    isolation: IsolationLevel = "fake"

    def __init__(self, *, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        """Recorded for callers that store them; not enforced."""
        self.size = 1
        self.batch_size = 32
        self.machine: str | None = this_machine()
        self.runs: list[Item] = []
        """Every program run, with its suite, in order."""

    async def __aenter__(self) -> FakeSandbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def run(self, code: str, suite: Suite, *, limits: Limits | None = None) -> RunResult:
        """Run one program against a suite and judge every test."""
        self.runs.append((code, suite))
        reports, output = _run_program(code, suite)
        return RunResult(tuple(judge(t, r) for t, r in zip(suite.tests, reports)), self.isolation, output=output)

    async def run_items(
        self, items: Sequence[Item], *, limits: Limits | None = None, isolate: bool = False
    ) -> list[RunResult]:
        """Run programs, each against its own suite, one after another; results in item order."""
        return [await self.run(code, suite) for code, suite in items]

    async def values(  # noqa: PLR0913 - the Sandbox role's values(): keywords, each what one caller sets
        self,
        code: str,
        expressions: Sequence[str],
        *,
        entry_point: str | None = None,
        setup: str = "",
        limits: Limits | None = None,
        arguments: Sequence[str] | None = None,
        encoded: bool = False,
    ) -> list[object | TestOutcome]:
        """Evaluate expressions against a trusted program; a failing expression yields its outcome."""
        tests = value_tests(expressions, arguments)
        reports, _ = _run_program(code, Suite.of(tests, entry_point=entry_point, setup=setup))
        return values_of(tests, reports, encoded=encoded)


def _run_program(code: str, suite: Suite) -> tuple[list[Report], str]:
    """One report per test, in the worker's form, and what the program printed (function suites)."""
    if suite.kind == "stdio":
        return [_run_stdio(code, suite, test) for test in suite.tests], ""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        try:
            scope = _load(code, suite, {"__name__": "__candidate__", "__builtins__": builtins})
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the program's own error is its tests' report
            return [error_message(exc)] * len(suite.tests), printed.getvalue()
        reports = [_run_test(test, scope) for test in suite.tests]
    return reports, printed.getvalue()


def _load(code: str, suite: Suite, namespace: dict[str, object]) -> dict[str, object]:
    """Run the prelude and the program; the scope tests run in (``candidate`` bound, setup run)."""
    if suite.prelude:
        exec(compile(suite.prelude, "<prelude>", "exec", dont_inherit=True), namespace)  # noqa: S102 - trusted
    exec(compile(code, CANDIDATE_FILE, "exec", dont_inherit=True), namespace)  # noqa: S102 - trusted test code
    scope = dict(namespace)
    scope.update(inf=float("inf"), nan=float("nan"))
    if suite.entry_point:
        scope["candidate"] = entry_point(namespace, suite.entry_point)
        if "." not in suite.entry_point:
            scope[suite.entry_point] = scope["candidate"]
    if suite.setup:
        exec(compile(suite.setup, "<tests>", "exec", dont_inherit=True), scope)  # noqa: S102 - trusted
    return scope


def _run_test(test: Test, scope: dict[str, object]) -> Report:
    try:
        if isinstance(test, CallTest):
            value = eval(compile(test.expr, "<test>", "eval", dont_inherit=True), scope)  # noqa: S307 - trusted
            return {wire.STATUS: wire.S_VALUE, wire.VALUE: codec.encode(value)}
        if isinstance(test, AssertTest):
            exec(compile(test.code, "<test>", "exec", dont_inherit=True), scope)  # noqa: S102 - trusted
            return {wire.STATUS: wire.S_OK}
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a failing test is data (an exit too, as in a worker)
        return error_message(exc)
    return {wire.STATUS: wire.S_ERROR, wire.MESSAGE: "a stdin/stdout test in a function suite"}


def _run_stdio(code: str, suite: Suite, test: Test) -> Report:
    assert isinstance(test, StdioTest)
    out = io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(test.stdin)
    try:
        with contextlib.redirect_stdout(out):
            _load(code, Suite.of((), prelude=suite.prelude), {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as exc:
        if exc.code not in (None, 0):
            return {wire.STATUS: wire.S_ERROR, wire.ERROR_TYPE: "SystemExit", wire.MESSAGE: f"exit status {exc.code!r}"}
    except Exception as exc:  # noqa: BLE001 - a failing program is data
        return {**error_message(exc), wire.STDOUT: out.getvalue()}
    finally:
        sys.stdin = saved
    return {wire.STATUS: wire.S_DONE, wire.STDOUT: out.getvalue()}
