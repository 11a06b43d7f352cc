"""Estimating token counts when a server does not report them (the estimate is marked as such)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache

from refinelab.models._types import Message, Usage

_MESSAGE_OVERHEAD = 4
"""Tokens a chat template adds per message (role markers), as OpenAI documents for its models."""


@lru_cache(maxsize=8)
def _tiktoken_counter(model: str) -> Callable[[str], int] | None:
    """tiktoken's encoder for OpenAI models, if tiktoken is installed and has its encoding available."""
    try:
        import tiktoken  # type: ignore[import-not-found]

        encoding = tiktoken.encoding_for_model(model)
    except Exception:  # noqa: BLE001 - not installed, unknown model, or its files cannot be fetched
        return None
    return lambda text: len(encoding.encode(text))


def _rough(text: str) -> int:
    """About four characters per token for English and code: the usual rule of thumb."""
    return max(1, (len(text) + 3) // 4) if text else 0


def estimate_usage(model: str, messages: Sequence[Message], completion: str) -> Usage:
    """Estimated usage: tiktoken for OpenAI models where available, else the 4-characters rule."""
    provider, _, name = model.partition(":")
    counter = _tiktoken_counter(name) if provider == "openai" else None
    count = counter or _rough
    prompt = sum(count(m.content) + _MESSAGE_OVERHEAD for m in messages)
    return Usage(prompt, count(completion), 0, estimated=True)


def count_tokens(model: str, text: str) -> int:
    """Tokens of ``text`` as :func:`estimate_usage` counts them."""
    provider, _, name = model.partition(":")
    counter = _tiktoken_counter(name) if provider == "openai" else None
    return (counter or _rough)(text)


def with_reasoning_counted(model: str, usage: Usage, reasoning: Sequence[str]) -> Usage:
    """``usage`` with its reasoning tokens counted from the thinking texts of its samples (at most the completion
    tokens, which include them), marked estimated: for servers that return the thinking but do not count it."""
    thought = min(sum(count_tokens(model, text) for text in reasoning), usage.completion_tokens)
    return replace(usage, reasoning_tokens=thought, estimated=True)


def split_usage(usage: Usage, n: int) -> list[Usage]:
    """One request's usage shared among its ``n`` samples, exactly: each count divided evenly, the
    remainder going one token each to the first samples, so the shares add up to the request's usage
    (servers report one ``usage`` block for all choices of a request: the prompt once, the completions
    summed)."""
    prompts, completions, cached, thought = (_shares(count, n) for count in _counts(usage))
    return [Usage(p, c, k, usage.estimated, r) for p, c, k, r in zip(prompts, completions, cached, thought)]


def _counts(usage: Usage) -> tuple[int, int, int, int]:
    return usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens, usage.reasoning_tokens


def _shares(count: int, n: int) -> list[int]:
    base, extra = divmod(count, n)
    return [base + (1 if i < extra else 0) for i in range(n)]
