"""Critic-driven strategies with scripted actors and critics, the real sandbox, and a real HTTP server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from refinelab.models import GenerateConfig, Message, Model
from refinelab.models._openai import OpenAIBackend
from refinelab.problems import Problem, load_livecodebench
from refinelab.sandbox import WorkerPool
from refinelab.strategies import Attempt, Env, Strategy, Trajectory, self_redraft, self_refine
from refinelab.testing import FunctionModel, ScriptedModel, serve
from tests.strategies.test_execution import HANDS_CORRECT, RIGHT, SQUARE, WRONG

HANDS_BROKEN = HANDS_CORRECT.replace("    else:\n        break\n", "")


def is_critic(messages: Sequence[Message]) -> bool:
    return "senior code reviewer" in messages[0].content


def _passed(attempt: Attempt | None) -> bool:
    """The attempt passed its visible tests."""
    return attempt is not None and attempt.visible is not None and attempt.visible.passed


def run(problem: Problem, actor: Model, critic: Model, **params: Any) -> Trajectory:
    strategy: Strategy[...] = params.pop("strategy", self_refine)

    async def main() -> Trajectory:
        async with WorkerPool() as pool:
            return await strategy(problem, Env(actor, pool, critic=critic), **params)

    return asyncio.run(main())


def test_self_refine_reproduces_the_sanitize_hands_regression(shared_data: Path) -> None:
    problems = {p.id: p for p in load_livecodebench(shared_data / "benchmarks/livecodebench-v5-public-tests.jsonl.gz")}
    actor = ScriptedModel([HANDS_CORRECT, HANDS_BROKEN])
    wrong_critique = json.dumps(
        {"critique": "All aliens must be considered; the early break is a bug.", "passed": False}
    )
    critic = ScriptedModel([wrong_critique, json.dumps({"critique": "", "passed": True})])
    trajectory = run(problems["abc357_a"], actor, critic)
    first, last = trajectory.attempts
    assert first.visible is not None and first.visible.passed  # the first program was right
    assert last.visible is not None and not last.visible.passed  # the "fix" broke it
    assert first.critic is not None and first.critic.verdict == "refine"
    assert last.critic is not None and last.critic.verdict == "pass"
    assert trajectory.stop_reason == "accepted" and trajectory.final == 1
    assert "break" in (first.code or "") and "break" not in (last.code or "")
    assert "early break is a bug" in actor.requests[1][-1].content  # the critique reached the actor


def test_counts_follow_the_critics_confusion_matrix() -> None:
    """Four problems, one per cell: true accept, false reject, false accept, true reject."""
    cells = {"ta": (RIGHT, True), "fr": (RIGHT, False), "fa": (WRONG, True), "tr": (WRONG, False)}
    counts = {"actor": 0, "critic": 0}

    def actor(messages: Sequence[Message], config: GenerateConfig) -> str:
        counts["actor"] += 1
        cell = messages[1].content.split("[")[1][:2]
        draft, _ = cells[cell]
        refining = messages[0].content.startswith("You are an expert Python programmer. A reviewer")
        return (WRONG if draft == RIGHT else RIGHT) if refining else draft

    def critic(messages: Sequence[Message], config: GenerateConfig) -> str:
        counts["critic"] += 1
        cell = messages[1].content.split("[")[1][:2]
        first_review = counts_per[cell] == 0
        counts_per[cell] += 1
        verdict = cells[cell][1] if first_review else True  # the second review always accepts
        return json.dumps({"critique": "" if verdict else "wrong", "passed": verdict})

    counts_per = dict.fromkeys(cells, 0)
    results = {}
    for cell in cells:
        problem = Problem(
            f"p-{cell}", f"Square x. [{cell}]", "function", SQUARE.visible_tests, SQUARE.hidden_tests, "sq"
        )
        results[cell] = run(problem, FunctionModel(actor), FunctionModel(critic))
    assert counts == {"actor": 6, "critic": 6}
    assert {c: len(t.attempts) for c, t in results.items()} == {"ta": 1, "fr": 2, "fa": 1, "tr": 2}
    assert all(t.stop_reason == "accepted" for t in results.values())
    regressions = [c for c, t in results.items() if _passed(t.attempts[0]) and not _passed(t.final_attempt)]
    improvements = [c for c, t in results.items() if not _passed(t.attempts[0]) and _passed(t.final_attempt)]
    assert (regressions, improvements) == (["fr"], ["tr"])


def test_self_refine_stops_at_the_cap_and_on_an_unreadable_critic() -> None:
    rejecting = ScriptedModel(rules=[(is_critic, '{"critique": "no", "passed": false}')])
    capped = run(SQUARE, ScriptedModel([WRONG] * 3), rejecting, max_iters=2)
    assert len(capped.attempts) == 3 and capped.stop_reason == "max_iterations"
    unreadable = run(SQUARE, ScriptedModel([WRONG]), ScriptedModel(["The code looks fine to me."]))
    assert unreadable.stop_reason == "critic_unreadable"
    assert unreadable.attempts[0].critic is not None and unreadable.attempts[0].critic.verdict is None


def test_the_attempt_at_the_cap_is_not_critiqued_unless_asked() -> None:
    """The Self-Refine paper's loop ends after the last refinement: a verdict on that attempt could change
    nothing, so the call is not made (``critique_last=true`` keeps it, for the critic's confusion matrix)."""
    for strategy, rejection in ((self_refine, '{"critique": "no", "passed": false}'),
                                (self_redraft, "<critique>no</critique><suggestion>refine</suggestion>")):  # fmt: skip
        critic = ScriptedModel(rules=[(is_critic, rejection)])
        capped = run(SQUARE, ScriptedModel([WRONG] * 3), critic, max_iters=2, strategy=strategy)
        assert len(capped.attempts) == 3 and capped.stop_reason == "max_iterations" and capped.final == 2
        assert [a.critic is not None for a in capped.attempts] == [True, True, False]
        assert len(critic.requests) == 2
        critic = ScriptedModel(rules=[(is_critic, rejection)])
        every = run(SQUARE, ScriptedModel([WRONG] * 3), critic, max_iters=2, strategy=strategy, critique_last=True)
        assert [a.critic is not None for a in every.attempts] == [True, True, True] and len(critic.requests) == 3
        assert every.stop_reason == "max_iterations" and every.final == 2  # the same answer
    critic = ScriptedModel(rules=[(is_critic, '{"critique": "no", "passed": false}')])
    assert len(run(SQUARE, ScriptedModel([WRONG]), critic, max_iters=0).attempts) == 1 and not critic.requests


def test_the_critic_is_asked_for_structured_output() -> None:
    schemas: list[str | None] = []

    def critic_reply(messages: Sequence[Message], config: GenerateConfig) -> str:
        schemas.append(config.json_schema)
        return '{"critique": "", "passed": true}'

    run(SQUARE, ScriptedModel([RIGHT]), FunctionModel(critic_reply))
    run(SQUARE, ScriptedModel([RIGHT]), FunctionModel(critic_reply), structured=False)
    asked, plain = schemas
    assert asked is not None and "critique" in json.dumps(asked) and "passed" in json.dumps(asked)
    assert plain is None  # structured=false: the verdict is read from plain text


def test_self_redraft_regenerates_with_the_whole_trajectory() -> None:
    other = "```python\ndef sq(x):\n    return x ** 2\n```"
    actor = ScriptedModel([WRONG, WRONG, other])
    critic = ScriptedModel(
        [
            "<critique>Adds instead of multiplying.</critique><suggestion>refine</suggestion>",
            "<critique>Still the same idea.</critique><suggestion>redraft</suggestion>",
            "<critique>Correct.</critique><suggestion>pass</suggestion>",
        ]
    )
    trajectory = run(SQUARE, actor, critic, strategy=self_redraft)
    assert [a.origin for a in trajectory.attempts] == ["draft", "refine", "redraft"]
    assert [a.critic.verdict for a in trajectory.attempts] == ["refine", "redraft", "pass"]  # type: ignore[union-attr]
    last_request = "\n".join(m.content for m in actor.requests[2])
    assert "Adds instead of multiplying." in last_request and "Still the same idea." in last_request
    assert "different approach" in last_request
    assert trajectory.final_attempt is not None and trajectory.final_attempt.visible.passed  # type: ignore[union-attr]


def test_a_real_server_sees_exactly_the_requests_the_trajectory_records() -> None:
    def reply(body: dict[str, object]) -> str:
        messages = body["messages"]
        assert isinstance(messages, list)
        if "senior code reviewer" in messages[0]["content"]:
            accepted = "x * x" in messages[-1]["content"]
            return json.dumps({"critique": "" if accepted else "adds", "passed": accepted})
        return RIGHT if "reviewer flagged" in messages[0]["content"] else WRONG

    with serve(reply) as server:
        backend = OpenAIBackend("vllm:actor", server.base_url, "EMPTY")

        async def main() -> Trajectory:
            async with WorkerPool() as pool, Model(backend) as model:
                return await self_refine(SQUARE, Env(model, pool))

        trajectory = asyncio.run(main())
        bodies = [body for body, _ in server.log]
    calls = [(a.response, a.critic.raw if a.critic else None) for a in trajectory.attempts]
    assert len(bodies) == len(calls) * 2 == 4  # one actor and one critic request per attempt, nothing more
    for attempt, critic_body in zip(trajectory.attempts, bodies[1::2]):
        assert (attempt.code or "").split("\n")[-2].strip() in critic_body["messages"][-1]["content"]
    assert "adds" in bodies[2]["messages"][-1]["content"]  # the critique reached the actor
    assert "response_format" in bodies[1] and "response_format" not in bodies[0]
    assert trajectory.attempts[0].critic is not None and trajectory.attempts[0].critic.verdict == "refine"
    assert trajectory.stop_reason == "accepted" and trajectory.final == 1
    assert trajectory.usage.prompt_tokens == sum(len(str(m["content"]).split()) for b in bodies for m in b["messages"])


def test_confidence_is_asked_for_and_recorded_when_wanted() -> None:
    actor = ScriptedModel([RIGHT + "\nConfidence: 0.9"])
    critic = ScriptedModel(['{"critique": "", "passed": true, "confidence": 0.75}'])
    trajectory = run(SQUARE, actor, critic, ask_confidence=True)
    attempt = trajectory.attempts[0]
    assert attempt.confidence == 0.9 and attempt.critic is not None and attempt.critic.confidence == 0.75
    assert "Confidence: X" in actor.requests[0][-1].content
    assert "confidence" in critic.requests[0][0].content
    quiet = run(SQUARE, ScriptedModel([RIGHT]), ScriptedModel(['{"critique": "", "passed": true}']))
    assert quiet.attempts[0].confidence is None and quiet.attempts[0].critic.confidence is None  # type: ignore[union-attr]


def test_a_spec_with_a_critic_and_settings_runs_and_round_trips() -> None:
    from refinelab.strategies import StrategySpec

    spec = StrategySpec.parse("self-refine(max_iters=1, critic=ollama:qwen2.5-coder:7b, temperature=0.2)")
    assert spec.params == {"max_iters": 1, "critic": "ollama:qwen2.5-coder:7b", "temperature": 0.2}
    assert StrategySpec.parse(str(spec)) == spec
    kwargs = spec.bind().arguments
    assert kwargs["max_iters"] == 1 and kwargs["config"] == GenerateConfig(temperature=0.2)
    actor = ScriptedModel([WRONG, RIGHT])
    critic = ScriptedModel(['{"critique": "adds", "passed": false}', '{"critique": "", "passed": true}'])

    async def main() -> Trajectory:
        async with WorkerPool() as pool:
            return await spec.run(SQUARE, Env(actor, pool, critic=critic))

    trajectory = asyncio.run(main())
    assert trajectory.strategy == "self-refine" and trajectory.params["max_iters"] == 1
    assert len(trajectory.attempts) == 2


def test_unknown_spec_parameters_are_user_errors() -> None:
    import pytest

    from refinelab.errors import UserError
    from refinelab.strategies import StrategySpec

    with pytest.raises(UserError, match="has no parameter 'iterations'"):
        StrategySpec.parse("exec-refine(iterations=3)").bind()
    with pytest.raises(UserError, match="unknown strategy 'self-improve'"):
        StrategySpec.parse("self-improve")


def test_self_refine_schedules_the_actor_temperature_and_keeps_the_critic_s() -> None:
    seen: list[tuple[str, float | None]] = []

    def answer(messages: Sequence[Message], config: GenerateConfig) -> str:
        critic = is_critic(messages)
        seen.append(("critic" if critic else "actor", config.temperature))
        return '{"critique": "wrong", "passed": false}' if critic else "```python\ndef sq(x):\n    return x\n```"

    model = FunctionModel(answer)
    trajectory = run(SQUARE, model, model, max_iters=2, temperature_schedule=(0.0, 1.0))
    actor = [t for role, t in seen if role == "actor"]
    assert actor == [0.0, 0.5, 1.0]
    assert {t for role, t in seen if role == "critic"} == {0.0}
    assert trajectory.params["temperature_schedule"] == [0.0, 1.0]
