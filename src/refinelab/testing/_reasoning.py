"""How :class:`~refinelab.testing.FakeOpenAI` behaves as a reasoning model's server: which request fields it
refuses, with the error bodies the real server sends, and how much it thinks at each effort.

Two behaviours ship (:data:`OPENAI_REASONING`, :data:`VLLM_THINKING`); a test may build its own record.

- OpenAI's reasoning models (o1, o3, o4-mini, GPT-5) refuse ``max_tokens`` (they take
  ``max_completion_tokens``), a temperature other than 1, ``top_p``, the penalties, ``logprobs`` and ``stop``,
  each with a 400 whose body names the parameter (``param``) and says why (``code``
  ``unsupported_parameter`` or ``unsupported_value``); fields they do not know are refused too. They take
  ``reasoning_effort`` (low, medium, high), never return the thinking, and count it in
  ``usage.completion_tokens_details.reasoning_tokens`` (part of ``completion_tokens``).
- vLLM serving a thinking model (Qwen3) takes every sampling setting, turns thinking off with
  ``chat_template_kwargs.enable_thinking = false``, caps it with ``thinking_token_budget`` (or the template's
  ``thinking_budget``), and returns it in ``reasoning_content`` (or inside the text as a ``<think>`` block, as
  a server without a reasoning parser does), counting no reasoning tokens of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

ErrorBody = tuple[int, dict[str, object]]
"""An HTTP status and the JSON body sent with it."""

OPENAI_REFUSED = ("top_p", "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs", "stop")
"""Parameters OpenAI's reasoning models refuse outright."""
OPENAI_FIELDS = frozenset(
    {"model", "messages", "n", "seed", "temperature", "max_completion_tokens", "response_format", "reasoning_effort",
     "store", "metadata", "user", "stream", "service_tier", "tools", "tool_choice", "parallel_tool_calls",
     *OPENAI_REFUSED, "max_tokens"}
)  # fmt: skip
"""Request fields OpenAI's chat completions know (any other is an unrecognized argument)."""


@dataclass(frozen=True)
class ReasoningMimic:
    """A reasoning model's server, as the fake plays it."""

    kind: Literal["openai", "vllm"]
    """Whose rules: OpenAI's reasoning models, or vLLM serving a thinking model."""
    thinking: Mapping[str, int] = field(default_factory=lambda: {"low": 24, "medium": 96, "high": 384})
    """Tokens (words) of thinking at each effort; a request's own share is added (see :func:`thought`)."""
    default_effort: str = "medium"
    """The effort of a request that names none."""
    where: Literal["reasoning_content", "reasoning", "inline", "opened"] = "reasoning_content"
    """vLLM: the message field the thinking goes in, or ``inline``: a ``<think>`` block in the text, or
    ``opened``: in the text after a block the chat template opened (DeepSeek-R1 distills), ended by ``</think>``
    alone."""
    spread: int = 0
    """vLLM: choice ``i`` of a request thinks ``i x spread`` tokens more than the first (samples differ)."""
    misplaces_answer: bool = False
    """vLLM: with thinking turned off, the answer comes in the thinking field and ``content`` is null (its
    ``deepseek_r1`` reasoning parser serving Qwen3 with ``enable_thinking = false``: vllm issue 19222)."""
    reports_zero: bool = False
    """vLLM: the usage says ``completion_tokens_details.reasoning_tokens = 0`` whatever it thought (servers and
    gateways that fill the field without counting, or count only between tags a template opened itself)."""
    names_the_cap: bool = True
    """OpenAI: a refused ``max_tokens`` says "Use 'max_completion_tokens' instead" (False: it only refuses, as
    servers that copy OpenAI's rules may)."""

    def refusal(self, body: Mapping[str, Any]) -> ErrorBody | None:
        """The 400 this server sends for ``body``, or ``None`` when it takes it."""
        return _openai_refusal(body, names_the_cap=self.names_the_cap) if self.kind == "openai" else None

    def thought(self, body: Mapping[str, Any]) -> int:
        """Tokens of thinking for this request: the effort's, plus a part that depends on the prompt (so two
        problems differ), capped by a budget where the request gives one; 0 with thinking turned off."""
        kwargs = body.get("chat_template_kwargs") or {}
        if self.kind == "vllm" and kwargs.get("enable_thinking") is False:
            return 0
        effort = str(body.get("reasoning_effort") or self.default_effort)
        words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        tokens = self.thinking.get(effort, self.thinking[self.default_effort]) + words % 17
        budget = body.get("thinking_token_budget", kwargs.get("thinking_budget"))
        return min(tokens, int(budget)) if self.kind == "vllm" and budget is not None else tokens


OPENAI_REASONING = ReasoningMimic("openai")
"""OpenAI's reasoning models (o4-mini's rules)."""
VLLM_THINKING = ReasoningMimic("vllm", thinking={"medium": 200})
"""vLLM serving Qwen3 with a reasoning parser (thinking in ``reasoning_content``); a budget caps it."""


def _error(message: str, param: str | None, code: str | None) -> ErrorBody:
    return 400, {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def _openai_refusal(body: Mapping[str, Any], *, names_the_cap: bool = True) -> ErrorBody | None:
    unknown = sorted(set(body) - OPENAI_FIELDS)
    if unknown:
        return _error(f"Unrecognized request argument supplied: {unknown[0]}", None, None)
    if "max_tokens" in body:
        said = "Unsupported parameter: 'max_tokens' is not supported with this model."
        said += " Use 'max_completion_tokens' instead." if names_the_cap else ""
        return _error(said, "max_tokens", "unsupported_parameter")
    temperature = body.get("temperature")
    if temperature is not None and temperature != 1:
        said = (
            f"Unsupported value: 'temperature' does not support {temperature} with this model. Only the default (1) "
            "value is supported."
        )
        return _error(said, "temperature", "unsupported_value")
    for name in OPENAI_REFUSED:
        if name in body:
            said = f"Unsupported parameter: '{name}' is not supported with this model."
            return _error(said, name, "unsupported_parameter")
    effort = body.get("reasoning_effort")
    if effort is not None and effort not in ("low", "medium", "high"):
        said = (
            f"Unsupported value: 'reasoning_effort' does not support '{effort}' with this model. Supported values "
            "are: 'low', 'medium', and 'high'."
        )
        return _error(said, "reasoning_effort", "unsupported_value")
    return None


def thinking_text(tokens: int) -> str:
    """A thinking section of ``tokens`` words, of three letters each: about one token each by the four
    characters a token rule refinelab counts unreported thinking with."""
    return " ".join(["hmm"] * tokens)


def with_thinking(mimic: ReasoningMimic, body: Mapping[str, Any], choice: dict[str, Any], text: str) -> tuple[int, int]:
    """Put the thinking of one choice where ``mimic``'s server puts it: its tokens and the answer's (words).
    The cap (OpenAI's ``max_completion_tokens``, vLLM's ``max_tokens``) counts both, thinking first: a reply
    that ran out while thinking has no answer (``finish_reason`` ``length``), as the real servers' do."""
    tokens, visible = mimic.thought(body) + mimic.spread * int(choice.get("index", 0)), len(text.split())
    cap = body.get("max_completion_tokens" if mimic.kind == "openai" else "max_tokens")
    if cap is not None and tokens + visible > int(cap):
        tokens, visible = min(tokens, int(cap)), max(0, int(cap) - tokens)
        text = choice["message"]["content"] = " ".join(text.split()[:visible])
        choice["finish_reason"] = "length"
    if mimic.kind == "vllm" and mimic.misplaces_answer and _thinking_off(body):
        choice["message"].update({mimic.where: text, "content": None})
    if mimic.kind == "openai" or tokens == 0:
        return tokens, visible
    ended = visible > 0 or choice["finish_reason"] != "length"
    _place(mimic.where, choice["message"], thinking_text(tokens), text, ended=ended)
    return tokens, visible


def _thinking_off(body: Mapping[str, Any]) -> bool:
    return (body.get("chat_template_kwargs") or {}).get("enable_thinking") is False


def _place(where: str, message: dict[str, Any], thought: str, text: str, *, ended: bool) -> None:
    """The thinking in its field, or in the text: closed by ``</think>`` where it ``ended`` before the cap."""
    answer = f"\n</think>\n\n{text}" if ended else ""
    if where == "inline":
        message["content"] = f"<think>\n{thought}{answer}"
    elif where == "opened":
        message["content"] = f"{thought}{answer}"
    else:
        message[where] = thought
