"""Strategies driven by the shipped doubles only: ScriptedModel and FakeSandbox (no bubblewrap, no workers)."""

from __future__ import annotations

import asyncio

import pytest

from refinelab.models import GenerateConfig
from refinelab.problems import AssertTest, CallTest, Problem, StdioTest
from refinelab.sandbox import Suite
from refinelab.strategies import DEFAULT_PROMPTS, Env, exec_refine
from refinelab.testing import FakeSandbox, ScriptedModel
from refinelab.verification import GeneratedTests, parse_tests

SQUARE = Problem(
    id="sq",
    prompt='def sq(x: int) -> int:\n    """Square x."""\n',
    kind="function",
    visible_tests=(CallTest("sq(2)", 4), CallTest("sq(3)", 9)),
    hidden_tests=(CallTest("sq(4)", 16),),
    entry_point="sq",
)
WRONG = "```python\ndef sq(x):\n    return x + x\n```"
CRASH = "```python\ndef sq(x):\n    return x / 0\n```"
RIGHT = "```python\ndef sq(x: int) -> int:\n    return x * x\n```"


def test_exec_refine_runs_on_the_fake_sandbox_and_feeds_its_verdicts_back() -> None:
    model, sandbox = ScriptedModel([WRONG, CRASH, RIGHT]), FakeSandbox()
    trajectory = asyncio.run(exec_refine(SQUARE, Env(model, sandbox)))
    assert [a.visible.passed for a in trajectory.attempts if a.visible] == [False, False, True]
    assert trajectory.stop_reason == "visible_tests_passed" and trajectory.final == 2
    assert "sq(3): expected 9, got 6" in (trajectory.attempts[1].feedback or "")
    assert "ZeroDivisionError" in (trajectory.attempts[2].feedback or "")
    assert all(o.verdict == "error" for o in trajectory.attempts[1].visible.outcomes)  # type: ignore[union-attr]
    assert [suite.tests for _, suite in sandbox.runs] == [SQUARE.visible_tests] * 3  # never the hidden tests
    assert {a.visible.isolation for a in trajectory.attempts if a.visible} == {"fake"}


def test_the_fake_sandbox_judges_each_kind_of_test() -> None:
    sandbox = FakeSandbox()
    function = Suite.of(
        [CallTest("f(2)", 4), CallTest("f(3)", 10), AssertTest("assert f(1) == 1"), AssertTest("assert f(1) == 2")],
        entry_point="f",
    )
    result = asyncio.run(sandbox.run("def f(x):\n    print('hi')\n    return x * x\n", function))
    assert [o.verdict for o in result.outcomes] == ["pass", "fail", "pass", "error"]
    assert result.outcomes[1].actual == "9" and result.output == "hi\n" * 4
    stdio = Suite.of([StdioTest("2 3\n", "5\n"), StdioTest("2 2\n", "5\n")], kind="stdio")
    program = "a, b = map(int, input().split())\nprint(a + b)\n"
    assert [o.verdict for o in asyncio.run(sandbox.run(program, stdio)).outcomes] == ["pass", "fail"]
    broken = asyncio.run(sandbox.run("def f(:\n", function))
    assert {o.verdict for o in broken.outcomes} == {"error"} and broken.outcomes[0].error_type == "SyntaxError"


def test_the_fake_sandbox_keeps_item_order_and_evaluates_values() -> None:
    sandbox = FakeSandbox()
    suite = Suite.of([CallTest("f()", 1)], entry_point="f")
    items = [(f"print({i})\ndef f():\n    return {n}\n", suite) for i, n in enumerate((1, 2, 1))]
    results = asyncio.run(sandbox.run_items(items))
    assert [(r.passed, r.output) for r in results] == [(True, "0\n"), (False, "1\n"), (True, "2\n")]
    values = asyncio.run(sandbox.values("def g(x):\n    return (x, [x])\n", ["g(1)", "g(1) / 0"], entry_point="g"))
    assert values[0] == (1, [1])
    assert getattr(values[1], "verdict", None) == "error"
    encoded = asyncio.run(
        sandbox.values("def g(x):\n    return (x, [x])\n", ["g(1)", "g(1) / 0"], entry_point="g", encoded=True)
    )
    assert encoded[0] == {"T": [1, [1]]} and getattr(encoded[1], "verdict", None) == "error"


BLIND = Problem(
    id="sq-blind",
    prompt='def sq(x: int) -> int:\n    """Square x."""\n',
    kind="function",
    visible_tests=(),
    hidden_tests=(CallTest("sq(4)", 16),),
    entry_point="sq",
)
WRITTEN_TESTS = "```python\nassert sq(2) == 4\nassert sq(3) == 9\n```"


def _texts(model: ScriptedModel) -> list[str]:
    return [m.content for request in model.requests for m in request]


def test_exec_refine_without_visible_tests_writes_tests_and_refines_against_them() -> None:
    model, sandbox = ScriptedModel([WRITTEN_TESTS, WRONG, RIGHT]), FakeSandbox()
    trajectory = asyncio.run(exec_refine(BLIND, Env(model, sandbox), max_iters=3))
    assert "unit tests" in model.requests[0][0].content  # the test-writing call of refinelab.verification
    assert model.requests[1] == DEFAULT_PROMPTS.draft(BLIND)  # the draft's request is single pass's
    assert [len(g.tests) for g in trajectory.generations] == [2]
    assert trajectory.decisions[0].kind == "tests" and "0 visible, 2 generated" in trajectory.decisions[0].reason
    assert [a.visible.passed for a in trajectory.attempts if a.visible] == [False, True]
    assert "sq(3): expected 9, got 6" in (trajectory.attempts[1].feedback or "")
    assert (trajectory.attempts[1].feedback or "").startswith("1 of 2 generated tests failed")  # named as what they are
    assert trajectory.stop_reason == "visible_tests_passed" and trajectory.final == 1
    assert not [text for text in _texts(model) if "no visible tests" in text or "visible tests failed" in text]


def test_exec_refine_without_visible_tests_can_stop_after_the_draft() -> None:
    model = ScriptedModel([WRONG])
    trajectory = asyncio.run(exec_refine(BLIND, Env(model, FakeSandbox()), when_no_tests="stop"))
    assert len(model.requests) == 1 and len(trajectory.attempts) == 1
    assert trajectory.stop_reason == "no_tests" and trajectory.final == 0 and not trajectory.generations


def test_exec_refine_stops_when_the_written_tests_hold_none_it_can_run() -> None:
    model = ScriptedModel(["I cannot write tests for this.", WRONG])
    trajectory = asyncio.run(exec_refine(BLIND, Env(model, FakeSandbox())))
    assert len(model.requests) == 2 and trajectory.stop_reason == "no_tests"
    assert [len(g.tests) for g in trajectory.generations] == [0]  # the call is recorded: its tokens count
    assert not [text for text in _texts(model) if "no visible tests" in text]


def test_identical_test_writing_replies_are_read_once_and_recorded_each(monkeypatch: pytest.MonkeyPatch) -> None:
    from refinelab.strategies import _tests

    reads: list[str] = []
    parse = parse_tests

    def counted(text: str, problem: Problem) -> GeneratedTests:
        reads.append(text)
        return parse(text, problem)

    monkeypatch.setattr(_tests, "parse_tests", counted)
    other = "```python\nassert sq(5) == 25\n```"
    model = ScriptedModel([WRITTEN_TESTS, other, WRITTEN_TESTS, WRITTEN_TESTS])
    plan = _tests.TestPlan(4, 5, None, GenerateConfig(temperature=0.8))
    generations, refused = asyncio.run(_tests.write_tests(Env(model, FakeSandbox()), BLIND, plan))
    assert refused is None and sorted(reads) == sorted({WRITTEN_TESTS, other})
    assert [len(g.tests) for g in generations] == [2, 1, 2, 2] and [g.raw for g in generations][1] == other
