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

    def merge(self, override: GenerateConfig) -> GenerateConfig:
        """These settings with every field that ``override`` sets (not ``None``/empty) replaced."""
        changes = {
            f.name: getattr(override, f.name) for f in fields(self) if getattr(override, f.name) not in (None, ())
        }
        return replace(self, **changes)

    def key(self) -> dict[str, object]:
        """The settings as a JSON-ready dict (part of the cache key)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def with_schema(cls, schema: Mapping[str, object], **settings: object) -> GenerateConfig:
        """Settings asking for output that follows ``schema``."""
        return cls(json_schema=json.dumps(schema, sort_keys=True), **settings)  # type: ignore[arg-type]


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

    @property
    def spend(self) -> Spend:
        """Tokens and dollars of this call."""
        return Spend(self.usage, self.cost_usd)
