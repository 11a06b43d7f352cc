"""The OpenAI-compatible backend against a real HTTP server on 127.0.0.1, with injected faults."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

import pytest

from refinelab.models import (
    EndpointError,
    EndpointFailed,
    GenerateConfig,
    Message,
    Model,
    ResponseCache,
    RetryPolicy,
    open_model,
)
from refinelab.models._model import MAX_N
from refinelab.models._openai import OpenAIBackend
from refinelab.testing import FakeOpenAI, serve

pytestmark = pytest.mark.usefixtures("http_client")  # both HTTP clients (tests/models/conftest.py)

T = TypeVar("T")
FAST_RETRY = RetryPolicy(attempts=4, base_seconds=0.01, max_seconds=0.05)
ASK = [Message.user("hello there")]


def run(model: Model, work: Awaitable[T]) -> T:
    """Run ``work`` in a fresh event loop and close the model's connections after it."""

    async def main() -> T:
        async with model:
            return await work

    return asyncio.run(main())


def model_for(
    server: FakeOpenAI, *, timeout: float = 5.0, cache: ResponseCache | None = None, attempts: int = 4
) -> Model:
    backend = OpenAIBackend("vllm:test-model", server.base_url, "EMPTY", timeout=timeout)
    return Model(backend, retry=RetryPolicy(attempts=attempts, base_seconds=0.01, max_seconds=0.05), cache=cache)


def test_a_plain_call_reports_text_usage_latency_and_raw_response() -> None:
    with serve() as server:
        completion = model_for(server).generate_sync(ASK, GenerateConfig(temperature=0, max_tokens=50, stop=("END",)))
        body = server.answered()[0]
    assert completion.text == "echo: hello there"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (2, 3)
    assert not completion.usage.estimated
    assert completion.finish_reason == "stop" and completion.latency_seconds > 0
    assert completion.raw is not None and completion.raw["model"] == "test-model"
    assert body["temperature"] == 0 and body["max_tokens"] == 50 and body["stop"] == ["END"]
    assert completion.cost_usd is None  # a local model has no known price


def test_each_answer_has_an_id_of_its_own_that_the_server_maps_to_its_request() -> None:
    with serve() as server:
        model = model_for(server)
        first, second = (model.generate_sync(ASK, GenerateConfig(seed=seed)) for seed in (1, 2))
        ids = list(server.answer_ids)
    assert first.raw is not None and second.raw is not None
    assert ids == [first.raw["id"], second.raw["id"]] and len(set(ids)) == 2
    assert [server.answer_ids[i]["seed"] for i in ids] == [1, 2]


def test_missing_usage_is_estimated_and_marked() -> None:
    with serve() as server:
        server.usage = False
        completion = model_for(server).generate_sync(ASK)
    assert completion.usage.estimated and completion.usage.completion_tokens > 0


@pytest.mark.parametrize("fault", ["429", "500", "malformed", "drop", "slow"])
def test_transient_faults_are_retried_and_recorded(fault: str) -> None:
    with serve() as server:
        server.faults.extend([fault, fault])
        server.slow_seconds = 10.0  # past the timeout by far; the answer that counts comes at once
        model = model_for(server, timeout=2.0)  # a loaded machine's pause is no timeout
        completion = model.generate_sync(ASK)
        assert len(server.answered()) == 1
    assert completion.text == "echo: hello there"
    assert len(completion.retries) == 2
    assert model.accounting.retries == 2 and model.accounting.calls == 1
    assert (
        completion.retries[0].reason in {"429", "500", "malformed response", "timeout"}
        or "connection" in completion.retries[0].reason
    )


def test_retry_after_is_honoured() -> None:
    with serve() as server:
        server.faults.append("429")
        completion = model_for(server).generate_sync(ASK)
    assert completion.retries[0].wait_seconds == pytest.approx(0.01)


def test_exhausted_retries_end_as_an_infrastructure_error() -> None:
    with serve() as server:
        server.faults.extend(["500"] * 10)
        model = model_for(server, attempts=3)
        with pytest.raises(EndpointFailed, match="failed 3 times"):
            model.generate_sync(ASK)
    assert model.accounting.failures == 1


@pytest.mark.parametrize(("fault", "hint"), [("401", "API key"), ("404", "does not know model"), ("400", "rejected")])
def test_fatal_errors_fail_fast_with_advice(fault: str, hint: str) -> None:
    with serve() as server:
        server.faults.append(fault)
        with pytest.raises(EndpointError, match=hint):
            model_for(server).generate_sync(ASK)
        assert len(server.log) == 1  # not retried


def test_unreachable_endpoint_says_what_to_do() -> None:
    backend = OpenAIBackend("vllm:x", "http://127.0.0.1:9/v1", "EMPTY", timeout=1)
    model = Model(backend, retry=FAST_RETRY)
    with pytest.raises(EndpointError, match="check the address, and that the server is running there"):
        model.generate_sync(ASK)


def test_n_samples_in_one_request_or_one_each_when_rejected() -> None:
    with serve() as server:
        model = model_for(server)
        completions = run(model, model.generate_n(ASK, GenerateConfig(temperature=0.8), n=3))
        assert [c.sample for c in completions] == [0, 1, 2] and len(server.log) == 1
    with serve() as server:
        server.accept_n = False
        model = model_for(server)
        completions = run(model, model.generate_n(ASK, GenerateConfig(temperature=0.8), n=3))
        assert len(completions) == 3 and len(server.answered()) == 3
        assert [body.get("n", 1) for body, _ in server.log] == [3, 1, 1, 1]


def test_a_server_that_ignores_n_gets_one_request_a_sample() -> None:
    with serve() as server:
        server.ignore_n = True  # Ollama: one choice for any n, and no error
        model = model_for(server)
        completions = run(model, model.generate_n(ASK, GenerateConfig(temperature=0.8), n=3))
        again = run(model, model.generate_n(ASK, GenerateConfig(temperature=0.8), n=2))
        assert [c.sample for c in completions] == [0, 1, 2] and len(again) == 2
        assert [body.get("n", 1) for body, _ in server.log] == [3, 1, 1, 1, 1, 1]  # n is learned once


def test_more_samples_than_a_server_takes_in_one_request_go_in_chunks() -> None:
    with serve() as server:
        server.max_n = MAX_N  # OpenAI's limit: a larger n is a 400 naming n
        model = model_for(server)
        completions = run(model, model.generate_n(ASK, GenerateConfig(temperature=0.8), n=2 * MAX_N + 5))
        assert [c.sample for c in completions] == list(range(2 * MAX_N + 5))
        assert sorted(body.get("n", 1) for body, _ in server.log) == [5, MAX_N, MAX_N]  # none refused, none alone
        assert all(action == "ok" for _, action in server.log)


def test_structured_output_is_requested_with_the_schema() -> None:
    schema = {"type": "object", "properties": {"passed": {"type": "boolean"}}}
    with serve() as server:
        model_for(server).generate_sync(ASK, GenerateConfig.with_schema(schema))
        body = server.answered()[0]
    assert body["response_format"]["json_schema"]["schema"] == schema


def test_the_cache_makes_repeats_free_and_keeps_samples_distinct(tmp_path: Path) -> None:
    with serve() as server:
        cache = ResponseCache(tmp_path / "cache.sqlite")
        model = model_for(server, cache=cache)
        first = run(model, model.generate_n(ASK, GenerateConfig(temperature=1), n=2))
        replay = model_for(server, cache=ResponseCache(tmp_path / "cache.sqlite"))
        again = run(replay, replay.generate_n(ASK, GenerateConfig(temperature=1), n=2))
        assert len(server.log) == 1
    assert [c.cached for c in again] == [True, True] and [c.text for c in again] == [c.text for c in first]
    assert len(cache) == 2


def test_twenty_percent_faults_nothing_lost_or_duplicated_and_a_rerun_is_free(tmp_path: Path) -> None:
    prompts = [[Message.user(f"task {i}")] for i in range(150)]

    async def run_all(model: Model) -> list[object]:
        async def one(messages: list[Message]) -> object:
            try:
                return await model.generate(messages)
            except EndpointFailed as exc:
                return exc

        async with model:
            return await asyncio.gather(*(one(p) for p in prompts))

    with serve() as server:
        server.fault_rate = 0.2
        model = model_for(server, cache=ResponseCache(tmp_path / "c.sqlite"), attempts=6)
        results = asyncio.run(run_all(model))
        answered = [body["messages"][0]["content"] for body in server.answered()]
        requests_first = len(server.log)
        retried = requests_first - len(answered)
        rerun = asyncio.run(run_all(model_for(server, cache=ResponseCache(tmp_path / "c.sqlite"))))
        assert len(server.log) == requests_first  # the second run made no request at all
    done = [r for r in results if not isinstance(r, EndpointFailed)]
    assert len(done) + model.accounting.failures == 150
    assert sorted(answered) == sorted(set(answered))  # no prompt answered twice
    assert len(answered) == len(done)
    assert model.accounting.retries == retried
    assert all(getattr(r, "cached", False) for r in rerun if not isinstance(r, EndpointFailed))


def test_model_strings_reach_the_right_server() -> None:
    with serve() as server:
        model = open_model("ollama:qwen2.5-coder:7b", {}, base_url=server.base_url)
        model.generate_sync(ASK)
        assert server.answered()[0]["model"] == "qwen2.5-coder:7b"


def test_structured_output_falls_back_to_plain_text_when_the_server_rejects_it() -> None:
    schema = {"type": "object"}
    with serve() as server:
        server.accept_schema = False
        model = model_for(server)
        first = model.generate_sync(ASK, GenerateConfig.with_schema(schema))
        second = model.generate_sync([Message.user("again")], GenerateConfig.with_schema(schema))
        actions = [action for _, action in server.log]
    assert first.text == "echo: hello there" and second.text == "echo: again"
    assert actions == ["reject-schema", "ok", "ok"]  # rejected once, then never asked again
    assert not first.retries


def test_the_backend_sits_on_the_client_the_test_asks_for(http_client: str) -> None:
    async def used() -> str:
        backend = OpenAIBackend("vllm:x", "http://127.0.0.1:9/v1", "EMPTY")
        name = type(backend._client()._client).__name__
        await backend.aclose()
        return name

    name = asyncio.run(used())
    assert ("aiohttp" in name.lower()) == (http_client == "aiohttp"), name


def test_a_seeded_request_sent_a_sample_at_a_time_sends_each_sample_its_own_seed() -> None:
    # A server that refuses n gets one request a sample; with one seed in all of them, a server that honours
    # seeds (vLLM) would return the same sample n times, and sampling would buy nothing.
    with serve() as server:
        server.accept_n = False
        model = model_for(server)
        completions = run(model, model.generate_n(ASK, GenerateConfig(temperature=0.8, seed=7), n=4))
        assert [c.sample for c in completions] == [0, 1, 2, 3]
        seeds = sorted(body["seed"] for body, action in server.log if action == "ok")
    assert seeds == [7, 8, 9, 10]


def test_n_in_chunks_moves_the_seed_on_by_each_chunks_first_sample() -> None:
    with serve() as server:
        server.max_n = MAX_N
        model = model_for(server)
        run(model, model.generate_n(ASK, GenerateConfig(temperature=0.8, seed=7), n=MAX_N + 3))
        sent = sorted((body["seed"], body.get("n", 1)) for body, _ in server.log)
    assert sent == [(7, MAX_N), (7 + MAX_N, 3)]
