"""The model layer with the shipped doubles: accounting, cache, retries, resolution, prices."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Sequence
from pathlib import Path

import pytest

from refinelab.errors import UserError
from refinelab.models import (
    CacheMiss,
    Completion,
    EndpointError,
    FunctionModel,
    GenerateConfig,
    Message,
    Model,
    ModelsConfig,
    Price,
    PriceTable,
    Reply,
    ResponseCache,
    RetryPolicy,
    ScriptedModel,
    TransientError,
    Usage,
    resolve,
)
from refinelab.models._cache import cache_key
from refinelab.models._resolve import EndpointSettings


def test_scripted_model_replies_in_order_and_by_rule() -> None:
    model = ScriptedModel(["first", "second"], rules=[(lambda m: "critic" in m[0].content, '{"passed": true}')])
    assert model.generate_sync([Message.user("write code")]).text == "first"
    assert model.generate_sync([Message.system("you are a critic")]).text == '{"passed": true}'
    assert model.generate_sync([Message.user("again")]).text == "second"
    assert len(model.requests) == 3
    assert model.accounting.calls == 3
    assert model.accounting.usage == Usage(2 + 4 + 1, 1 + 2 + 1)


def test_function_model_sees_messages_and_config() -> None:
    def reply(messages: Sequence[Message], config: GenerateConfig) -> str:
        return f"{len(messages)} messages at t={config.temperature}"

    completion = FunctionModel(reply).generate_sync(
        [Message.user("a"), Message.user("b")], GenerateConfig(temperature=0.2)
    )
    assert completion.text == "2 messages at t=0.2"
    assert completion.model == "function:function"


def test_cache_modes(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    ask = [Message.user("x")]
    writer = ScriptedModel(["stored"])
    writer.cache = ResponseCache(path)
    writer.generate_sync(ask)
    replay = ScriptedModel([])
    replay.cache = ResponseCache(path, mode="ro")
    assert replay.generate_sync(ask).text == "stored" and replay.requests == []
    with pytest.raises(CacheMiss):
        replay.generate_sync([Message.user("never asked")])
    off = ScriptedModel(["fresh"])
    off.cache = ResponseCache(path, mode="off")
    assert off.generate_sync(ask).text == "fresh"


def test_identical_requests_in_flight_make_one_call_and_keep_their_latency(tmp_path: Path) -> None:
    class SlowBackend:
        endpoint, model = "slow://", "slow:m"
        calls = 0

        async def complete(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
            SlowBackend.calls += 1
            await asyncio.sleep(0.05)
            return [Reply("once", Usage(2, 1), "stop")]

    model = Model(SlowBackend(), cache=ResponseCache(tmp_path / "c.sqlite"))

    async def main() -> list[Completion]:
        ask = [Message.user("same")]
        return list(await asyncio.gather(*(model.generate(ask) for _ in range(3)), model.generate(ask, sample=1)))

    first, second, third, other = asyncio.run(main())
    assert SlowBackend.calls == 2  # one for sample 0 (shared by three callers), one for sample 1
    assert [c.cached for c in (first, second, third)].count(False) == 1
    assert first.latency_seconds == second.latency_seconds == third.latency_seconds >= 0.05  # the request's own time
    assert not other.cached


class FlakyBackend:
    endpoint = "flaky://"
    model = "flaky:m"

    def __init__(self, failures: int) -> None:
        self.failures = failures

    async def complete(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
        if self.failures:
            self.failures -= 1
            raise TransientError("500")
        return [Reply("ok", Usage(1, 1), "stop")]


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(base_seconds=1, max_seconds=5, jitter=0)
    assert [policy.wait(a, None) for a in (1, 2, 3, 4)] == [1, 2, 4, 5]
    assert policy.wait(1, 2.5) == 2.5


def test_retries_are_recorded_on_the_completion() -> None:
    model = Model(FlakyBackend(2), retry=RetryPolicy(base_seconds=0.001))
    completion = model.generate_sync([Message.user("x")])
    assert [r.attempt for r in completion.retries] == [1, 2]


def test_concurrency_is_capped_per_endpoint() -> None:
    class Slow:
        endpoint = "slow://"
        model = "slow:m"
        active = 0
        peak = 0

        async def complete(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
            Slow.active += 1
            Slow.peak = max(Slow.peak, Slow.active)
            await asyncio.sleep(0.01)
            Slow.active -= 1
            return [Reply("ok", None, "stop")]

    async def run() -> None:
        first, second = Model(Slow(), concurrency=3), Model(Slow(), concurrency=3)
        second.limits = first.limits  # as every model a runtime opens shares the runtime's
        await asyncio.gather(*(m.generate([Message.user(str(i))]) for i in range(12) for m in (first, second)))

    asyncio.run(run())
    assert Slow.peak == 3  # two Model objects, one endpoint, one limit


class Contended:
    """One endpoint that keeps two requests waiting on each other (the semaphore binds to its loop)."""

    endpoint = "contended://"
    model = "contended:m"

    async def complete(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
        await asyncio.sleep(0)
        return [Reply("ok", None, "stop")]


def test_the_limits_keep_no_finished_event_loop_alive() -> None:
    """200 ``asyncio.run`` calls on one model, each waiting on the cap: at most the last loop stays."""
    model = Model(Contended(), concurrency=1)
    loops: list[weakref.ref[asyncio.AbstractEventLoop]] = []

    async def twice() -> None:
        loops.append(weakref.ref(asyncio.get_running_loop()))
        await asyncio.gather(*(model.generate([Message.user(str(i))]) for i in range(2)))

    for _ in range(200):
        asyncio.run(twice())
    gc.collect()
    assert sum(loop() is not None for loop in loops) <= 1


def test_models_a_runtime_opens_share_one_cap_per_endpoint(tmp_path: Path) -> None:
    from refinelab.runtime import Settings, open_runtime

    async def run() -> tuple[Model, Model]:
        settings = Settings(store=tmp_path / "s.sqlite", environ={})
        async with open_runtime(settings) as runtime:
            return runtime.model("vllm:a", base_url="http://h:1/v1"), runtime.model("vllm:b", base_url="http://h:1/v1")

    first, second = asyncio.run(run())
    assert first is not second and first.limits is second.limits


def test_costs_use_the_price_table_and_are_none_when_unknown() -> None:
    usage = Usage(1_000_000, 1_000_000, 500_000)
    assert Price(2.0, 8.0, 0.5).cost(usage) == pytest.approx(1.0 + 0.25 + 8.0)
    table = PriceTable({"vllm:mine": Price(0.0, 0.0)})
    assert table.cost("openai:gpt-4.1-mini", Usage(1_000_000, 0)) == pytest.approx(0.40)
    assert table.cost("vllm:mine", usage) == 0.0
    assert table.cost("vllm:unknown", usage) is None
    model = ScriptedModel(["a", "b"])
    model.generate_sync([Message.user("x")])
    assert model.accounting.cost_usd is None


def test_model_strings() -> None:
    assert resolve("vllm:Qwen/Qwen2.5-Coder-7B-Instruct", {}).base_url == "http://localhost:8000/v1"
    assert resolve("ollama:qwen2.5-coder:7b", {}).base_url == "http://localhost:11434/v1"
    assert resolve("llamacpp:any", {}).base_url == "http://localhost:8080/v1"
    spec = resolve("openai:gpt-4.1-mini", {"OPENAI_API_KEY": "sk-x"})
    assert (spec.base_url, spec.api_key) == ("https://api.openai.com/v1", "sk-x")
    with pytest.raises(UserError, match="set OPENAI_API_KEY"):
        resolve("openai:gpt-4.1-mini", {})
    with pytest.raises(UserError, match="--base-url"):
        resolve("my-model", {})
    assert resolve("my-model", {}, base_url="http://h:1/v1").model == "custom:my-model"
    config = ModelsConfig(
        aliases={"small": "vllm:q3b"}, endpoints={"vllm:q3b": EndpointSettings(base_url="http://gpu:9/v1")}
    )
    assert resolve("small", {}, config=config).base_url == "http://gpu:9/v1"


def test_config_merge() -> None:
    base = GenerateConfig(temperature=0.2, top_p=0.95)
    merged = base.merge(GenerateConfig(temperature=0.0, max_tokens=10))
    assert (merged.temperature, merged.top_p, merged.max_tokens) == (0.0, 0.95, 10)


def test_a_backend_answering_fewer_samples_than_asked_is_an_endpoint_error() -> None:
    class Short:
        endpoint = "short://test"
        model = "short:test"

        async def complete(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
            return [Reply("only one", Usage(1, 2))]

    with pytest.raises(EndpointError, match="gave 1 replies for n=3"):
        asyncio.run(Model(Short()).generate_n([Message.user("hi")], n=3))


class Batching:
    """A backend that decodes concurrent requests together (as the local engine does): it holds back the
    sample whose seed is ``held`` until the test lets it go."""

    endpoint, model = "batching://", "batching:m"
    batches_requests = True

    def __init__(self, held: int) -> None:
        self.held, self.release = held, asyncio.Event()
        self.requests: list[tuple[int | None, int]] = []

    async def complete(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
        self.requests.append((config.seed, n))
        if config.seed == self.held:
            await self.release.wait()
        return [Reply(f"seed {config.seed}", Usage(3, 2), "stop", latency_seconds=0.25)]


def test_a_batching_backend_gets_one_request_a_sample_each_cached_as_it_is_done(tmp_path: Path) -> None:
    backend, cache = Batching(held=106), ResponseCache(tmp_path / "c.sqlite")
    model = Model(backend, cache=cache)
    ask, config = [Message.user("sample")], GenerateConfig(temperature=1.0, seed=100)

    async def main() -> list[Completion]:
        drawing = asyncio.create_task(model.generate_n(ask, config, n=3, first_sample=5))
        keys = {s: cache_key("", model.identity, ask, config, s) for s in (5, 6, 7)}
        for _ in range(1000):  # until the two free samples are stored (a few turns of the loop)
            if cache.lookup(keys[5]) and cache.lookup(keys[7]):
                break
            await asyncio.sleep(0)
        assert cache.lookup(keys[6]) is None and not drawing.done()  # stored while sample 6 still runs
        backend.release.set()
        return await drawing

    completions = asyncio.run(main())
    assert sorted(backend.requests) == [(105, 1), (106, 1), (107, 1)]  # sample i of seed s: seed s + i, alone
    assert [c.text for c in completions] == ["seed 105", "seed 106", "seed 107"]
    assert {c.latency_seconds for c in completions} == {0.25}  # the backend's own time, not the request's
    again = Model(Batching(held=-1), cache=cache)
    assert [c.cached for c in asyncio.run(again.generate_n(ask, config, n=3, first_sample=5))] == [True] * 3
