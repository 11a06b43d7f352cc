"""``Env.generate_n``: samples of one prompt in one request, against the shipped OpenAI-compatible server;
the budget reserved up front; usage shared exactly; the response cache shared with per-sample calls."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from refinelab.models import GenerateConfig, Message, Model, Price, PriceTable, ResponseCache, RetryPolicy
from refinelab.models._openai import OpenAIBackend
from refinelab.problems import CallTest, Problem
from refinelab.strategies import DEFAULT_PROMPTS, Budget, Env, Trajectory, codet
from refinelab.strategies._tests import TEST_SAMPLE_OFFSET
from refinelab.testing import FakeOpenAI, FakeSandbox, serve
from refinelab.verification import test_request

T = TypeVar("T")
ASK = [Message.user("write it")]
HOT = GenerateConfig(temperature=0.8)
SQUARE = Problem(
    id="sq",
    prompt='def sq(x: int) -> int:\n    """Square x."""\n',
    kind="function",
    visible_tests=(CallTest("sq(7)", 49),),
    hidden_tests=(CallTest("sq(4)", 16),),
    entry_point="sq",
)


class Numbered:
    """A reply writer whose every reply is new: programs ``return x * x  # k`` (every third one wrong), and
    tests for the test-writing request, so each sample can be told apart from every other."""

    def __init__(self) -> None:
        self._count = itertools.count()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, object]) -> str:
        with self._lock:
            k = next(self._count)
        messages = body["messages"]
        assert isinstance(messages, list)
        if "You write unit tests" in str(messages[0]["content"]):
            return f"```python\nassert sq({k}) == {k * k}\nassert sq(2) == 4\n```"
        body_line = "return x + x" if k % 3 == 2 else "return x * x"
        return f"```python\ndef sq(x):\n    {body_line}  # reply {k}\n```"


def model_for(server: FakeOpenAI, cache: ResponseCache | None = None, prices: PriceTable | None = None) -> Model:
    backend = OpenAIBackend("vllm:test-model", server.base_url, "EMPTY", timeout=5.0)
    return Model(
        backend, retry=RetryPolicy(attempts=3, base_seconds=0.01, max_seconds=0.05), cache=cache, prices=prices
    )


def with_env(model: Model, work: Callable[[Env], Awaitable[T]], budget: Budget | None = None) -> tuple[T, Env]:
    async def main() -> tuple[T, Env]:
        async with model:
            env = Env(model, FakeSandbox(), budget=budget)
            return await work(env), env

    return asyncio.run(main())


def n_of(server: FakeOpenAI) -> list[int]:
    """The ``n`` of every request the server saw (answered or refused), in order."""
    return [int(body.get("n", 1)) for body, _ in server.log]


def test_n_samples_are_one_request_each_a_call_of_its_own() -> None:
    with serve(Numbered()) as server:
        drawn, env = with_env(model_for(server), lambda env: env.generate_n("actor", ASK, HOT, n=5, first_sample=3))
        assert n_of(server) == [5]
    assert [c.sample for c in drawn.completions] == [3, 4, 5, 6, 7] and drawn.refused is None
    assert len({c.text for c in drawn.completions}) == 5
    assert env.spent.calls == 5
    for completion in drawn.completions:  # each keeps its own choice of the response, not all five
        assert completion.raw is not None and isinstance(completion.raw["choices"], list)
        assert [choice["message"]["content"] for choice in completion.raw["choices"]] == [completion.text]


def test_codet_asks_once_for_its_programs_and_once_for_its_tests() -> None:
    with serve(Numbered()) as server:
        trajectory, env = with_env(model_for(server), lambda env: codet(SQUARE, env, n=6, m=3))
        assert sorted(n_of(server)) == [3, 6]
    assert len(trajectory.attempts) == 6 and len(trajectory.generations) == 3
    assert [a.index for a in trajectory.attempts] == list(range(6)) and env.spent.calls == 9
    assert trajectory.final == 0 and trajectory.stop_reason == "agreement"


def test_a_server_refusing_n_gets_one_request_a_sample_and_the_same_answer() -> None:
    def replies(accept_n: bool) -> tuple[Trajectory, list[int]]:
        with serve(Numbered()) as server:
            server.accept_n = accept_n
            model = model_for(server)
            model.concurrency = 1  # one request at a time, so the k-th reply is the k-th sample
            trajectory, _ = with_env(model, lambda env: codet(SQUARE, env, n=4, m=2))
            return trajectory, n_of(server)

    batched, sizes = replies(True)
    assert sorted(sizes) == [2, 4]
    one_by_one, sizes = replies(False)
    assert sizes.count(1) == 6 and 4 in sizes and set(sizes) <= {1, 2, 4}  # refused n, then one request a sample
    assert [a.response for a in one_by_one.attempts] == [a.response for a in batched.attempts]
    assert one_by_one.final == batched.final and one_by_one.decisions == batched.decisions


def test_a_call_budget_reserves_n_calls_and_shrinks_the_request_to_what_is_left() -> None:
    async def work(env: Env) -> tuple[list[int], str | None, int, str | None]:
        await env.generate("actor", ASK, HOT)  # one call spent: four left
        first = await env.generate_n("actor", ASK, HOT, n=3, first_sample=1)
        second = await env.generate_n("actor", ASK, HOT, n=3, first_sample=4)
        third = await env.generate_n("actor", ASK, HOT, n=3, first_sample=5)
        assert first.refused is None and not third.completions
        return [c.sample for c in second.completions], second.refused, env.spent.calls, third.refused

    with serve(Numbered()) as server:
        (second, refused, calls, then), _ = with_env(model_for(server), work, Budget(max_calls=5))
        assert n_of(server) == [1, 3, 1]  # the second request shrank from three samples to the one left
    assert second == [4] and refused == "max_calls=5" and calls == 5 and then == "max_calls=5"


def test_concurrent_draws_never_reserve_more_calls_than_the_budget() -> None:
    async def work(env: Env) -> list[int]:
        drawn = await asyncio.gather(*(env.generate_n("actor", ASK, HOT, n=4, first_sample=10 * i) for i in range(3)))
        return [len(d.completions) for d in drawn]

    with serve(Numbered()) as server:
        counts, env = with_env(model_for(server), work, Budget(max_calls=6))
        assert sum(n_of(server)) == 6
    assert counts == [4, 2, 0] and env.spent.calls == 6


def test_one_requests_usage_and_cost_are_shared_exactly_never_counted_twice() -> None:
    prices = PriceTable({"vllm:test-model": Price(input=3.0, output=7.0)})
    with serve(lambda body: "one two three four") as server:
        prompt = [Message.user("a b c d e f g")]  # 7 prompt tokens, reported once for the request
        drawn, env = with_env(model_for(server, prices=prices), lambda env: env.generate_n("actor", prompt, HOT, n=3))
    assert [c.usage.prompt_tokens for c in drawn.completions] == [3, 2, 2]  # 7 shared, none lost
    assert env.spent.usage.prompt_tokens == 7 and env.spent.usage.completion_tokens == 12
    assert env.spent.cost_usd == pytest.approx((7 * 3.0 + 12 * 7.0) / 1e6)
    assert all(c.latency_seconds == drawn.completions[0].latency_seconds > 0 for c in drawn.completions)


def test_an_estimated_prompt_is_counted_once_for_the_request() -> None:
    with serve(lambda body: "one two three four") as server:
        server.usage = False
        prompt = [Message.user("x" * 400)]  # about 100 tokens estimated, plus the message overhead
        single, _ = with_env(model_for(server), lambda env: env.generate("actor", prompt, HOT))
        drawn, env = with_env(model_for(server), lambda env: env.generate_n("actor", prompt, HOT, n=4))
    assert all(c.usage.estimated for c in drawn.completions)
    assert env.spent.usage.prompt_tokens == single.usage.prompt_tokens  # not four times


def test_samples_cached_one_by_one_are_reused_by_a_request_for_n(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    with serve(Numbered()) as server:

        async def one_by_one(env: Env) -> list[str]:
            return [(await env.generate("actor", ASK, HOT, sample=s)).text for s in range(3)]

        before, _ = with_env(model_for(server, ResponseCache(path)), one_by_one)
        drawn, _ = with_env(model_for(server, ResponseCache(path)), lambda env: env.generate_n("actor", ASK, HOT, n=5))
        assert n_of(server) == [1, 1, 1, 2]  # only samples 3 and 4 were asked for
    assert [c.text for c in drawn.completions][:3] == before
    assert [c.cached for c in drawn.completions] == [True, True, True, False, False]


def test_samples_drawn_n_at_a_time_are_reused_one_by_one(tmp_path: Path) -> None:
    path = tmp_path / "responses.sqlite"
    with serve(Numbered()) as server:
        drawn, _ = with_env(model_for(server, ResponseCache(path)), lambda env: env.generate_n("actor", ASK, HOT, n=4))

        async def one_by_one(env: Env) -> list[str]:
            return [(await env.generate("actor", ASK, HOT, sample=s)).text for s in range(4)]

        after, _ = with_env(model_for(server, ResponseCache(path)), one_by_one)
        assert n_of(server) == [4]
    assert after == [c.text for c in drawn.completions]


def test_codet_resumes_from_a_cache_its_per_sample_calls_wrote(tmp_path: Path) -> None:
    """A cache written the way codet asked before (one call a sample, its exact requests) answers codet now,
    with no request and the same trajectory."""
    path = tmp_path / "responses.sqlite"
    config = GenerateConfig(temperature=0.2, top_p=0.95)  # codet's default settings

    async def as_before(env: Env) -> None:
        for i in range(4):
            await env.generate("actor", DEFAULT_PROMPTS.draft(SQUARE), config, sample=i)
        for i in range(2):
            await env.generate("actor", test_request(SQUARE, count=10), config, sample=TEST_SAMPLE_OFFSET + i)

    with serve(Numbered()) as server:
        with_env(model_for(server, ResponseCache(path)), as_before)
        asked = len(server.log)
        trajectory, _ = with_env(model_for(server, ResponseCache(path)), lambda env: codet(SQUARE, env, n=4, m=2))
        assert len(server.log) == asked == 6  # everything came from the cache
    assert all(a.cached for a in trajectory.attempts) and all(g.cached for g in trajectory.generations)
    assert [a.response.split("# ")[1].split("\n")[0] for a in trajectory.attempts] == [f"reply {k}" for k in range(4)]


def test_a_sample_in_flight_in_a_request_for_n_is_not_asked_for_again(tmp_path: Path) -> None:
    async def work(env: Env) -> tuple[str, str]:
        many, one = await asyncio.gather(
            env.generate_n("actor", ASK, HOT, n=4), env.generate("actor", ASK, HOT, sample=2)
        )
        return many.completions[2].text, one.text

    with serve(Numbered()) as server:
        (from_many, alone), _ = with_env(model_for(server, ResponseCache(tmp_path / "r.sqlite")), work)
        assert n_of(server) == [4]  # the single call waited for the request carrying its sample
    assert alone == from_many
