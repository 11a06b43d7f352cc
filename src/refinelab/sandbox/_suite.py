"""What a program is run against: a suite of tests, and what of it crosses to workers and cluster nodes
(:class:`SuiteInputs`: the inputs only, never an expected value or output)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from refinelab.problems import AssertTest, CallTest, Problem, ProblemKind, Test
from refinelab.sandbox._worker import protocol as wire


@dataclass(frozen=True)
class Suite:
    """A list of tests and how to run a program against them."""

    tests: tuple[Test, ...]
    """The tests, in order."""
    kind: ProblemKind = "function"
    """How programs are run: functions called by tests, or whole stdin/stdout programs."""
    entry_point: str | None = None
    """The function the tests call (``candidate`` is bound to it)."""
    setup: str = ""
    """Code run after the program and before the tests."""
    prelude: str = ""
    """Code run in the program's namespace before the program (a benchmark harness's imports)."""

    @classmethod
    def of(
        cls,
        tests: Sequence[Test],
        *,
        kind: ProblemKind = "function",
        entry_point: str | None = None,
        setup: str = "",
        prelude: str = "",
    ) -> Suite:
        """A suite from any sequence of tests."""
        return cls(tuple(tests), kind, entry_point, setup, prelude)

    @classmethod
    def visible(cls, problem: Problem) -> Suite:
        """The problem's visible tests: what a strategy may run and show the model."""
        return cls.for_problem(problem, problem.visible_tests)

    @classmethod
    def hidden(cls, problem: Problem) -> Suite:
        """The problem's hidden tests: what scores an attempt (never shown to a strategy)."""
        return cls.for_problem(problem, problem.hidden_tests)

    @classmethod
    def for_problem(cls, problem: Problem, tests: Sequence[Test]) -> Suite:
        """Any tests run as the problem's programs run (kind, entry point, setup, prelude): the one place a
        suite is built from a problem (its visible or hidden tests, or tests a strategy wrote for it)."""
        return cls.of(
            tests, kind=problem.kind, entry_point=problem.entry_point, setup=problem.test_setup, prelude=problem.prelude
        )

    def inputs(self) -> SuiteInputs:
        """What crosses to a worker (or a cluster node): the suite without its expected values."""
        tests = tuple(_test_for_worker(t) for t in self.tests)
        return SuiteInputs(self.kind, self.entry_point, self.setup, self.prelude, tests)

    def for_worker(self) -> dict[str, object]:
        """What the worker gets: inputs only, never expected values or outputs."""
        return self.inputs().for_worker()


@dataclass(frozen=True)
class SuiteInputs:
    """A suite without its expected values: what a program runs on. Workers get this, and so do cluster
    nodes: expected values and outputs stay with the caller, who judges what the programs did."""

    kind: ProblemKind
    """How programs are run (see :attr:`Suite.kind`)."""
    entry_point: str | None
    """The function the tests call."""
    setup: str
    """Code run after the program and before the tests."""
    prelude: str
    """Code run in the program's namespace before the program."""
    tests: tuple[dict[str, object], ...]
    """Each test's input in the worker protocol's form (an expression, assert code or stdin)."""

    def for_worker(self) -> dict[str, object]:
        """The suite as the worker protocol spells it."""
        return {
            wire.ENTRY_POINT: self.entry_point,
            wire.SETUP: self.setup,
            wire.PRELUDE: self.prelude,
            wire.TESTS: list(self.tests),
        }

    def subset(self, indices: Sequence[int]) -> SuiteInputs:
        """The same suite with only the tests at ``indices``, in that order."""
        return replace(self, tests=tuple(self.tests[i] for i in indices))


Item = tuple[str, Suite]
"""A program and the suite to run it against."""
InputItem = tuple[str, SuiteInputs]
"""A program and the inputs of the suite it runs against (what a worker or a cluster node gets)."""


def _test_for_worker(test: Test) -> dict[str, object]:
    """What the worker gets for a test: inputs only, never the expected value or output."""
    if isinstance(test, CallTest):
        return {wire.TEST_KIND: wire.CALL, wire.EXPR: test.expr}
    if isinstance(test, AssertTest):
        return {wire.TEST_KIND: wire.ASSERT, wire.CODE: test.code}
    return {wire.TEST_KIND: wire.STDIO, wire.STDIN: test.stdin}
