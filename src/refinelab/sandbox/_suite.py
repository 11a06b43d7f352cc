"""What a program is run against: a suite of tests, and what of it crosses to workers and cluster nodes
(:class:`SuiteInputs`: the inputs only, never an expected value or output)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from operator import attrgetter
from typing import TypeVar, cast

from refinelab.problems import AssertTest, CallTest, Problem, ProblemKind, StdioTest, Test
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._packed import Packed
from refinelab.sandbox._worker import protocol as wire

_T = TypeVar("_T")


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
    reference_seconds: tuple[float, ...] = ()
    """CPU seconds the problem's reference solution took on each test, when measured (HumanEval+'s
    hidden tests); a test's limit follows it under :attr:`Limits.reference_factor`. Empty: not known."""
    seconds: tuple[float, ...] = ()
    """CPU limit of each test, overriding the run's :class:`Limits` (dual agreement gives generated tests
    a short limit of their own). Empty: the limits decide."""

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
        """The problem's hidden tests: what scores an attempt (never shown to a strategy), with the
        reference's time on each when it was measured."""
        suite = cls.for_problem(problem, problem.hidden_tests)
        if len(problem.hidden_seconds) == len(problem.hidden_tests):
            return replace(suite, reference_seconds=problem.hidden_seconds)
        return suite

    @classmethod
    def for_problem(cls, problem: Problem, tests: Sequence[Test]) -> Suite:
        """Any tests run as the problem's programs run (kind, entry point, setup, prelude): the one place a
        suite is built from a problem (its visible or hidden tests, or tests a strategy wrote for it)."""
        return cls.of(
            tests, kind=problem.kind, entry_point=problem.entry_point, setup=problem.test_setup, prelude=problem.prelude
        )

    def subset(self, indices: Sequence[int]) -> Suite:
        """The suite of some of these tests (each keeping its reference time and its own limit). What this
        suite worked out of its tests (:attr:`plain_expected`, :attr:`packed_bytes`) is carried over: a
        HumanEval+ program's stages are subsets of its task's 760 tests, and every task's are made once."""
        part = _picker(indices, len(self.tests))

        def pick(values: tuple[float, ...]) -> tuple[float, ...]:
            return part(values) if len(values) == len(self.tests) else ()

        made = replace(
            self, tests=part(self.tests), reference_seconds=pick(self.reference_seconds), seconds=pick(self.seconds)
        )
        known = self.__dict__
        if known.get("plain_expected") is not None:
            made.__dict__["plain_expected"] = part(known["plain_expected"])
        if known.get("packed_bytes") == 0:
            made.__dict__["packed_bytes"] = 0
        return made

    @cached_property
    def plain_expected(self) -> tuple[object, ...] | None:
        """Every test's expected value, where each test is a call test whose expected value holds no dict or
        is packed (a packed one stands as :data:`JUDGED_ALONE`); else None. A value, as the worker encodes it,
        equal to its test's is right: the encoding writes anything but plain lists, strings and numbers as a
        one-key dict (a tag), so an encoding equal to a value without dicts is that value, and ``==`` is the
        judge's first rule (:func:`~refinelab.sandbox._compare.values_match`; a NaN is never equal, as there).
        A packed value is equal to no value here: the judge compares it by its encoding, its digest or its
        decoded value, one test at a time, beside the others' ``==`` at C speed."""
        values: list[object] = []
        for test in self.tests:
            if type(test) is not CallTest:
                return None
            expected = test.expected
            if type(expected) is Packed:
                values.append(JUDGED_ALONE)
            elif _without_dict(expected):
                values.append(expected)
            else:
                return None
        return tuple(values)

    @cached_property
    def right_texts(self) -> frozenset[bytes]:
        """The SHA-256 digests of values rows, as workers write them (``protocol.VALUES_TEXT``), that were judged
        a pass on every test of this suite (:meth:`judged_right`): a row with the same text is the same values,
        right without being read. At most :data:`RIGHT_TEXTS` are kept (a task's right programs mostly return
        the same values), 32 bytes each, not the rows (kept whole, they put 17 MB on a warm HumanEval+ check's
        peak memory); not carried to a :meth:`subset`, whose tests differ."""
        return frozenset()

    def judged_right(self, digest: bytes) -> None:
        """Keep the digest of a values row's text that was judged a pass on every test of this suite (see
        :attr:`right_texts`)."""
        known = self.right_texts
        if len(known) < RIGHT_TEXTS:
            self.__dict__["right_texts"] = known | {digest}

    @cached_property
    def packed_bytes(self) -> int:
        """Bytes of the large (packed) expected values among the tests (what makes a job's reply and its
        judging heavy), counted once per suite: every program of a problem asks it of every stage."""
        return sum(t.expected.size for t in self.tests if type(t) is CallTest and type(t.expected) is Packed)

    def test_seconds(self, limits: Limits) -> list[float]:
        """The CPU limit of each test under ``limits`` (an explicit ``seconds`` wins; then the reference rule)."""
        if len(self.seconds) == len(self.tests):
            return list(self.seconds)
        if len(self.reference_seconds) == len(self.tests) and limits.reference_factor is not None:
            return list(map(limits.test_seconds, self.reference_seconds))
        return [limits.cpu_seconds] * len(self.tests)

    def inputs(self, limits: Limits) -> SuiteInputs:
        """What crosses to a worker (or a cluster node) to run under ``limits``: the suite without its
        expected values, with each test's CPU limit (:meth:`test_seconds`) resolved here."""
        keys, tests = _inputs_of(self.tests)
        seconds = tuple(self.test_seconds(limits))
        return SuiteInputs(self.kind, self.entry_point, self.setup, self.prelude, tests, seconds, keys=keys)

    def value_inputs(self, limits: Limits) -> SuiteInputs:
        """:meth:`inputs` for computing values with a trusted program: every value comes back whole."""
        return replace(self.inputs(limits), whole_values=True)


@dataclass(frozen=True)
class SuiteInputs:
    """A suite without its expected values: what a program runs on. Workers get this, and so do cluster
    nodes: expected values and outputs stay with the caller, who judges what the programs did. Each
    test's CPU limit is resolved by the caller (:meth:`Suite.inputs`), so a node builds the same jobs,
    test by test, as this machine's pool."""

    kind: ProblemKind
    """How programs are run (see :attr:`Suite.kind`)."""
    entry_point: str | None
    """The function the tests call."""
    setup: str
    """Code run after the program and before the tests."""
    prelude: str
    """Code run in the program's namespace before the program."""
    tests: tuple[str, ...]
    """Each test's input: an expression, its arguments as a JSON array, assert code or stdin (:attr:`keys`
    says which)."""
    seconds: tuple[float, ...] = ()
    """Each test's CPU limit (:meth:`Suite.test_seconds` under the run's limits). Empty: every test gets
    the job's ``cpu_seconds``."""
    whole_values: bool = False
    """Every value a test returns comes back whole (a trusted program's: expected values are computed so);
    else a long string comes back as its digest, which is all judging it needs."""
    keys: str | tuple[str, ...] = wire.EXPR
    """What each test's input is, as the worker protocol names it (:data:`~refinelab.sandbox._worker.protocol.EXPR`,
    ``ARGS``, ``CODE`` or ``STDIN``): one for every test, or one per test."""

    def test_seconds(self, limits: Limits) -> list[float]:
        """Each test's CPU limit (``limits``' own where none was resolved)."""
        if len(self.seconds) == len(self.tests):
            return list(self.seconds)
        return [limits.cpu_seconds] * len(self.tests)

    def for_worker(self, limits: Limits) -> dict[str, object]:
        """The suite as the worker protocol spells it, its tests in columns
        (:data:`~refinelab.sandbox._worker.protocol.INPUTS`): JSON writes lists of strings and numbers at C
        speed, where a dict per test cost the driver about 2 us a test (a HumanEval+ check runs 117,000); a test
        whose limit is not ``limits.cpu_seconds`` has its own in
        :data:`~refinelab.sandbox._worker.protocol.TEST_LIMITS`."""
        usual = limits.cpu_seconds
        own = [None if seconds == usual else seconds for seconds in self.test_seconds(limits)]
        keys = self.keys if isinstance(self.keys, str) else list(self.keys)
        tests = {wire.INPUT_KEYS: keys, wire.INPUTS: list(self.tests), wire.TEST_LIMITS: own}
        suite: dict[str, object] = {
            wire.ENTRY_POINT: self.entry_point,
            wire.SETUP: self.setup,
            wire.PRELUDE: self.prelude,
            wire.TESTS: tests,
        }
        if self.whole_values:
            suite[wire.WHOLE_VALUES] = True
        return suite

    def wire_json(self, limits: Limits) -> str:
        """:meth:`for_worker` as JSON text, written once per ``limits`` (the pool sends a stage's suite in
        every job of its programs: HumanEval+'s 1,640 programs make about 1,700 jobs)."""
        written = self._written
        text = written.get(limits)
        if text is None:
            text = written[limits] = json.dumps(self.for_worker(limits))
        return text

    @cached_property
    def _written(self) -> dict[Limits, str]:
        return {}

    def __getstate__(self) -> dict[str, object]:
        """What a cluster node gets: the fields, without the text written for this machine's workers."""
        return {key: value for key, value in self.__dict__.items() if key != "_written"}

    def subset(self, indices: Sequence[int]) -> SuiteInputs:
        """The same suite with only the tests at ``indices`` (each keeping its limit), in that order."""
        seconds = tuple(self.seconds[i] for i in indices) if len(self.seconds) == len(self.tests) else ()
        keys = self.keys if isinstance(self.keys, str) else tuple(self.keys[i] for i in indices)
        return replace(self, tests=tuple(self.tests[i] for i in indices), seconds=seconds, keys=keys)


RIGHT_TEXTS = 4
"""Most digests of right values rows a suite keeps (:attr:`Suite.right_texts`): a few ways of writing right values
(a float one way or another) and no more."""


class _JudgedAlone:
    """Equal to nothing: where :attr:`Suite.plain_expected` has it, the value is always judged alone."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return False

    def __ne__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "<judged alone>"


JUDGED_ALONE = _JudgedAlone()
"""A packed expected value's place among a suite's plain expected values (:attr:`Suite.plain_expected`)."""

_SCALARS = frozenset({str, int, float, bool, type(None)})


def _without_dict(value: object) -> bool:
    """A value that is no dict and holds none (lists and tuples of scalars checked at C speed); only builtins."""
    kind = type(value)
    if kind is list or kind is tuple:
        items = cast("Sequence[object]", value)
        return set(map(type, items)) <= _SCALARS or all(map(_without_dict, items))
    return kind in _SCALARS or kind in (set, frozenset, bytes, complex)


def _picker(indices: Sequence[int], count: int) -> Callable[[Sequence[_T]], tuple[_T, ...]]:
    """What picks the items at ``indices`` out of a sequence of ``count``: a slice where they are a run."""
    if isinstance(indices, range) and indices.step == 1 and 0 <= indices.start <= indices.stop <= count:
        run = slice(indices.start, indices.stop)
        return lambda values: tuple(values[run])
    return lambda values: tuple(map(values.__getitem__, indices))


Item = tuple[str, Suite]
"""A program and the suite to run it against."""
InputItem = tuple[str, SuiteInputs]
"""A program and the inputs of the suite it runs against (what a worker or a cluster node gets)."""


def _inputs_of(tests: Sequence[Test]) -> tuple[str | tuple[str, ...], tuple[str, ...]]:
    """What the worker gets of each test (its input, never its expected value or output), and what that input
    is (:attr:`SuiteInputs.keys`): one key for all where the tests share one, their inputs read at C speed."""
    kinds = set(map(type, tests))
    if kinds == {CallTest}:
        calls = cast("Sequence[CallTest]", tests)
        arguments = tuple(map(_ARGUMENTS, calls))
        if None not in arguments:
            return wire.ARGS, cast("tuple[str, ...]", arguments)
        if arguments.count(None) == len(arguments):
            return wire.EXPR, tuple(map(_EXPRESSION, calls))
    elif kinds == {AssertTest}:
        return wire.CODE, tuple(map(_CODE, cast("Sequence[AssertTest]", tests)))
    elif kinds == {StdioTest}:
        return wire.STDIN, tuple(map(_STDIN, cast("Sequence[StdioTest]", tests)))
    pairs = list(map(_input_of, tests))
    return tuple(key for key, _ in pairs), tuple(text for _, text in pairs)


def _input_of(test: Test) -> tuple[str, str]:
    """A test's input and what it is (see :func:`_inputs_of`)."""
    if isinstance(test, CallTest):
        return (wire.EXPR, test.expr) if test.args is None else (wire.ARGS, test.args)
    if isinstance(test, AssertTest):
        return wire.CODE, test.code
    return wire.STDIN, test.stdin


_ARGUMENTS = attrgetter("args")
_EXPRESSION = attrgetter("expr")
_CODE = attrgetter("code")
_STDIN = attrgetter("stdin")
