"""A reply's thinking taken apart from its answer: code and verdicts are read from the answer only.

Servers return a reasoning model's thinking in a field of the message (``reasoning_content``: vLLM before
0.11, SGLang, llama.cpp, DeepSeek; ``reasoning``: vLLM since, Ollama) or, without a reasoning parser,
inside the text as a ``<think>...</think>`` block. A chat template that opens the block itself (DeepSeek-R1
distills, Qwen3 thinking models) leaves only the closing tag in the text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Message fields that carry the thinking, in the order they are read."""
_BLOCK = re.compile(r"\A\s*<think>(.*?)(?:</think>|\Z)", re.DOTALL)
_CLOSE = "</think>"


def split_thinking(text: str, *, opens_thinking: bool = False, cut_off: bool = False) -> tuple[str, str | None]:
    """``(answer, thinking)`` of a reply's text: a leading ``<think>`` block is taken out (an unclosed one is
    all thinking: the reply ran out of tokens while thinking); with ``opens_thinking`` (the template opened the
    block), text before a lone ``</think>`` is thinking too, and so is all of a reply ``cut_off`` (it hit the
    token cap, thinking on) before any ``</think>``. ``thinking`` is ``None`` when there was none (an empty
    block included: thinking turned off writes one)."""
    found = _BLOCK.match(text)
    if found is not None:
        return text[found.end() :].lstrip("\n"), found.group(1).strip("\n") or None
    if opens_thinking and "<think>" not in text and (_CLOSE in text or cut_off):
        thinking, _, answer = text.partition(_CLOSE)
        return answer.lstrip("\n"), thinking.strip("\n") or None
    return text, None


def message_thinking(message: Mapping[str, object]) -> str | None:
    """The thinking a server put in a message field (the first non-empty of :data:`REASONING_FIELDS`)."""
    for name in REASONING_FIELDS:
        value = message.get(name)
        if isinstance(value, str) and value:
            return value
    return None
