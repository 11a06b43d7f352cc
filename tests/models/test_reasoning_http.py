"""Reasoning models over real HTTP: the fake server plays OpenAI's reasoning models (refusing what they refuse,
with their error bodies) and vLLM serving a thinking model; a known model is never refused, an unknown one's
refusal is learned once and recorded, thinking is counted apart and read apart from the answer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from refinelab.models import (
    Completion,
    GenerateConfig,
    Message,
    Model,
    ResponseCache,
    RetryPolicy,
    cache_key,
    open_model,
)
from refinelab.testing import OPENAI_REASONING, VLLM_THINKING, ReasoningMimic, serve

pytestmark = pytest.mark.usefixtures("http_client")  # both HTTP clients (tests/models/conftest.py)

ASK = [Message.system("You write Python."), Message.user("add two numbers")]
KEY = {"OPENAI_API_KEY": "sk-test"}
FAST = RetryPolicy(attempts=3, base_seconds=0.01, max_seconds=0.02)


def test_a_known_reasoning_model_is_never_refused_and_its_thinking_is_counted_as_openai_counts_it() -> None:
    asked = GenerateConfig(temperature=0.0, top_p=0.9, max_tokens=900, reasoning_effort="high")
    with serve(mimic=OPENAI_REASONING) as server:
        model = open_model("openai:o4-mini", KEY, base_url=server.base_url)
        completion = model.generate_sync(ASK, asked)
        (body,) = server.answered()
    assert server.refused() == []
    assert body["max_completion_tokens"] == 900 and body["reasoning_effort"] == "high"
    assert not {"max_tokens", "temperature", "top_p"} & set(body)
    thought = OPENAI_REASONING.thought(body)
    assert completion.usage.reasoning_tokens == thought == 384 + 6  # the high effort's, and the six words of the prompt
    assert completion.usage.completion_tokens == thought + len(completion.text.split())
    assert completion.cost_usd == pytest.approx(
        (completion.usage.prompt_tokens * 1.10 + completion.usage.completion_tokens * 4.40) / 1e6
    )
    assert [str(n) for n in completion.not_sent] == ["temperature=0.0", "top_p=0.9"]


def test_the_effort_changes_the_thinking_and_the_cache_key() -> None:
    with serve(mimic=OPENAI_REASONING) as server:
        model = open_model("openai:o4-mini", KEY, base_url=server.base_url)
        low, high = (model.generate_sync(ASK, GenerateConfig(reasoning_effort=e)) for e in ("low", "high"))
    assert low.usage.reasoning_tokens < high.usage.reasoning_tokens
    keys = {e: cache_key("", "openai:o4-mini", ASK, GenerateConfig(reasoning_effort=e), 0) for e in ("low", "high")}
    assert keys["low"] != keys["high"]


def test_an_unknown_model_learns_a_refusal_once_per_endpoint_and_records_it(tmp_path: Path) -> None:
    with serve(mimic=OPENAI_REASONING) as server:
        model = open_model("my-reasoner", KEY, base_url=server.base_url, retry=FAST)  # no profile knows it

        async def both() -> list[object]:
            async with model:
                asked = GenerateConfig(temperature=0.0, max_tokens=500)
                first = await model.generate(ASK, asked)
                again = await asyncio.gather(*(model.generate(ASK, asked, sample=i) for i in (1, 2, 3)))
                return [first, *again]

        completions = asyncio.run(both())
        refused = [body for body, action in server.log if action == "refused"]
    # max_tokens (renamed to max_completion_tokens, not recorded: the cap is still sent) and temperature 0
    assert [sorted(set(b) & {"max_tokens", "max_completion_tokens", "temperature"}) for b in refused] == [
        ["max_tokens", "temperature"], ["max_completion_tokens", "temperature"],
    ]  # fmt: skip
    assert len(server.answered()) == 4
    for completion in completions:
        (item,) = completion.not_sent  # type: ignore[attr-defined]
        assert str(item) == "temperature=0.0"
        assert "Only the default (1) value is supported" in item.reason and server.base_url in item.reason


def test_a_refused_cap_that_names_no_other_field_is_sent_in_the_other_field_not_dropped() -> None:
    terse = ReasoningMimic("openai", names_the_cap=False)  # "max_tokens is not supported", and nothing more
    with serve(mimic=terse) as server:
        model = open_model("my-reasoner", KEY, base_url=server.base_url, retry=FAST)
        first = model.generate_sync(ASK, GenerateConfig(max_tokens=500))
        again = model.generate_sync(ASK, GenerateConfig(max_tokens=300))
        (refused,) = [body for body, action in server.log if action == "refused"]
    assert refused["max_tokens"] == 500
    assert [body["max_completion_tokens"] for body in server.answered()] == [500, 300]  # learned once
    assert first.not_sent == () and again.not_sent == ()


def test_a_concurrent_burst_of_refused_requests_learns_without_failing() -> None:
    with serve(mimic=OPENAI_REASONING) as server:
        model = open_model("my-reasoner", KEY, base_url=server.base_url, retry=FAST)

        async def burst() -> int:
            async with model:
                done = await asyncio.gather(
                    *(model.generate(ASK, GenerateConfig(temperature=0.0), sample=i) for i in range(8))
                )
                return len(done)

        assert asyncio.run(burst()) == 8
    assert len(server.answered()) == 8


def test_another_400_stays_a_user_error() -> None:
    from refinelab.errors import EndpointError

    with serve(mimic=OPENAI_REASONING) as server:
        model = open_model("my-reasoner", KEY, base_url=server.base_url, retry=FAST)
        server.faults.append("400")
        with pytest.raises(EndpointError, match="rejected the request"):
            model.generate_sync(ASK, GenerateConfig())


def test_vllm_returns_the_thinking_apart_and_takes_the_effort_through_the_chat_template() -> None:
    with serve(mimic=VLLM_THINKING) as server:
        model = open_model("vllm:Qwen/Qwen3-8B", {}, base_url=server.base_url)
        on = model.generate_sync(ASK, GenerateConfig(temperature=0.6, reasoning_effort="low"))
        off = model.generate_sync(ASK, GenerateConfig(temperature=0.6, reasoning_effort="none"))
        bodies = server.answered()
    assert bodies[0]["chat_template_kwargs"] == {"enable_thinking": True, "thinking_budget": 1024}
    assert bodies[0]["thinking_token_budget"] == 1024 and bodies[0]["temperature"] == 0.6
    assert bodies[1]["chat_template_kwargs"] == {"enable_thinking": False}
    assert on.text == "echo: add two numbers" and on.reasoning is not None and on.reasoning.startswith("hmm")
    assert on.usage.reasoning_tokens == VLLM_THINKING.thought(bodies[0]) and on.usage.estimated  # counted from text
    assert off.reasoning is None and off.usage.reasoning_tokens == 0 and on.not_sent == ()


@pytest.mark.parametrize("where", ["reasoning", "inline"])
def test_thinking_in_the_new_field_or_inside_the_text_is_read_apart(where: str) -> None:
    mimic = ReasoningMimic("vllm", thinking={"medium": 30}, where=where)  # type: ignore[arg-type]
    with serve(mimic=mimic) as server:
        completion = open_model("vllm:Qwen/QwQ-32B", {}, base_url=server.base_url).generate_sync(ASK)
    assert completion.text == "echo: add two numbers"  # the code is read from the answer only
    assert completion.reasoning == " ".join(["hmm"] * (30 + 6)) and completion.usage.reasoning_tokens == 36


def test_thinking_a_server_counts_as_zero_is_counted_from_its_text() -> None:
    mimic = ReasoningMimic("vllm", thinking={"medium": 30}, where="reasoning", reports_zero=True)
    with serve(mimic=mimic) as server:
        completion = open_model("vllm:deepseek-ai/DeepSeek-R1", {}, base_url=server.base_url).generate_sync(ASK)
    assert completion.reasoning is not None and completion.usage.reasoning_tokens == 36 and completion.usage.estimated


@pytest.mark.parametrize("where", ["inline", "opened"])
def test_a_reply_cut_off_while_thinking_in_the_text_has_no_answer(where: str) -> None:
    mimic = ReasoningMimic("vllm", thinking={"medium": 30}, where=where)  # type: ignore[arg-type]
    with serve(mimic=mimic) as server:
        model = open_model("vllm:deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", {}, base_url=server.base_url)
        cut, whole = (model.generate_sync(ASK, GenerateConfig(max_tokens=cap)) for cap in (20, 100))
    assert cut.text == "" and cut.reasoning == " ".join(["hmm"] * 20) and cut.usage.reasoning_tokens == 20
    assert whole.text == "echo: add two numbers" and whole.usage.reasoning_tokens == 36


def test_the_thinking_of_samples_of_one_request_adds_up_when_their_lengths_differ() -> None:
    mimic = ReasoningMimic("vllm", thinking={"medium": 30}, where="reasoning", spread=100)
    with serve(mimic=mimic) as server:
        model = open_model("vllm:Qwen/Qwen3-8B", {}, base_url=server.base_url)

        async def three() -> list[Completion]:
            async with model:
                return await model.generate_n(ASK, GenerateConfig(temperature=0.8), n=3)

        samples = asyncio.run(three())
        (body,) = server.answered()
    assert body["n"] == 3
    assert sum(s.usage.reasoning_tokens for s in samples) == 36 + 136 + 236  # as much as the three thought
    assert sum(s.usage.completion_tokens for s in samples) == 36 + 136 + 236 + 3 * 4
    assert all(0 < s.usage.reasoning_tokens <= s.usage.completion_tokens for s in samples)


def test_an_answer_a_server_put_in_the_thinking_field_with_thinking_off_is_the_answer() -> None:
    mimic = ReasoningMimic("vllm", misplaces_answer=True)  # vLLM's deepseek_r1 parser, Qwen3, thinking off
    with serve(mimic=mimic) as server:
        model = open_model("vllm:Qwen/Qwen3-8B", {}, base_url=server.base_url)
        off = model.generate_sync(ASK, GenerateConfig(reasoning_effort="none"))
        (body,) = server.answered()
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert off.text == "echo: add two numbers" and off.reasoning is None and off.usage.reasoning_tokens == 0


def test_a_budget_caps_vllms_thinking() -> None:
    with serve(mimic=VLLM_THINKING) as server:
        completion = open_model("vllm:Qwen/Qwen3-8B", {}, base_url=server.base_url).generate_sync(
            ASK, GenerateConfig(reasoning_effort="50")
        )
    assert completion.usage.reasoning_tokens == 50


def test_a_cached_reply_keeps_its_thinking_and_what_was_not_sent(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    asked = GenerateConfig(temperature=0.0, reasoning_effort="low")
    with serve(mimic=OPENAI_REASONING) as server:
        first = open_model("openai:o4-mini", KEY, base_url=server.base_url, cache=cache).generate_sync(ASK, asked)
        again = open_model("openai:o4-mini", KEY, base_url=server.base_url, cache=cache).generate_sync(ASK, asked)
        assert len(server.answered()) == 1
    assert again.cached and again.usage == first.usage and again.not_sent == first.not_sent
    with serve(mimic=VLLM_THINKING) as server:
        model = open_model("vllm:Qwen/Qwen3-8B", {}, base_url=server.base_url, cache=cache)
        fresh, replayed = model.generate_sync(ASK), model.generate_sync(ASK)
    assert replayed.cached and replayed.reasoning == fresh.reasoning is not None


def test_a_model_whose_requests_go_as_asked_keeps_its_old_cache_keys() -> None:
    import hashlib
    import json

    config = GenerateConfig(temperature=0.0, max_tokens=64)
    old = {"deployment": "", "model": "vllm:coder", "messages": [[m.role, m.content] for m in ASK],
           "config": {"temperature": 0.0, "top_p": None, "max_tokens": 64, "seed": None, "stop": (), "json_schema": None},
           "sample": 0}  # fmt: skip
    assert (
        cache_key("", "vllm:coder", ASK, config, 0)
        == hashlib.sha256(json.dumps(old, sort_keys=True).encode()).hexdigest()
    )
    model = Model(open_model("vllm:coder", {}, base_url="http://127.0.0.1:9/v1").backend)
    assert not model.accepts.profile.reasons and not model.accepts.profile.refuses  # so no profile joins its key
