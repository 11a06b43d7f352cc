"""Messages, generation settings, usage and completions: the data the model layer passes around."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Annotated, Literal

from annotated_types import Ge, Interval

from refinelab.records import Spend
from refinelab.records import Usage as Usage  # re-exported: the models layer has always offered it

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Role
    """Who speaks."""
    content: str
    """What they say."""

    @classmethod
    def system(cls, content: str) -> Message:
        """A system message."""
        return cls("system", content)

    @classmethod
    def user(cls, content: str) -> Message:
        """A user message."""
        return cls("user", content)

    @classmethod
    def assistant(cls, content: str) -> Message:
        """An assistant message."""
        return cls("assistant", content)


@dataclass(frozen=True)
class GenerateConfig:
    """Sampling settings; ``None`` means "the server's default"."""

    temperature: Annotated[float, Ge(0)] | None = None
    """Sampling temperature (the refinement studies use 0; LiveCodeBench 0.2)."""
    top_p: Annotated[float, Interval(gt=0, le=1)] | None = None
    """Nucleus sampling (LiveCodeBench: 0.95)."""
    max_tokens: Annotated[int, Ge(1)] | None = None
    """Longest completion."""
    seed: int | None = None
    """Sampling seed, where the server honours one."""
    stop: tuple[str, ...] = ()
    """Stop sequences."""
    json_schema: str | None = None
    """JSON Schema (as JSON text) for structured output; servers that cannot do it get a plain request
    and the caller parses the text (see ``refinelab.strategies`` parsing helpers)."""
    reasoning_effort: str | None = None
    """How long a reasoning model thinks: ``none``, ``minimal``, ``low``, ``medium``, ``high``, ``xhigh``, or a
    thinking-token budget written as a number (``"2048"``); sent the way the model's server takes it
    (see :mod:`refinelab.models._profiles`). ``None``: the model's default."""

    def merge(self, override: GenerateConfig) -> GenerateConfig:
        """These settings with every field that ``override`` sets (not ``None``/empty) replaced."""
        changes = {
            f.name: getattr(override, f.name) for f in fields(self) if getattr(override, f.name) not in (None, ())
        }
        return replace(self, **changes)

    def key(self) -> dict[str, object]:
        """The settings as a JSON-ready dict (part of the cache key). Settings added later than the first
        ones are left out while unset, so a request without them keeps the key it always had."""
        found = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in _LATER_SETTINGS:
            if found[name] is None:
                del found[name]
        return found

    @classmethod
    def with_schema(cls, schema: Mapping[str, object], **settings: object) -> GenerateConfig:
        """Settings asking for output that follows ``schema``."""
        return cls(json_schema=json.dumps(schema, sort_keys=True), **settings)  # type: ignore[arg-type]


_LATER_SETTINGS = ("reasoning_effort",)
"""Settings added after response caches were first written: left out of :meth:`GenerateConfig.key` while unset."""


@dataclass(frozen=True)
class NotSent:
    """A setting a request asked for that was not sent, because the model does not take it (its profile
    says so, or its server refused it once): the reply is what the model gives without it."""

    setting: str
    """The setting (``temperature``, ``top_p``, ``stop``, ``reasoning_effort``...)."""
    value: str
    """The value asked for, as text (``0.0``)."""
    reason: str
    """Why it was not sent, in words (the profile's rule, or the server's own refusal)."""

    def __str__(self) -> str:
        return f"{self.setting}={self.value}"

    @property
    def described(self) -> str:
        """``temperature=0.0: openai:o4-mini samples only at temperature 1 (model profile ...)``."""
        return f"{self}: {self.reason}"

    def to_json(self) -> list[str]:
        """``[setting, value, reason]``, as stored."""
        return [self.setting, self.value, self.reason]

    @classmethod
    def from_json(cls, item: object) -> NotSent:
        """A record from :meth:`to_json`'s list."""
        setting, value, reason = (str(part) for part in item)  # type: ignore[attr-defined]
        return cls(setting, value, reason)


@dataclass(frozen=True)
class Retry:
    """One failed attempt that was retried."""

    attempt: int
    """1 for the first attempt."""
    reason: str
    """What went wrong (``429``, ``500``, ``timeout``, ``connection``, ``malformed response``)."""
    wait_seconds: float
    """How long the layer waited before trying again."""


@dataclass(frozen=True)
class Reply:
    """What a backend returns for one choice."""

    text: str
    """The completion's text."""
    usage: Usage | None
    """Token counts as the server reported them; ``None`` when it did not."""
    finish_reason: str | None = None
    """Why generation stopped (``stop``, ``length``...)."""
    raw: dict[str, object] | None = field(default=None, compare=False, repr=False)
    """The server's response, JSON-ready."""
    reasoning: str | None = None
    """The model's thinking, where the server returned it (``reasoning_content``, ``reasoning``, or a
    ``<think>`` block taken out of the text); ``text`` is the answer alone."""
    not_sent: tuple[NotSent, ...] = ()
    """Settings the request asked for that were not sent (set by :class:`Model`, kept with a cached reply)."""
    latency_seconds: float | None = field(default=None, compare=False)
    """How long the backend worked on this reply, when it knows better than the request's wall time (the
    local engine: from the sequence's admission into a batch to its last token, without the time it queued
    for a slot); ``None``: the request's wall time is its latency."""


@dataclass(frozen=True)
class Completion:
    """A completion as the model layer returns it: text plus everything needed to account for it."""

    text: str
    """The completion's text."""
    usage: Usage
    """Tokens (reported, or estimated and marked so)."""
    latency_seconds: float
    """Wall time of the successful request (for a cache hit, that of the request that produced it:
    a resumed run reports the times it really took)."""
    finish_reason: str | None
    """Why generation stopped."""
    model: str
    """The model that answered (``provider:name``)."""
    cost_usd: float | None
    """Price of the call; ``None`` when the model's price is unknown (never a false 0)."""
    sample: int = 0
    """Index of this sample among samples of the same request (temperature > 0 sampling)."""
    cached: bool = False
    """True when it came from the response cache (no request was made)."""
    retries: tuple[Retry, ...] = ()
    """Failed attempts before this one succeeded."""
    raw: dict[str, object] | None = field(default=None, compare=False, repr=False)
    """The server's response."""
    reasoning: str | None = None
    """The model's thinking, where the server returned it; ``text`` is the answer alone."""
    not_sent: tuple[NotSent, ...] = ()
    """Settings asked for that were not sent to the model (see :class:`NotSent`)."""

    @property
    def spend(self) -> Spend:
        """Tokens and dollars of this call."""
        return Spend(self.usage, self.cost_usd)
