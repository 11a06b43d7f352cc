"""``Model``: retries, caching, concurrency and accounting, once, over a one-method ``Backend``."""

from __future__ import annotations

import asyncio
import functools
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from refinelab.errors import CacheMiss, EndpointError, EndpointFailed, NotSupported, TransientError
from refinelab.models._cache import ResponseCache, cache_key
from refinelab.models._limits import EndpointLimits
from refinelab.models._prices import PriceTable
from refinelab.models._profiles import Accepts, profile_for
from refinelab.models._tokens import count_tokens, estimate_usage, split_usage
from refinelab.models._types import Completion, GenerateConfig, Message, NotSent, Reply, Retry, Usage
from refinelab.records import Spend

_MAX_REFUSALS = 8
"""Tries of one request, each without what the server refused before (more means it refuses anything)."""
MAX_N = 128
"""Samples asked for in one request at most (OpenAI rejects a larger ``n``): more are split into several
requests of at most this many, sent concurrently."""


class Backend(Protocol):
    """Something that turns messages into replies; everything else lives in :class:`Model`.

    Raise :class:`TransientError` for what may succeed on retry, :class:`NotSupported` when the server
    rejects ``n`` > 1 or structured output, and :class:`EndpointError` when the request cannot succeed.
    """

    endpoint: str
    """Identity of the server (its base URL); concurrency limits are per endpoint."""
    model: str
    """``provider:name``. A backend may also have an ``identity`` attribute: what determines its replies when
    the name does not (the local backend's file hash); the response cache then keys on it instead. A backend
    with ``batches_requests = True`` (the local engine) decodes concurrent requests together itself: it is
    sent one request per sample, so each sample is cached as soon as it is done. Whatever the backend, a
    request for samples *i* onwards of a seeded request carries the seed ``seed + i``."""

    async def complete(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
        """``n`` replies to ``messages``."""


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter; a server's ``Retry-After`` wins."""

    attempts: int = 6
    """Attempts in all, the first included."""
    base_seconds: float = 0.5
    """Wait after the first failure (doubles each time)."""
    max_seconds: float = 30.0
    """Longest wait."""
    jitter: float = 0.5
    """Up to this fraction is added at random, so clients do not retry in lockstep."""

    def wait(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_seconds)
        delay: float = min(self.max_seconds, self.base_seconds * 2.0 ** (attempt - 1))
        return delay * (1.0 + self.jitter * random.random())  # noqa: S311 - jitter, not cryptography


@dataclass
class Accounting:
    """What a Model has spent so far."""

    calls: int = 0
    """Successful requests sent (cache hits excluded)."""
    cache_hits: int = 0
    """Replies served from the cache."""
    retries: int = 0
    """Failed attempts that were retried."""
    failures: int = 0
    """Calls that ended as :class:`EndpointFailed`."""
    usage: Usage = field(default_factory=Usage)
    """Tokens of every reply returned, cached or not."""
    cost_usd: float | None = 0.0
    """Cost of the replies returned; ``None`` once any had an unknown price."""

    def add(self, spend: Spend) -> None:
        """Count a reply's tokens and dollars."""
        total = Spend(self.usage, self.cost_usd) + spend
        self.usage, self.cost_usd = total.usage, total.cost_usd


class Model:
    """A model: ``await model.generate(messages, config)``.

    Retries transient failures with backoff (recording every retry), caps requests in flight per
    endpoint, serves repeated requests from the cache, and accounts usage and cost.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        concurrency: int = 16,
        retry: RetryPolicy | None = None,
        cache: ResponseCache | None = None,
        prices: PriceTable | None = None,
        deployment: str = "",
    ) -> None:
        self.backend = backend
        self.name = backend.model
        self.identity: str = getattr(backend, "identity", None) or backend.model
        """What the response cache keys on with the deployment tag: the model string, or what the backend
        says determines its replies (a local model's file hash, never its path)."""
        self.deployment = deployment
        """A tag separating deployments of one model name in the response cache ("" for none)."""
        self.concurrency = concurrency
        """Requests in flight to this model's endpoint, at most."""
        self.limits = EndpointLimits()
        """Where the cap on requests in flight is kept: models holding one object share it (a runtime gives
        every model it opens its own, so two models of one endpoint keep one cap)."""
        self.retry = retry or RetryPolicy()
        self.cache = cache
        self.cached_from: frozenset[str] | None = None
        """When set, a cached reply is taken only if one of these endpoints gave it (``Backend.endpoint``
        as the cache records it): a fresh run's role whose server changed asks its own server again
        rather than take the other server's answers. ``None``: any reply for the request."""
        self.prices = prices or PriceTable()
        self.accounting = Accounting()
        self._unsupported: set[str] = set()
        self.accepts: Accepts = getattr(backend, "accepts", None) or Accepts(profile_for(backend.model))
        """What the model takes: its profile (``refinelab.models._profiles``) and what its server refused so
        far (learned once, then left out of every request and recorded as not sent); its backend's own."""
        self._per_sample = bool(getattr(backend, "batches_requests", False))
        if self._per_sample:
            self._unsupported.add("n")  # one request a sample: the backend batches them
        self._in_flight: dict[str, asyncio.Future[None]] = {}
        self._answered = False

    async def generate(
        self, messages: Sequence[Message], config: GenerateConfig | None = None, *, sample: int = 0
    ) -> Completion:
        """One completion; ``sample`` distinguishes samples of the same request (it is in the cache key)."""
        (completion,) = await self.generate_n(messages, config, n=1, first_sample=sample)
        return completion

    async def generate_n(
        self, messages: Sequence[Message], config: GenerateConfig | None = None, *, n: int, first_sample: int = 0
    ) -> list[Completion]:
        """``n`` samples (indices ``first_sample`` ...): one request with ``n`` where the server allows it,
        else one request each. Each sample is cached under the key ``generate(..., sample=i)`` uses, so the
        two ways of asking answer from each other's cache; cached samples are not requested again.

        With a read-write cache, a request for a sample already in flight waits for it and is answered from
        the cache: concurrent strategies that share a first draft make one call, not two.
        """
        config = config or GenerateConfig()
        samples = list(range(first_sample, first_sample + n))
        caching = self.cache is not None
        wire = self.accepts.profile.key() if _changes_requests(self.accepts) else None
        keyed = functools.partial(cache_key, self.deployment, self.identity, messages, config)
        keys = {s: keyed(s, wire) for s in samples} if caching else {}
        if self.cache is None or self.cache.mode != "rw":
            return await self._draw(messages, config, samples, keys)
        while leaders := {f for k in keys.values() if (f := self._in_flight.get(k)) is not None}:
            await asyncio.wait(leaders)  # their outcome is in the cache (or they failed and we ask ourselves)
        done = asyncio.get_running_loop().create_future()
        self._in_flight.update(dict.fromkeys(keys.values(), done))
        try:
            return await self._draw(messages, config, samples, keys)
        finally:
            for key in keys.values():
                del self._in_flight[key]
            done.set_result(None)

    async def _draw(
        self, messages: Sequence[Message], config: GenerateConfig, samples: list[int], keys: dict[int, str]
    ) -> list[Completion]:
        found = {s: self._cached(messages, keys[s], s) if keys else None for s in samples}
        missing = [s for s in samples if found[s] is None]
        fresh = await self._request_samples(messages, config, missing, keys) if missing else {}
        return [found[s] or fresh[s] for s in samples]

    def generate_sync(self, messages: Sequence[Message], config: GenerateConfig | None = None) -> Completion:
        """:meth:`generate` for code that is not async (runs its own event loop, closes its connections)."""

        async def once() -> Completion:
            async with self:
                return await self.generate(messages, config)

        return asyncio.run(once())

    async def aclose(self) -> None:
        """Close the backend's connections for the running event loop (if it holds any)."""
        close = getattr(self.backend, "aclose", None)
        if close is not None:
            await close()

    async def __aenter__(self) -> Model:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _cached(self, messages: Sequence[Message], key: str, sample: int) -> Completion | None:
        if self.cache is None or self.cache.mode == "off":
            return None
        found = self.cache.lookup(key, endpoints=self.cached_from)
        if found is None:
            if self.cache.mode == "ro":
                raise CacheMiss(f"replay mode: no cached response for a request to {self.name} (sample {sample})")
            return None
        self.accounting.cache_hits += 1
        reply, latency = found
        return self._completion(reply, messages, sample, latency, (), cached=True)

    async def _request_samples(
        self, messages: Sequence[Message], config: GenerateConfig, samples: list[int], keys: dict[int, str]
    ) -> dict[int, Completion]:
        fresh = await self._in_chunks(messages, config, samples, keys) if len(samples) > 1 else {}
        missing = [s for s in samples if s not in fresh]  # one request each where ``n`` was refused
        alone = await asyncio.gather(*(self._call(messages, config, [s], keys) for s in missing))
        fresh.update((s, completions[0]) for s, completions in zip(missing, alone))
        return fresh

    async def _in_chunks(
        self, messages: Sequence[Message], config: GenerateConfig, samples: list[int], keys: dict[int, str]
    ) -> dict[int, Completion]:
        """The samples in requests of at most :data:`MAX_N` each, sent together; those of a request the
        server refused for its ``n`` are left out (and ``n`` is not asked for again)."""
        if "n" in self._unsupported or not self.accepts.profile.takes_n:
            return {}
        chunks = [samples[start : start + MAX_N] for start in range(0, len(samples), MAX_N)]
        done = await asyncio.gather(*(self._call(messages, config, c, keys) for c in chunks), return_exceptions=True)
        fresh: dict[int, Completion] = {}
        for chunk, answer in zip(chunks, done):
            if isinstance(answer, NotSupported):
                self._unsupported.add("n")
            elif isinstance(answer, BaseException):
                raise answer
            else:
                fresh.update(zip(chunk, answer))
        return fresh

    async def _call(
        self, messages: Sequence[Message], config: GenerateConfig, samples: list[int], keys: dict[int, str]
    ) -> list[Completion]:
        """One request for ``samples`` (``n`` = their number); each reply cached under its sample's key,
        with the request's latency (see docs/design/models.md, "Several samples in one request")."""
        retries: list[Retry] = []
        sent = self._seeded(config, samples[0])  # each request's own seed: not one seed sent n times
        async with self.limits.slot(self.backend.endpoint, self.concurrency):
            replies, latency = await self._attempts(messages, sent, len(samples), retries)
        if len(replies) != len(samples):
            got = f"{len(replies)} replies for n={len(samples)}"
            raise EndpointError(f"{self.name} at {self.backend.endpoint} gave {got}")
        replies = self._with_usage(messages, replies)
        completions = []
        for sample, reply in zip(samples, replies):
            took = latency if reply.latency_seconds is None else reply.latency_seconds
            if self.cache is not None:
                self.cache.put(keys[sample], self.backend.endpoint, self.name, reply, took)
            completions.append(self._completion(reply, messages, sample, took, tuple(retries)))
        self.accounting.calls += 1
        return completions

    @staticmethod
    def _seeded(config: GenerateConfig, sample: int) -> GenerateConfig:
        """The settings sent for a request whose first sample is ``sample``: a seeded request's seed moved on
        by that index, so the requests of one-request-a-sample (a server that refuses ``n``, a profile that
        does not take it, the local engine) or of ``n`` in chunks never send one seed twice: a server that
        honours seeds (vLLM) would answer each the same."""
        return config if config.seed is None else replace(config, seed=config.seed + sample)

    def _with_usage(self, messages: Sequence[Message], replies: list[Reply]) -> list[Reply]:
        """The replies, those the server gave no usage for with an estimate (marked so, and cached with the
        reply): the prompt is estimated once and shared among the request's samples, as a server reports it,
        so ``n`` samples of one request never count the prompt ``n`` times."""
        if all(reply.usage is not None for reply in replies):
            return replies
        prompt = split_usage(estimate_usage(self.name, messages, ""), len(replies))
        return [
            reply if reply.usage is not None else replace(reply, usage=share + self._estimated_output(reply))
            for reply, share in zip(replies, prompt)
        ]

    def _estimated_output(self, reply: Reply) -> Usage:
        """The estimated output of a reply without usage: its answer and its thinking, if it returned any."""
        output = estimate_usage(self.name, (), reply.text)
        if not reply.reasoning:
            return output
        thought = count_tokens(self.name, reply.reasoning)
        return replace(output, completion_tokens=output.completion_tokens + thought, reasoning_tokens=thought)

    async def _attempts(
        self, messages: Sequence[Message], config: GenerateConfig, n: int, retries: list[Retry]
    ) -> tuple[list[Reply], float]:
        """Try until a reply, a non-retryable error, or the last attempt."""
        for attempt in range(1, self.retry.attempts + 1):
            started = time.perf_counter()
            try:
                replies = await self._without_refused(messages, config, n)
            except TransientError as exc:
                # a server that never answered is reported at once: nothing listening, unknown host, bad
                # address; one that has answered before may be restarting, so that is retried
                if attempt == self.retry.attempts or (exc.connection and not self._answered):
                    self._give_up(exc, retries)
                wait = self.retry.wait(attempt, exc.retry_after)
                retries.append(Retry(attempt, exc.reason, wait))
                self.accounting.retries += 1
                await asyncio.sleep(wait)
                continue
            self._answered = True
            return replies, time.perf_counter() - started
        raise AssertionError("unreachable: the loop returns or raises")

    async def _without_refused(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
        """The backend's replies, asked again without each setting the server refuses (learned once, recorded
        on the replies as not sent); a refused ``n`` is the caller's to handle."""
        for _ in range(_MAX_REFUSALS):
            sent, not_sent = self._supported(config)
            try:
                replies = await self.backend.complete(messages, sent, n)
            except NotSupported as exc:
                if exc.feature == "n":
                    raise
                self._learn(exc)
                continue
            return [replace(reply, not_sent=not_sent) for reply in replies] if not_sent else replies
        raise EndpointError(f"{self.backend.endpoint} kept refusing settings of a request to {self.name}")

    def _supported(self, config: GenerateConfig) -> tuple[GenerateConfig, tuple[NotSent, ...]]:
        """The settings to send and those left out (the profile's and the server's refusals, recorded on the
        replies); structured output is dropped where the server refused it (callers parse the text)."""
        config, not_sent = self.accepts.prepare(self.name, config)
        if config.json_schema is not None and "json_schema" in self._unsupported:
            return replace(config, json_schema=None), not_sent
        return config, not_sent

    def _learn(self, refusal: NotSupported) -> None:
        """Remember what the server refused, for this request's next try and every later request."""
        if refusal.feature == "json_schema":  # callers parse the text instead
            self._unsupported.add("json_schema")
        elif refusal.rename is not None:
            self.accepts.token_limit = refusal.rename  # type: ignore[assignment]
        elif refusal.feature == "max_tokens" and refusal.value is None and self.accepts.try_other_limit():
            return  # the cap goes in the other field next time
        else:
            self.accepts.learn(refusal.feature, refusal.value, f"{self.backend.endpoint} refused it: {refusal.reason}")

    def _give_up(self, error: TransientError, retries: list[Retry]) -> None:
        self.accounting.failures += 1
        if error.connection and not self._answered:
            raise EndpointError(
                f"cannot reach {self.backend.endpoint} for {self.name}: {error.reason}; check the address, "
                "and that the server is running there (vLLM, Ollama, llama.cpp), or pass --base-url"
            )
        raise EndpointFailed(
            f"{self.name} at {self.backend.endpoint} failed {len(retries) + 1} times (last: {error.reason})",
            len(retries),
        )

    def _completion(
        self,
        reply: Reply,
        messages: Sequence[Message],
        sample: int,
        latency: float,
        retries: tuple[Retry, ...],
        *,
        cached: bool = False,
    ) -> Completion:
        usage = reply.usage or estimate_usage(self.name, messages, reply.text)
        cost = self.prices.cost(self.name, usage)
        self.accounting.add(Spend(usage, cost))
        return Completion(
            reply.text, usage, latency, reply.finish_reason, self.name, cost,
            sample=sample, cached=cached, retries=retries, raw=reply.raw, reasoning=reply.reasoning,
            not_sent=reply.not_sent,
        )  # fmt: skip


def _changes_requests(accepts: Accepts) -> bool:
    """The model's profile changes what is sent (a reasoning model, a refused setting, another cap field):
    its rules join the response cache key, so another rule never answers from a reply sent under the old one.
    Models whose requests go as asked keep the keys they always had."""
    profile = accepts.profile
    return profile.reasons or bool(profile.refuses) or profile.token_limit in _RENAMED


_RENAMED = ("max_completion_tokens",)
"""Cap fields other than the plain ``max_tokens``."""
