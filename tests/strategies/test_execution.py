"""Execution-grounded strategies, driven by scripted models and the real sandbox."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from refinelab.models import Model, ScriptedModel
from refinelab.problems import CallTest, Problem, StdioTest, load_livecodebench
from refinelab.sandbox import WorkerPool
from refinelab.strategies import Budget, Env, StrategySpec, Trajectory, exec_refine, sampling, single_pass

SQUARE = Problem(
    id="sq",
    prompt='from typing import List\n\ndef sq(x: int) -> int:\n    """Square x."""\n',
    kind="function",
    visible_tests=(CallTest("sq(2)", 4), CallTest("sq(3)", 9)),
    hidden_tests=(CallTest("sq(4)", 16),),
    entry_point="sq",
)
WRONG = "```python\ndef sq(x):\n    return x + x\n```"
RIGHT = "```python\ndef sq(x: int) -> int:\n    return x * x\n```"

# LiveCodeBench abc357_a (Sanitize Hands): the 32B actor's correct first program stops at the first
# alien who cannot finish; the 7B critic's "fix" removes the break.
HANDS_CORRECT = """```python
n, m = map(int, input().split())
hands = list(map(int, input().split()))
count = 0
for h in hands:
    if m >= h:
        m -= h
        count += 1
    else:
        break
print(count)
```"""


def run(model: Model, strategy: Callable[[Env], Awaitable[Trajectory]], budget: Budget | None = None) -> Trajectory:
    async def main() -> Trajectory:
        async with WorkerPool() as pool:
            return await strategy(Env(model, pool, budget=budget))

    return asyncio.run(main())


def test_single_pass_records_one_attempt_with_its_visible_result() -> None:
    model = ScriptedModel([RIGHT])
    trajectory = run(model, lambda env: single_pass(SQUARE, env))
    (attempt,) = trajectory.attempts
    assert trajectory.stop_reason == "single_pass" and trajectory.final == 0
    assert attempt.origin == "draft" and attempt.visible is not None and attempt.visible.passed
    assert attempt.code is not None and attempt.code.startswith("from typing import List")  # prompt's imports kept
    assert "single ```python code block" in model.requests[0][1].content


@pytest.mark.parametrize("style", ["raw", "diff", "summary"])
def test_exec_refine_feeds_failures_back_until_the_visible_tests_pass(style: str) -> None:
    model = ScriptedModel([WRONG, WRONG, RIGHT])
    trajectory = run(model, lambda env: exec_refine(SQUARE, env, feedback_format=style))  # type: ignore[arg-type]
    assert [a.origin for a in trajectory.attempts] == ["draft", "refine", "refine"]
    assert trajectory.stop_reason == "visible_tests_passed" and trajectory.final == 2
    given = trajectory.attempts[1].feedback or ""
    expected_text = {
        "raw": "sq(2): expected 4, got 4",
        "diff": "expected: 9\n  observed: 6",
        "summary": "1 of 2 visible tests failed",
    }
    if style == "raw":
        assert "sq(3): expected 9, got 6" in given
    else:
        assert expected_text[style] in given
    assert given in model.requests[1][-1].content


def test_exec_refine_stops_at_the_iteration_cap() -> None:
    model = ScriptedModel([WRONG] * 3)
    trajectory = run(model, lambda env: exec_refine(SQUARE, env, max_iters=2))
    assert len(trajectory.attempts) == 3 and trajectory.stop_reason == "max_iterations"


def test_memory_policies_change_what_the_actor_sees() -> None:
    prompts = {}
    for memory in ("full", "last", "compressed"):
        model = ScriptedModel([WRONG, WRONG, WRONG, RIGHT])
        trajectory = run(model, lambda env, m=memory: exec_refine(SQUARE, env, memory=m))  # type: ignore[misc]
        prompts[memory] = [len(request) for request in model.requests]
        assert trajectory.attempts[-1].usage.prompt_tokens > 0
    assert prompts["last"] == [2, 3, 3, 3]
    assert prompts["full"] == [2, 3, 5, 7]  # the whole conversation grows
    assert prompts["compressed"] == [2, 3, 4, 4]  # one digest line per earlier round instead


def test_a_reply_without_code_is_recorded_and_asked_again() -> None:
    model = ScriptedModel(["I am not sure.", RIGHT])
    trajectory = run(model, lambda env: exec_refine(SQUARE, env))
    assert trajectory.attempts[0].code is None and trajectory.attempts[0].parse_error
    assert "No program could be read" in (trajectory.attempts[1].feedback or "")


def test_budget_is_checked_before_each_call() -> None:
    model = ScriptedModel([WRONG] * 5)
    trajectory = run(model, lambda env: exec_refine(SQUARE, env), Budget(max_calls=2))
    assert len(trajectory.attempts) == 2 and trajectory.stop_reason == "budget"
    assert trajectory.budget_note == "max_calls=2" and len(model.requests) == 2


def test_sampling_keeps_every_sample_and_selects_by_visible_tests() -> None:
    half = "```python\ndef sq(x):\n    return 4 if x == 2 else 0\n```"
    model = ScriptedModel([WRONG, half, RIGHT, RIGHT])
    trajectory = run(model, lambda env: sampling(SQUARE, env, n=4))
    assert [a.origin for a in trajectory.attempts] == ["sample"] * 4
    assert trajectory.final == 2 and trajectory.stop_reason == "sampled"
    zero = "```python\ndef sq(x):\n    return 0\n```"
    none_pass = run(ScriptedModel([zero, half, WRONG]), lambda env: sampling(SQUARE, env, n=3))
    assert none_pass.final == 1  # most visible tests passed; ties go to the earliest


def test_the_correct_sanitize_hands_program_is_returned_unchanged(shared_data: Path) -> None:
    problems = {p.id: p for p in load_livecodebench(shared_data / "benchmarks/livecodebench-v5-public-tests.jsonl.gz")}
    hands = problems["abc357_a"]
    assert hands.visible_tests[0] == StdioTest("5 10\n2 3 2 5 3\n", "3\n")
    model = ScriptedModel([HANDS_CORRECT])
    trajectory = run(model, lambda env: exec_refine(hands, env))
    assert len(trajectory.attempts) == 1 and trajectory.stop_reason == "visible_tests_passed"
    assert len(model.requests) == 1


def test_strategy_specs_round_trip() -> None:
    spec = StrategySpec.parse("exec-refine(max_iters=3, feedback_format=diff)")
    assert spec.params == {"max_iters": 3, "feedback_format": "diff"}
    assert StrategySpec.parse(str(spec)) == spec
