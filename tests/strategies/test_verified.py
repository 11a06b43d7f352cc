"""``codet`` and ``verified`` with scripted models, the real sandbox and a real local HTTP server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from functools import partial

from refinelab.models import FunctionModel, GenerateConfig, Message, Model
from refinelab.models._openai import OpenAIBackend
from refinelab.problems import CallTest, Problem
from refinelab.sandbox import Item, Limits, RunResult, WorkerPool
from refinelab.strategies import Budget, Env, StrategySpec, Trajectory, codet, sampling, verified
from refinelab.testing import ScriptedModel, serve

SQUARE = Problem(
    id="sq",
    prompt='def sq(x: int) -> int:\n    """Square x."""\n',
    kind="function",
    visible_tests=(CallTest("sq(7)", 49), CallTest("sq(3)", 9)),
    hidden_tests=(CallTest("sq(4)", 16),),
    entry_point="sq",
)


def program(body: str) -> str:
    return f"```python\ndef sq(x):\n    {body}\n```"


RIGHT = program("return x * x")
DOUBLE = program("return x + x")
ONLY_SEVEN = program("return 49 if x == 7 else 0")  # passes sq(7), fails sq(3)
ONLY_THREE = program("return 9 if x == 3 else 0")  # passes sq(3), breaks sq(7)
NOTHING = program("return -1")
TESTS = "Here are tests:\n```python\nassert sq(5) == 25\nassert sq(0) == 0\nassert sq(1) == 1\n```"


def writes_tests(messages: Sequence[Message]) -> bool:
    return "You write unit tests" in messages[0].content


def is_critic(messages: Sequence[Message]) -> bool:
    return "senior code reviewer" in messages[0].content


class SpyPool(WorkerPool):
    """The real sandbox, recording every suite it runs."""

    suites: list[str]

    async def run_items(
        self, items: Sequence[Item], *, limits: Limits | None = None, isolate: bool = False
    ) -> list[RunResult]:
        self.suites = [*getattr(self, "suites", []), *(repr(suite.tests) for _, suite in items)]
        return await super().run_items(items, limits=limits, isolate=isolate)


def run(
    model: Model, strategy: Callable[[Env], Awaitable[Trajectory]], budget: Budget | None = None
) -> tuple[Trajectory, list[str], Env]:
    async def main() -> tuple[Trajectory, list[str], Env]:
        async with SpyPool() as pool:
            env = Env(model, pool, budget=budget)
            trajectory = await strategy(env)
            return trajectory, getattr(pool, "suites", []), env

    return asyncio.run(main())


def test_codet_chooses_from_the_largest_agreeing_group_and_records_everything() -> None:
    model = ScriptedModel([DOUBLE, RIGHT, RIGHT], rules=[(writes_tests, TESTS)])
    trajectory, _, _ = run(model, lambda env: codet(SQUARE, env, n=3, m=1))
    assert [a.origin for a in trajectory.attempts] == ["sample"] * 3
    assert trajectory.final == 1 and trajectory.stop_reason == "agreement"
    (generation,) = trajectory.generations
    assert len(generation.tests) == 3 and generation.raw == TESTS
    kinds = [d.kind for d in trajectory.decisions]
    assert kinds[0] == "tests" and kinds[-1] == "choose" and "group" in kinds
    assert trajectory.decisions[0].reason == "judged by 5 tests: 2 visible, 3 generated"
    best = trajectory.decisions[1]
    assert best.members == (1, 2) and best.known_passed == 5  # both squares pass all 2 + 3 tests
    assert trajectory.decisions[-1].attempt == 1 and trajectory.decisions[-1].members == (1, 2)
    assert trajectory.usage.total_tokens == sum(a.usage.total_tokens for a in trajectory.attempts) + (
        generation.usage.total_tokens
    )


def test_hide_visible_never_shows_nor_runs_the_visible_tests() -> None:
    for hide in (False, True):
        model = ScriptedModel([RIGHT, RIGHT], rules=[(writes_tests, TESTS)])
        trajectory, suites, _ = run(model, lambda env, h=hide: codet(SQUARE, env, n=2, m=1, hide_visible=h))  # type: ignore[misc]
        requests = json.dumps([[m.content for m in r] for r in model.requests])
        ran_visible = any("sq(7)" in suite for suite in suites)
        assert ran_visible is not hide  # shown to the sandbox exactly when not hidden
        assert "sq(7)" not in requests and "49" not in requests  # never in a prompt (it is not in the statement)
        assert all((a.visible is None) is hide for a in trajectory.attempts)
        assert trajectory.final == 0 and trajectory.params["hide_visible"] is hide


def test_verified_hide_visible_judges_by_generated_tests_alone() -> None:
    model = ScriptedModel([ONLY_SEVEN, RIGHT], rules=[(writes_tests, TESTS)])
    trajectory, suites, _ = run(model, lambda env: verified(SQUARE, env, k=1, m=1, hide_visible=True))
    assert not any("sq(7)" in suite or "sq(3)" in suite for suite in suites)
    assert [a.origin for a in trajectory.attempts] == ["sample", "refine"]  # refined on sq(5), sq(1) failing
    assert "sq(5)" in (trajectory.attempts[1].feedback or "")
    assert trajectory.final == 1 and trajectory.stop_reason == "verified"


def test_the_regression_guard_discards_a_refinement_that_breaks_a_passing_test() -> None:
    model = ScriptedModel([ONLY_SEVEN, ONLY_THREE, NOTHING, RIGHT], rules=[(writes_tests, TESTS)])
    trajectory, _, _ = run(model, lambda env: verified(SQUARE, env, k=1, m=1, max_rounds=3))
    assert [a.origin for a in trajectory.attempts] == ["sample", "refine", "refine", "refine"]
    guard = [(d.kind, d.attempt, d.parent) for d in trajectory.decisions if d.kind in ("keep", "discard")]
    assert guard == [("discard", 1, 0), ("discard", 2, 0), ("keep", 3, 0)]
    discards = [d.reason for d in trajectory.decisions if d.kind == "discard"]
    assert "fails visible test(s) [0] its parent passed" in discards[0]  # same count, but sq(7) broken
    assert discards[1].startswith("regression: passes 0 of 5 known tests, its parent passed")
    assert trajectory.final == 3 and trajectory.stop_reason == "verified"
    # compressed memory: every refinement starts from the parent alone with its last feedback
    refinements = [r for r in model.requests if not writes_tests(r)][1:]
    assert all(len(r) == 3 for r in refinements)
    assert all("return 9 if x == 3" not in m.content for r in refinements for m in r)
    assert "expected: 9\n  observed: 0" in refinements[0][-1].content


def test_verified_stops_at_the_first_round_when_a_sample_passes_and_agrees() -> None:
    model = ScriptedModel([DOUBLE, RIGHT, RIGHT], rules=[(writes_tests, TESTS)])
    trajectory, _, _ = run(model, lambda env: verified(SQUARE, env, k=3, m=1))
    assert len(trajectory.attempts) == 3 and trajectory.final == 1 and trajectory.stop_reason == "verified"
    assert not [d for d in trajectory.decisions if d.kind == "refine"]


def test_the_critic_is_asked_only_when_the_tests_cannot_separate_candidates() -> None:
    five = program("return 25 if x == 5 else (49 if x == 7 else 9)")  # passes sq(5) only of the generated
    zero = program("return 0 if x == 0 else (49 if x == 7 else 9)")  # passes sq(0) only
    verdicts = [json.dumps({"critique": "wrong", "passed": False}), json.dumps({"critique": "", "passed": True})]
    model = ScriptedModel([five, zero, *verdicts], rules=[(writes_tests, TESTS)])
    trajectory, _, _ = run(model, lambda env: verified(SQUARE, env, k=2, m=1, max_rounds=0))
    assert [r for r in model.requests if is_critic(r)]
    critic = next(d for d in trajectory.decisions if d.kind == "critic")
    assert critic.members == (0, 1) and critic.attempt == 1 and trajectory.final == 1
    assert trajectory.attempts[0].critic is not None and trajectory.attempts[1].critic is not None
    separated = ScriptedModel([five, RIGHT], rules=[(writes_tests, TESTS)])
    trajectory, _, _ = run(separated, lambda env: verified(SQUARE, env, k=2, m=1, max_rounds=0))
    assert not [r for r in separated.requests if is_critic(r)] and trajectory.final == 1


def test_budgets_count_test_writing_calls() -> None:
    model = ScriptedModel([ONLY_SEVEN] * 10, rules=[(writes_tests, TESTS)])
    trajectory, _, env = run(model, lambda env: verified(SQUARE, env, k=2, m=1), Budget(max_calls=4))
    assert env.spent.calls == 4 and model.accounting.calls == 3  # the two samples came in one request
    assert trajectory.stop_reason == "budget" and trajectory.budget_note == "max_calls=4"
    assert len(trajectory.attempts) == 3 and len(trajectory.generations) == 1
    assert env.spent.usage == trajectory.usage  # the test-writing call's tokens are in both


def test_verified_parses_as_a_spec_with_its_knobs() -> None:
    spec = StrategySpec.parse("verified(k=3, m=2, hide_visible=true, temperature_schedule=(0.2, 0.8))")
    assert spec.bind().arguments["temperature_schedule"] == (0.2, 0.8) and spec.bind().arguments["hide_visible"] is True


def test_a_real_server_sees_exactly_the_requests_the_trajectory_records() -> None:
    def reply(body: dict[str, object]) -> str:
        messages = body["messages"]
        assert isinstance(messages, list)
        if "You write unit tests" in str(messages[0]["content"]):
            return TESTS
        return ONLY_SEVEN if len(messages) == 2 else RIGHT

    with serve(reply) as server:
        backend = OpenAIBackend("vllm:actor", server.base_url, "EMPTY")

        async def main() -> Trajectory:
            async with WorkerPool() as pool, Model(backend) as model:
                return await verified(SQUARE, Env(model, pool), k=2, m=2)

        trajectory = asyncio.run(main())
        answered = server.answered()
    recorded = sorted([a.response for a in trajectory.attempts] + [g.raw for g in trajectory.generations])
    assert len(recorded) == 2 + 2 + 2  # two samples, two test writers, two refinements
    assert sorted(body.get("n", 1) for body in answered) == [1, 1, 2, 2]  # samples, test writers: a request each
    assert sorted(reply(body) for body in answered for _ in range(body.get("n", 1))) == recorded
    contents = [str(m["content"]) for body in answered for m in body["messages"]]
    for attempt in trajectory.attempts[2:]:  # each refinement's recorded feedback is what the server was sent
        assert attempt.feedback and any(attempt.feedback in content for content in contents)
    assert trajectory.final == 2 and trajectory.stop_reason == "verified"


def test_sampling_can_choose_by_dual_agreement_instead_of_the_visible_tests() -> None:
    weak = Problem(
        id="sq",
        prompt=SQUARE.prompt,
        kind="function",
        visible_tests=(CallTest("sq(2)", 4),),  # x + x passes it too
        hidden_tests=SQUARE.hidden_tests,
        entry_point="sq",
    )
    by_visible = ScriptedModel([DOUBLE, RIGHT, RIGHT], rules=[(writes_tests, TESTS)])
    trajectory, _, _ = run(by_visible, lambda env: sampling(weak, env, n=3))
    assert trajectory.final == 0 and not trajectory.generations and trajectory.params["select"] == "visible"
    by_agreement = ScriptedModel([DOUBLE, RIGHT, RIGHT], rules=[(writes_tests, TESTS)])
    trajectory, _, _ = run(by_agreement, lambda env: sampling(weak, env, n=3, select="dual-agreement", m=1))
    assert trajectory.final == 1 and len(trajectory.generations) == 1
    assert trajectory.params["select"] == "dual-agreement" and trajectory.decisions[-1].kind == "choose"


def test_codet_under_a_call_budget_keeps_what_it_got_and_says_which_budget() -> None:
    model = ScriptedModel([RIGHT, DOUBLE, RIGHT], rules=[(writes_tests, TESTS)])
    trajectory, _, env = run(model, lambda env: codet(SQUARE, env, n=3, m=1), Budget(max_calls=2))
    assert len(model.requests) == 1 and env.spent.calls == 2  # one request, shrunk from n=3 to the 2 calls left
    assert len(trajectory.attempts) == 2 and trajectory.generations == ()  # programs reserved first
    assert trajectory.stop_reason == "budget" and trajectory.budget_note == "max_calls=2"
    assert trajectory.final == 0  # still chosen, by the visible tests alone


def test_verified_follows_the_temperature_schedule_from_the_draft_to_the_last_round() -> None:
    seen: list[tuple[str, float]] = []

    def answer(messages: Sequence[Message], config: GenerateConfig) -> str:
        kind = "tests" if writes_tests(messages) else "refine" if "tests failed" in messages[-1].content else "draft"
        assert config.temperature is not None  # the schedule sets one every round
        seen.append((kind, config.temperature))
        return TESTS if kind == "tests" else ONLY_SEVEN

    schedule = (0.1, 0.9)
    config = GenerateConfig(temperature=0.6)
    strategy = partial(verified, SQUARE, k=2, m=1, max_rounds=2, refine_top=1, temperature_schedule=schedule)
    trajectory, _, _ = run(FunctionModel(answer), lambda env: strategy(env, config=config))
    assert sorted(t for kind, t in seen if kind == "draft") == [0.1, 0.1]
    assert [t for kind, t in seen if kind == "refine"] == [0.5, 0.9]
    assert [t for kind, t in seen if kind == "tests"] == [0.6]  # test writing is not a refinement round
    assert trajectory.stop_reason == "max_iterations"
