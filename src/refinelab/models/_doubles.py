"""Test doubles shipped with the library: models that answer from a script or a function.

They go through :class:`Model` like any backend, so usage, cost, retries and caching behave as for a
real server. Token counts are whitespace-separated words (exact for the double, not estimated).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence

from refinelab.models._model import Model
from refinelab.models._types import GenerateConfig, Message, Reply, Usage

Matcher = Callable[[Sequence[Message]], bool]
"""Chooses a scripted reply by looking at the request."""


def _usage(messages: Sequence[Message], text: str) -> Usage:
    return Usage(sum(len(m.content.split()) for m in messages), len(text.split()))


class _ScriptBackend:
    def __init__(self, replies: Iterable[str], rules: Sequence[tuple[Matcher, str]], name: str) -> None:
        self.endpoint = f"scripted://{name}"
        self.model = f"scripted:{name}"
        self.queue = deque(replies)
        self.rules = list(rules)
        self.requests: list[list[Message]] = []

    async def complete(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
        self.requests.append(list(messages))
        return [self._one(messages) for _ in range(n)]

    def _one(self, messages: Sequence[Message]) -> Reply:
        for matches, text in self.rules:
            if matches(messages):
                return Reply(text, _usage(messages, text), "stop")
        if not self.queue:
            raise AssertionError(f"ScriptedModel ran out of replies at request {len(self.requests)}")
        text = self.queue.popleft()
        return Reply(text, _usage(messages, text), "stop")


class ScriptedModel(Model):
    """Answers with queued replies, in order; ``rules`` (matcher, reply) are tried first.

    ``model.requests`` lists every request it received.
    """

    def __init__(
        self, replies: Iterable[str] = (), *, rules: Sequence[tuple[Matcher, str]] = (), name: str = "scripted"
    ) -> None:
        self._script = _ScriptBackend(replies, rules, name)
        super().__init__(self._script)

    @property
    def requests(self) -> list[list[Message]]:
        """Every request received, in order."""
        return self._script.requests


class _FunctionBackend:
    def __init__(self, function: Callable[[Sequence[Message], GenerateConfig], str], name: str) -> None:
        self.endpoint = f"function://{name}"
        self.model = f"function:{name}"
        self.function = function

    async def complete(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
        texts = [self.function(messages, config) for _ in range(n)]
        return [Reply(text, _usage(messages, text), "stop") for text in texts]


class FunctionModel(Model):
    """Answers with whatever ``function(messages, config)`` returns."""

    def __init__(self, function: Callable[[Sequence[Message], GenerateConfig], str], *, name: str = "function") -> None:
        super().__init__(_FunctionBackend(function, name))
