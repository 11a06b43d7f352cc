"""Execution-grounded strategies, driven by scripted models and the real sandbox."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from refinelab.errors import SandboxUnavailable, UserError
from refinelab.models import FunctionModel, GenerateConfig, Model, Price, PriceTable, ScriptedModel
from refinelab.problems import CallTest, Problem, StdioTest, load_livecodebench
from refinelab.sandbox import Limits, RunResult, Suite, WorkerPool
from refinelab.strategies import (
    Budget,
    Env,
    Prompts,
    StrategySpec,
    Trajectory,
    exec_refine,
    sampling,
    single_pass,
)
from refinelab.strategies._execution import with_prompt_imports
from refinelab.testing import FakeSandbox

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


def test_prompt_imports_go_after_the_programs_future_imports() -> None:
    code = '"""Module."""\nfrom __future__ import annotations\n\ndef square(x: int) -> int:\n    return x * x\n'
    program = with_prompt_imports(SQUARE, code)
    assert program.startswith('"""Module."""\nfrom __future__ import annotations\nfrom typing import List\n')
    compile(program, "program", "exec")  # before: "from __future__ imports must occur at the beginning"
    assert with_prompt_imports(SQUARE, "def square(x):\n    return x * x\n").startswith("from typing import List\n")


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
    prompts, tokens = {}, {}
    for memory in ("full", "last", "compressed"):
        model = ScriptedModel([WRONG, WRONG, WRONG, RIGHT])
        trajectory = run(model, lambda env, m=memory: exec_refine(SQUARE, env, memory=m))  # type: ignore[misc]
        prompts[memory] = [len(request) for request in model.requests]
        tokens[memory] = [a.usage.prompt_tokens for a in trajectory.attempts]
        # the double counts words, so the recorded prompt tokens are exactly the words it was sent
        assert tokens[memory] == [sum(len(m.content.split()) for m in r) for r in model.requests]
    assert prompts["last"] == [2, 3, 3, 3]
    assert prompts["full"] == [2, 3, 5, 7]  # the whole conversation grows
    assert prompts["compressed"] == [2, 3, 4, 4]  # one digest line per earlier round instead
    assert tokens["full"][:2] == tokens["last"][:2] == tokens["compressed"][:2]
    assert tokens["full"][3] > tokens["compressed"][3] > tokens["last"][3]


def test_the_compressed_digest_says_what_each_earlier_round_tried_and_how_it_failed() -> None:
    model = ScriptedModel([WRONG, "```python\ndef sq(x):\n    return x / 0\n```", WRONG, RIGHT])
    run(model, lambda env: exec_refine(SQUARE, env, memory="compressed"))
    digest = next(m.content for m in model.requests[3] if m.content.startswith("Earlier attempts"))
    assert digest.splitlines()[1:] == [  # the last attempt is shown whole, not in the digest
        "Attempt 0: def sq(x): -> 1 of 2 visible tests failed (1 fail); first failing: sq(3).",
        "Attempt 1: def sq(x): -> 2 of 2 visible tests failed (2 ZeroDivisionError); first failing: sq(2).",
    ]


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


def test_cost_budget_stops_before_the_call_that_would_go_over() -> None:
    model = ScriptedModel([WRONG] * 5)
    model.prices = PriceTable({"scripted:scripted": Price(1000.0, 1000.0)})  # $0.001 a token
    first = run(ScriptedModel([WRONG]), lambda env: single_pass(SQUARE, env)).attempts[0].usage.total_tokens
    budget = Budget(max_cost_usd=first * 0.001 * 1.5)  # the second call starts under it, the third would not
    trajectory = run(model, lambda env: exec_refine(SQUARE, env), budget)
    assert len(trajectory.attempts) == 2 and len(model.requests) == 2
    assert trajectory.stop_reason == "budget" and trajectory.budget_note == f"max_cost_usd={budget.max_cost_usd}"


def test_a_cost_budget_stops_calls_whose_price_is_unknown() -> None:
    model = ScriptedModel([WRONG] * 5)  # no price: cost unknown after the first call, so no second call
    trajectory = run(model, lambda env: exec_refine(SQUARE, env), Budget(max_cost_usd=100.0))
    assert len(model.requests) == 1 and trajectory.stop_reason == "budget"


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


def test_a_prompt_file_replaces_templates_and_is_recorded(tmp_path: Path) -> None:
    path = tmp_path / "prompts.toml"
    path.write_text('actor_system = "You write Python. Short programs only."\n', encoding="utf-8")
    spec = StrategySpec.parse(f"single-pass(prompts={path})")
    model = ScriptedModel([RIGHT])
    trajectory = run(model, lambda env: spec.run(SQUARE, env))
    assert model.requests[0][0].content == "You write Python. Short programs only."
    label = str(trajectory.params["prompts"])
    assert label.startswith(f"{path}#") and label.endswith(Prompts.load(path).digest)
    assert run(ScriptedModel([RIGHT]), lambda env: single_pass(SQUARE, env)).params["prompts"] == "default"


def test_a_bad_prompt_file_names_the_file_line_and_key(tmp_path: Path) -> None:
    path = tmp_path / "prompts.toml"
    path.write_text('critic_system = "Review{stdio}."\nactor_sytem = "typo"\n', encoding="utf-8")
    with pytest.raises(UserError, match=rf"{path}:2: field 'actor_sytem': unknown prompt"):
        Prompts.load(path)
    path.write_text("refine_turn = 3\n", encoding="utf-8")
    with pytest.raises(UserError, match=rf"{path}:1: field 'refine_turn': must be a string"):
        Prompts.load(path)


def test_strategy_specs_round_trip() -> None:
    spec = StrategySpec.parse("exec-refine(max_iters=3, feedback_format=diff)")
    assert spec.params == {"max_iters": 3, "feedback_format": "diff"}
    assert StrategySpec.parse(str(spec)) == spec
    assert StrategySpec.parse("sampling(ask_confidence=false, n=2)").params == {"ask_confidence": False, "n": 2}


def test_a_temperature_schedule_rises_linearly_across_refinement_rounds() -> None:
    seen: list[float | None] = []

    def answer(messages: object, config: GenerateConfig) -> str:
        seen.append(config.temperature)
        return WRONG

    schedule = (0.2, 0.8)
    trajectory = run(
        FunctionModel(answer), lambda env: exec_refine(SQUARE, env, max_iters=3, temperature_schedule=schedule)
    )
    assert seen == [0.2, 0.4, 0.6, 0.8]
    assert trajectory.params["temperature_schedule"] == [0.2, 0.8]


def test_a_temperature_schedule_is_written_as_a_strategy_argument() -> None:
    spec = StrategySpec.parse("exec-refine(max_iters=2, temperature_schedule=(0.2, 0.8), memory=last)")
    assert spec.bind().arguments["temperature_schedule"] == (0.2, 0.8) and spec.bind().arguments["memory"] == "last"
    with pytest.raises(UserError, match=r"temperature_schedule=0.5: must be \(a number, a number\)"):
        StrategySpec.parse("exec-refine(temperature_schedule=0.5)").bind()
    model = ScriptedModel([WRONG])
    with pytest.raises(UserError, match="at least 0"):
        run(model, lambda env: exec_refine(SQUARE, env, temperature_schedule=(-1.0, 0.5)))
    assert model.requests == []


def test_a_program_repeated_among_samples_runs_on_the_visible_tests_once() -> None:
    sandbox = FakeSandbox()
    trajectory = asyncio.run(sampling(SQUARE, Env(ScriptedModel([WRONG, RIGHT] * 3), sandbox), n=6))
    assert [a.visible is not None and a.visible.passed for a in trajectory.attempts] == [False, True] * 3
    assert sorted(code for code, _ in sandbox.runs) == sorted({a.code for a in trajectory.attempts if a.code})


class _FailsOnce(FakeSandbox):
    """A sandbox whose first run fails as a lost worker pool does."""

    async def run(self, code: str, suite: Suite, *, limits: Limits | None = None) -> RunResult:
        if not self.runs:
            self.runs.append((code, suite))
            raise SandboxUnavailable("the pool went away")
        return await super().run(code, suite, limits=limits)


def test_a_visible_run_that_failed_in_the_sandbox_is_run_again_when_asked_again() -> None:
    sandbox = _FailsOnce()
    env = Env(ScriptedModel(), sandbox)
    code = "def sq(x):\n    return x * x\n"

    async def twice() -> RunResult:
        with pytest.raises(SandboxUnavailable):
            await env.execute(code, SQUARE)
        return await env.execute(code, SQUARE)

    assert asyncio.run(twice()).passed and len(sandbox.runs) == 2
