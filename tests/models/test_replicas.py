"""Several replicas of one model: the least-loaded healthy replica answers, a failing one is retried
elsewhere at once, and nothing about the run depends on how many replicas answered. Against in-process
backends first (exact), then against two real servers on 127.0.0.1, one of them killed mid-run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from refinelab.errors import EndpointError, InputError, TransientError, UserError
from refinelab.models import (
    GenerateConfig,
    Message,
    Model,
    ResponseCache,
    RetryPolicy,
    load_models_config,
    open_model,
    resolve,
)
from refinelab.models._replicas import ReplicaBackend
from refinelab.models._types import Reply, Usage

pytestmark = pytest.mark.usefixtures("http_client")  # both HTTP clients (tests/models/conftest.py)

FAST = RetryPolicy(attempts=4, base_seconds=0.01, max_seconds=0.05)


class Server:
    """An in-process replica: answers after ``delay``, or raises what ``failures`` holds next."""

    def __init__(self, name: str, delay: float = 0.0) -> None:
        self.endpoint = f"http://{name}/v1"
        self.model = "vllm:m"
        self.delay = delay
        self.failures: list[Exception] = []
        self.answered: list[str] = []
        self.in_flight = 0
        self.most = 0

    async def complete(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            if self.failures:
                raise self.failures.pop(0)
            self.answered.append(messages[-1].content)
            return [Reply(f"{self.endpoint}: {messages[-1].content}", Usage(1, 1), "stop")] * n
        finally:
            self.in_flight -= 1


def ask(model: Model, prompts: Sequence[str]) -> list[str]:
    async def main() -> list[str]:
        done = await asyncio.gather(*(model.generate([Message.user(p)]) for p in prompts))
        return [c.text for c in done]

    return asyncio.run(main())


def test_requests_go_to_the_least_loaded_replica() -> None:
    fast, slow = Server("fast", 0.01), Server("slow", 0.2)
    model = Model(ReplicaBackend([fast, slow], concurrency=4), concurrency=8, retry=FAST)
    ask(model, [f"q{i}" for i in range(40)])
    assert fast.most <= 4 and slow.most <= 4
    assert len(fast.answered) > 2 * len(slow.answered) > 0  # the fast one frees its slots sooner
    assert sorted(fast.answered + slow.answered) == sorted(f"q{i}" for i in range(40))


def test_equal_replicas_share_the_load() -> None:
    servers = [Server(name, 0.01) for name in "abc"]
    model = Model(ReplicaBackend(servers, concurrency=2), concurrency=6, retry=FAST)
    ask(model, [f"q{i}" for i in range(60)])
    assert all(15 <= len(s.answered) <= 25 for s in servers), [len(s.answered) for s in servers]


def test_a_failing_replica_is_retried_elsewhere_at_once_and_left_to_rest() -> None:
    sick, well = Server("sick"), Server("well")
    sick.failures = [TransientError("500")] * 3
    backend = ReplicaBackend([sick, well], concurrency=1)
    model = Model(backend, concurrency=2, retry=FAST)
    texts = ask(model, ["first", "second", "third"])
    assert all(text.startswith("http://well/v1") for text in texts)
    assert model.accounting.retries == 0  # the other replica answered: no wait, no retry counted
    assert backend.replicas[0].failures == 1 and backend.replicas[0].failing == 1  # resting after one failure
    assert sick.answered == [] and sorted(well.answered) == ["first", "second", "third"]


def test_when_every_replica_fails_the_model_waits_and_retries() -> None:
    one, two = Server("one"), Server("two")
    one.failures, two.failures = [TransientError("503")], [TransientError("503")]
    model = Model(ReplicaBackend([one, two], concurrency=1), concurrency=2, retry=FAST)
    (text,) = ask(model, ["hello"])
    assert text.endswith("hello") and model.accounting.retries == 1
    assert one.answered + two.answered == ["hello"]


def test_a_wrong_address_among_replicas_is_reported_if_none_ever_answers() -> None:
    refused = [Server("a"), Server("b")]
    for server in refused:
        server.failures = [TransientError("nothing is listening", connection=True)] * 5
    model = Model(ReplicaBackend(refused, concurrency=1), concurrency=2, retry=FAST)
    with pytest.raises(EndpointError, match=r"cannot reach http://a/v1, http://b/v1"):
        ask(model, ["hello"])


def test_a_rejected_request_is_not_tried_on_another_replica() -> None:
    bad, good = Server("bad"), Server("good")
    bad.failures = [EndpointError("refused the API key")]
    backend = ReplicaBackend([bad, good], concurrency=1)
    model = Model(backend, concurrency=2, retry=FAST)
    backend._turn = -1  # the first pick is the first replica
    with pytest.raises(EndpointError, match="refused the API key"):
        ask(model, ["hello"])
    assert good.answered == []


# --- configuration --------------------------------------------------------------------------------


def test_a_list_of_base_urls_is_replicas_with_concurrency_per_replica(tmp_path: Path) -> None:
    config = tmp_path / "refinelab.toml"
    config.write_text(
        '[models.endpoints."vllm:m"]\nbase_url = ["http://gpu-1:8000/v1", "http://gpu-2:8000/v1"]\nconcurrency = 3\n'
    )
    models = load_models_config(config)
    spec = resolve("vllm:m", {}, config=models)
    assert spec.base_urls == ("http://gpu-1:8000/v1", "http://gpu-2:8000/v1") and spec.base_url == spec.base_urls[0]
    model = open_model("vllm:m", {}, config=models)
    assert isinstance(model.backend, ReplicaBackend) and model.concurrency == 6
    assert [r.limit for r in model.backend.replicas] == [3, 3]
    single = open_model("vllm:m", {}, base_url="http://one:8000/v1", config=models)
    assert not isinstance(single.backend, ReplicaBackend) and single.concurrency == 3
    assert resolve("vllm:m", {}, base_url=["http://x:1/v1", "http://y:2/v1"]).replicas == (
        "http://x:1/v1",
        "http://y:2/v1",
    )


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("[]", "must be a URL, or a list of URLs"),
        ('["http://a:1/v1", 3]', "a list of URLs"),
        ('["gpu:8000"]', "no scheme"),
    ],
)
def test_bad_replica_lists_name_the_field(tmp_path: Path, value: str, problem: str) -> None:
    config = tmp_path / "refinelab.toml"
    config.write_text(f'[models.endpoints."vllm:m"]\nbase_url = {value}\n')
    with pytest.raises(InputError, match=rf"models\.endpoints\.vllm:m\.base_url.*{problem}"):
        load_models_config(config)
    with pytest.raises(UserError, match="no scheme"):
        resolve("vllm:m", {}, base_url=["http://fine:1/v1", "gpu:8000"])


# --- two real servers, one killed mid-run ---------------------------------------------------------


def start_server(log: Path, delay: float) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "refinelab.testing._fake_server", "--delay", str(delay), "--log", str(log)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)


@pytest.fixture
def two_servers(tmp_path: Path) -> Iterator[tuple[list[str], list[subprocess.Popen[str]], list[Path]]]:
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    servers = [start_server(log, 0.05) for log in logs]
    try:
        urls = [server.stdout.readline().strip() for server in servers]  # type: ignore[union-attr]
        yield urls, servers, logs
    finally:
        for server in servers:  # only the servers this test started, by their PIDs
            if server.poll() is None:
                os.kill(server.pid, signal.SIGKILL)
            server.wait()
            server.stdout.close()  # type: ignore[union-attr]


def notes(log: Path, step: str) -> list[str]:
    """The prompts a server's log says it was ``"sending"`` or had ``"sent"`` in full (a line it is still
    writing is left out)."""
    if not log.exists():
        return []
    written = [json.loads(line) for line in log.read_text().splitlines(keepends=True) if line.endswith("\n")]
    return [prompt for said, prompt in written if said == step]


@pytest.mark.slow
def test_a_replica_killed_mid_run_loses_no_request_and_answers_none_twice(
    tmp_path: Path, two_servers: tuple[list[str], list[subprocess.Popen[str]], list[Path]]
) -> None:
    urls, servers, logs = two_servers
    prompts = [f"prompt {i}" for i in range(120)]
    cache = ResponseCache(tmp_path / "cache.sqlite")
    model = open_model("vllm:m", {}, base_url=urls, cache=cache, retry=RetryPolicy(attempts=6, base_seconds=0.05))

    async def main() -> list[str]:
        async with model:
            run = asyncio.gather(*(model.generate([Message.user(p)]) for p in prompts))
            while len(notes(logs[0], "sent")) < 10:
                await asyncio.sleep(0.01)
            os.kill(servers[0].pid, signal.SIGKILL)  # the first replica dies with requests in flight
            return [c.text for c in await run]

    texts = asyncio.run(main())
    assert texts == [f"echo: {p}" for p in prompts]
    answered = Counter(prompt for log in logs for prompt in notes(log, "sent"))
    assert max(answered.values()) == 1, "a request answered in full was sent again"
    cut = set(notes(logs[0], "sending")) - set(notes(logs[0], "sent"))  # the kill came while these went out
    assert set(prompts) - set(answered) <= cut, "a request was never answered"
    assert 10 <= len(notes(logs[0], "sent")) < len(prompts)  # the dead one had answered some
    replicas = model.backend.replicas  # type: ignore[attr-defined]
    assert replicas[0].failures >= 1 and replicas[1].answered > len(prompts) // 2

    # the cache key names no address: one server alone, in replay mode, finds every answer
    replay = ResponseCache(tmp_path / "cache.sqlite", mode="ro")
    alone = open_model("vllm:m", {}, base_url=urls[1], cache=replay)
    assert ask(alone, prompts) == texts and alone.accounting.cache_hits == len(prompts)
    cache.close()
    replay.close()
