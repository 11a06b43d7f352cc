"""Thinking on, off and within a budget for in-process models, over a scripted raw completion (the prompts it
was given are recorded): what the local backend asks llama.cpp for, and the chat completion it makes of it."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from refinelab.models import profile_for
from refinelab.models._local import _reply
from refinelab.models._local_thinking import ThinkingPlan, generate_thinking, thinking_plan, without_thinking

QWEN3 = "<|im_start|>user\nadd<|im_end|>\n<|im_start|>assistant\n"
R1 = "<｜User｜>add<｜Assistant｜><think>\n"  # a template that opens the thinking section itself


class Scripted:
    """A raw completion: each call returns the next (text, tokens, finish_reason) and records its arguments."""

    def __init__(self, *outputs: tuple[str, int, str]) -> None:
        self.outputs = list(outputs)
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, prompt: str, settings: Mapping[str, Any]) -> Mapping[str, Any]:
        self.calls.append((prompt, dict(settings)))
        text, tokens, finish = self.outputs.pop(0)
        return {
            "choices": [{"text": text, "finish_reason": finish}],
            "usage": {"prompt_tokens": 7, "completion_tokens": tokens},
        }


def think(model: Scripted, prompt: str, settings: Mapping[str, Any], plan: ThinkingPlan) -> dict[str, Any]:
    """The chat completion :func:`generate_thinking` makes over the scripted completion."""
    return asyncio.run(generate_thinking(model, prompt, settings, plan))


def test_the_plan_follows_the_effort_and_the_models_profile() -> None:
    qwen3, gemma = profile_for("local:Qwen3-8B-Q4_K_M.gguf"), profile_for("local:gemma-3-270m")
    assert thinking_plan("none", qwen3) == ThinkingPlan(False, None)
    assert thinking_plan("low", qwen3) == ThinkingPlan(True, 1024) and thinking_plan("300", qwen3) == ThinkingPlan(
        True, 300
    )
    assert thinking_plan("xhigh", qwen3) == ThinkingPlan(True, None)
    assert thinking_plan(None, qwen3) is None and thinking_plan("high", gemma) is None  # gemma does not think


def test_thinking_off_closes_an_empty_section_before_the_answer() -> None:
    assert without_thinking(QWEN3) == QWEN3 + "<think>\n\n</think>\n\n"
    assert without_thinking(R1) == R1.rstrip() + "\n\n</think>\n\n"
    model = Scripted(("def f(): pass", 5, "stop"))
    chat = think(model, QWEN3, {"max_tokens": 100}, ThinkingPlan(False, None))
    assert model.calls == [(QWEN3 + "<think>\n\n</think>\n\n", {"max_tokens": 100})]
    reply = _reply(chat, opens_thinking=True)
    assert (reply.text, reply.reasoning, reply.usage) == ("def f(): pass", None, reply.usage)
    assert reply.usage is not None and reply.usage.reasoning_tokens == 0


def test_a_budget_that_runs_out_ends_the_thinking_section_and_the_model_answers() -> None:
    model = Scripted(("first I add, then", 3, "length"), ("def f(): pass", 5, "stop"))
    settings = {"max_tokens": 20, "stop": ["<|im_end|>"], "temperature": 0.0}
    chat = think(model, QWEN3, settings, ThinkingPlan(True, 3))
    (thinking_prompt, thinking), (answer_prompt, answer) = model.calls
    assert thinking_prompt == QWEN3 + "<think>\n"
    assert thinking == {"max_tokens": 3, "stop": ["</think>", "<|im_end|>"], "temperature": 0.0}
    assert answer_prompt == QWEN3 + "<think>\nfirst I add, then\n</think>\n\n" and answer["max_tokens"] == 17
    reply = _reply(chat)
    assert reply.text == "def f(): pass" and reply.reasoning == "first I add, then"
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.reasoning_tokens) == (7, 8, 3)


def test_a_model_that_ends_its_own_thinking_in_budget_answers_the_same_way() -> None:
    model = Scripted(("short thought", 2, "stop"), ("def f(): pass", 5, "stop"))
    chat = think(model, R1, {"max_tokens": 50}, ThinkingPlan(True, 10))
    assert model.calls[0][0] == R1  # the template opened the section: nothing is added
    assert model.calls[1][0] == R1 + "short thought\n</think>\n\n"
    reply = _reply(chat, opens_thinking=True)
    assert reply.text == "def f(): pass" and reply.reasoning == "short thought"


def test_structured_output_constrains_the_answer_not_the_thinking() -> None:
    model = Scripted(("hmm", 1, "length"), ('{"passed": true}', 4, "stop"))
    think(model, QWEN3, {"max_tokens": 30, "grammar": "G"}, ThinkingPlan(True, 1))
    assert "grammar" not in model.calls[0][1] and model.calls[1][1]["grammar"] == "G"


def test_a_budget_above_the_cap_or_none_is_one_completion_as_the_template_wrote_it() -> None:
    for plan in (ThinkingPlan(True, None), ThinkingPlan(True, 500)):
        model = Scripted(("<think>\nx\n</think>\n\nanswer", 9, "stop"))
        reply = _reply(think(model, QWEN3, {"max_tokens": 100}, plan))
        assert [prompt for prompt, _ in model.calls] == [QWEN3]
        assert (reply.text, reply.reasoning) == ("answer", "x")


def test_a_reply_cut_off_at_the_cap_inside_a_template_opened_section_is_all_thinking() -> None:
    for plan in (ThinkingPlan(True, None), ThinkingPlan(True, 500)):  # no budget under the cap: one completion
        model = Scripted(("draft: def f(): pass\nbut wait", 100, "length"))
        reply = _reply(think(model, R1, {"max_tokens": 100}, plan), opens_thinking=True)
        assert (reply.text, reply.reasoning) == ("", "draft: def f(): pass\nbut wait")
        assert reply.usage is not None and reply.usage.reasoning_tokens == reply.usage.completion_tokens == 100


def test_thinking_off_cut_off_at_the_cap_is_all_answer() -> None:
    model = Scripted(("def f():\n    return", 100, "length"))
    chat = think(model, R1, {"max_tokens": 100}, ThinkingPlan(False, None))
    reply = _reply(chat, opens_thinking=True, thinks=False)
    assert (reply.text, reply.reasoning) == ("def f():\n    return", None)
