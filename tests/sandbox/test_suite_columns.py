"""A suite crosses to the worker with its tests in columns (each test's input, what that input is, and its own CPU
limit): the worker makes them the list of tests it always read, and nothing but the inputs crosses."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from refinelab.problems import AssertTest, CallTest, StdioTest, Test
from refinelab.sandbox import Limits, RunResult, Suite, WorkerPool
from refinelab.sandbox._worker import protocol as wire
from tests.conftest import with_pool

LIMITS = Limits(cpu_seconds=2.0)


def _listed(suite: Suite, limits: Limits = LIMITS) -> object:
    """The tests a worker reads from the suite's JSON."""
    written = json.loads(suite.inputs(limits).wire_json(limits))
    return wire.tests_listed(written[wire.TESTS])


def test_tests_sharing_one_kind_of_input_cross_as_one_key_and_read_as_one_test_each() -> None:
    expressions = Suite.of([CallTest("f(1)", 1), CallTest("f(2)", 4)], entry_point="f")
    arguments = Suite.of([CallTest("f(1)", 1, args="[1]"), CallTest("f(2)", 4, args="[2]")], entry_point="f")
    asserts = Suite.of([AssertTest("assert f(1) == 1")], entry_point="f")
    stdio = Suite.of([StdioTest("1\n", "1\n"), StdioTest("2\n", "4\n")], kind="stdio")
    for suite, key in ((expressions, wire.EXPR), (arguments, wire.ARGS), (asserts, wire.CODE), (stdio, wire.STDIN)):
        assert suite.inputs(LIMITS).keys == key
        assert json.loads(suite.inputs(LIMITS).wire_json(LIMITS))[wire.TESTS][wire.INPUT_KEYS] == key
    assert _listed(expressions) == [{"k": "call", "expr": "f(1)"}, {"k": "call", "expr": "f(2)"}]
    assert _listed(arguments) == [{"k": "call", "args": "[1]"}, {"k": "call", "args": "[2]"}]
    assert _listed(asserts) == [{"k": "assert", "code": "assert f(1) == 1"}]
    assert _listed(stdio) == [{"k": "stdio", "stdin": "1\n"}, {"k": "stdio", "stdin": "2\n"}]


def test_mixed_tests_name_each_input_and_a_subset_keeps_each_tests_own() -> None:
    tests: list[Test] = [CallTest("f(1)", 1), CallTest("f(2)", 4, args="[2]"), AssertTest("assert f(3) == 9")]
    suite = replace(Suite.of(tests, entry_point="f"), seconds=(2.0, 0.5, 2.0))
    inputs = suite.inputs(LIMITS)
    assert inputs.keys == (wire.EXPR, wire.ARGS, wire.CODE)
    assert _listed(suite) == [
        {"k": "call", "expr": "f(1)"},
        {"k": "call", "args": "[2]", "l": 0.5},  # only a limit that is not the job's crosses
        {"k": "assert", "code": "assert f(3) == 9"},
    ]
    part = inputs.subset([2, 1])
    assert part.keys == (wire.CODE, wire.ARGS) and part.tests == ("assert f(3) == 9", "[2]")
    written = json.loads(part.wire_json(LIMITS))[wire.TESTS]
    assert wire.tests_listed(written) == [
        {"k": "assert", "code": "assert f(3) == 9"},
        {"k": "call", "args": "[2]", "l": 0.5},
    ]


def test_no_expected_value_crosses() -> None:
    suite = Suite.of([CallTest("f(1)", "SECRET-EXPECTED"), StdioTest("x", "SECRET-OUTPUT")], entry_point="f")
    assert "SECRET" not in suite.inputs(LIMITS).wire_json(LIMITS)


@pytest.mark.parametrize(
    "columns",
    [
        {wire.INPUT_KEYS: "expr", wire.INPUTS: ["f(1)"], wire.TEST_LIMITS: []},
        {wire.INPUT_KEYS: ["expr"], wire.INPUTS: ["f(1)", "f(2)"], wire.TEST_LIMITS: [None, None]},
        {wire.INPUT_KEYS: "eval", wire.INPUTS: ["f(1)"], wire.TEST_LIMITS: [None]},
        {wire.INPUT_KEYS: [["expr"]], wire.INPUTS: ["f(1)"], wire.TEST_LIMITS: [None]},
        {wire.INPUT_KEYS: "expr", wire.INPUTS: "f(1)", wire.TEST_LIMITS: [None]},
        {wire.INPUT_KEYS: "expr", wire.INPUTS: ["f(1)"]},
    ],
)
def test_columns_that_make_no_list_of_tests_are_refused(columns: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        wire.tests_listed(columns)


def test_a_list_of_tests_reads_as_it_is() -> None:
    tests = [{"k": "call", "expr": "f(1)"}]
    assert wire.tests_listed(tests) is tests


def test_a_worker_runs_mixed_tests_with_their_own_limits() -> None:
    program = "def f(n):\n    if n == 4:\n        while True:\n            pass\n    return n * n\n"
    tests: list[Test] = [
        CallTest("f(1)", 1),
        CallTest("f(2)", 4, args="[2]"),
        AssertTest("assert f(3) == 9"),
        CallTest("f(5)", 24),
        CallTest("f(4)", 16, args="[4]"),  # loops: its own limit of 0.3 s, not the job's 2 s
    ]
    suite = replace(Suite.of(tests, entry_point="f"), seconds=(2.0, 2.0, 2.0, 2.0, 0.3))

    async def go(pool: WorkerPool) -> RunResult:
        return await pool.run(program, suite)

    limits = Limits(cpu_seconds=2.0, stop_at_failure=False, timeout_reruns=0)
    outcomes = with_pool(go, limits=limits).outcomes
    assert [outcome.verdict for outcome in outcomes] == ["pass", "pass", "pass", "fail", "timeout"]
    assert outcomes[3].actual == "25" and outcomes[4].limit_seconds == 0.3
