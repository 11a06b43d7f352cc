"""Thinking on, off, or within a budget, for a thinking model run in-process (``local:``): what the local
backend calls instead of a plain chat completion when a request asks for a reasoning effort.

- Off (effort ``none``): the prompt the chat template wrote gets an empty, closed thinking section after the
  generation prompt, as Qwen3's own template writes it for ``enable_thinking=false`` (a template that opened
  the section itself gets only its closing tag), so the model answers at once.
- On with a budget (a level's thinking tokens, or a number): the model thinks until it closes the section or
  the budget runs out; then the section is closed for it and it answers with the tokens left. This is
  "budget forcing" (s1, Muennighoff et al. 2025), done as two completions of the raw prompt, so it works with
  any llama.cpp build and needs nothing of the decode loop.
- On without a budget: the template's prompt as it is.

The reply comes back as a chat completion whose text is the thinking section followed by the answer; the
backend's usual reply reading takes the thinking out (:func:`refinelab.models._thinking.split_thinking`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from refinelab.models._profiles import ModelProfile, thinking_budget

Complete = Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any]]]
"""A raw completion: the prompt and its settings in (``max_tokens``, ``stop``, ``grammar`` and the backend's
own), its OpenAI-shaped completion out."""
OPEN, CLOSE = "<think>", "</think>"


@dataclass(frozen=True)
class ThinkingPlan:
    """How a request's thinking goes."""

    enabled: bool
    """The model thinks at all."""
    budget: int | None
    """Thinking tokens at most (``None``: no budget)."""


def thinking_plan(effort: str | None, profile: ModelProfile) -> ThinkingPlan | None:
    """The plan for ``effort`` on a thinking model (``None``: no effort asked, or a model that does not think,
    whose effort the model layer records as not sent)."""
    if effort is None or not profile.reasons:
        return None
    if effort == "none":
        return ThinkingPlan(enabled=False, budget=None)
    return ThinkingPlan(enabled=True, budget=thinking_budget(profile, effort))


def without_thinking(prompt: str) -> str:
    """The prompt with its thinking section written empty and closed, so the answer comes next."""
    if prompt.rstrip().endswith(OPEN):
        return f"{prompt.rstrip()}\n\n{CLOSE}\n\n"
    return f"{prompt}{OPEN}\n\n{CLOSE}\n\n"


async def generate_thinking(
    complete: Complete, prompt: str, settings: Mapping[str, Any], plan: ThinkingPlan
) -> dict[str, Any]:
    """A chat completion of ``prompt`` under ``plan`` (``settings``: llama-cpp-python's, ``max_tokens`` the cap
    of thinking and answer together)."""
    if not plan.enabled:
        return _as_chat(await complete(without_thinking(prompt), settings), "", 0)
    cap = int(settings.get("max_tokens") or 0)
    if plan.budget is None or (cap and plan.budget >= cap):
        return _as_chat(await complete(prompt, settings), "", 0)
    opened = prompt.rstrip().endswith(OPEN)
    start = "" if opened else f"{OPEN}\n"
    thinking = _first(await complete(prompt + start, _thinking_settings(settings, plan.budget)))
    thought, tokens = str(thinking["text"]), int(thinking["usage"]["completion_tokens"])
    section = f"{start}{thought.rstrip()}\n{CLOSE}\n\n"
    answer_settings = {**settings, "max_tokens": max(1, cap - tokens)} if cap else dict(settings)
    answer = await complete(prompt + section, answer_settings)
    chat = _as_chat(answer, section, tokens)
    chat["usage"]["prompt_tokens"] = thinking["usage"]["prompt_tokens"]  # the request's prompt, counted once
    chat["usage"]["total_tokens"] = chat["usage"]["prompt_tokens"] + chat["usage"]["completion_tokens"]
    chat["usage"]["completion_tokens_details"] = {"reasoning_tokens": tokens}
    return chat


def _thinking_settings(settings: Mapping[str, Any], budget: int) -> dict[str, Any]:
    """The thinking part: up to ``budget`` tokens, stopping where the model closes the section itself; no
    grammar (structured output constrains the answer, not the thinking)."""
    found = {k: v for k, v in settings.items() if k != "grammar"}
    return {**found, "max_tokens": budget, "stop": [CLOSE, *list(settings.get("stop") or [])]}


def _first(response: Mapping[str, Any]) -> dict[str, Any]:
    choice = response["choices"][0]
    return {"text": choice.get("text") or "", "finish_reason": choice.get("finish_reason"), "usage": response["usage"]}


def _as_chat(response: Mapping[str, Any], before: str, tokens_before: int) -> dict[str, Any]:
    """A raw completion as the chat completion llama-cpp-python would return, ``before`` (the thinking
    section already generated, ``tokens_before`` tokens) put in front of its text."""
    first = _first(response)
    usage = dict(first["usage"])
    usage["completion_tokens"] = int(usage["completion_tokens"]) + tokens_before
    usage["total_tokens"] = int(usage["prompt_tokens"]) + usage["completion_tokens"]
    message = {"role": "assistant", "content": before + str(first["text"])}
    return {"choices": [{"index": 0, "message": message, "finish_reason": first["finish_reason"]}], "usage": usage}
