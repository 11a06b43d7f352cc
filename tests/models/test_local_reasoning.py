"""Reasoning effort on the real in-process model (Gemma 3 270M): a model that does not think records an
effort as not sent; made to plan its thinking (its profile overridden in refinelab.toml), it thinks within a
budget that llama.cpp's own token count confirms, and answers after the section is closed for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from refinelab.models import GenerateConfig, Message, load_models_config, open_model

pytestmark = pytest.mark.slow

ASK = [Message.user("def add(a: int, b: int) -> int:\n    '''Return the sum of a and b.'''\n")]


def test_a_model_that_does_not_think_records_the_effort_as_not_sent(local_model_env: dict[str, str]) -> None:
    model = open_model("local:gemma-3-270m", local_model_env)
    completion = model.generate_sync(ASK, GenerateConfig(temperature=0.0, max_tokens=16, reasoning_effort="high"))
    (item,) = completion.not_sent
    assert str(item) == "reasoning_effort=high" and "does not reason" in item.reason
    assert completion.reasoning is None and completion.usage.reasoning_tokens == 0


def test_a_thinking_budget_ends_the_thinking_section_and_the_model_answers(
    local_model_env: dict[str, str], tmp_path: Path
) -> None:
    config = tmp_path / "refinelab.toml"
    config.write_text('[models.endpoints."local:gemma-3-270m"]\nprofile = "open-thinking"\n')
    model = open_model("local:gemma-3-270m", local_model_env, config=load_models_config(config))
    thought = model.generate_sync(ASK, GenerateConfig(temperature=0.0, max_tokens=40, reasoning_effort="8"))
    assert thought.not_sent == () and thought.reasoning  # the 270M model never closes a section in 8 tokens
    assert thought.usage.reasoning_tokens == 8 and not thought.usage.estimated  # llama.cpp's own count
    assert 8 < thought.usage.completion_tokens <= 40  # thinking and answer share the cap
    assert "</think>" not in thought.text and "<think>" not in thought.text
    off = model.generate_sync(ASK, GenerateConfig(temperature=0.0, max_tokens=16, reasoning_effort="none"))
    assert off.reasoning is None and off.usage.reasoning_tokens == 0 and off.text != thought.text


def test_thinking_that_fills_the_context_ends_the_reply_as_length_not_as_a_prompt_error(
    local_model_env: dict[str, str], tmp_path: Path
) -> None:
    config = tmp_path / "refinelab.toml"
    config.write_text('[models.endpoints."local:gemma-3-270m"]\nprofile = "open-thinking"\ncontext = 256\n')
    model = open_model("local:gemma-3-270m", local_model_env, config=load_models_config(config))
    count = [Message.user("Count from 1 to 1000, separated by spaces: " + " ".join(map(str, range(1, 21))))]
    settings = GenerateConfig(temperature=0.0, max_tokens=300, reasoning_effort="250")
    thought = model.generate_sync(count, settings)  # the prompt fits; the thinking runs to the context's end
    assert thought.finish_reason == "length" and thought.reasoning
    assert thought.usage.prompt_tokens + thought.usage.completion_tokens >= 256 - 8
    assert thought.usage.completion_tokens == thought.usage.reasoning_tokens  # no room was left to answer


def test_a_reply_cut_off_at_the_cap_before_its_section_closes_is_all_thinking_unless_thinking_is_off(
    local_model_env: dict[str, str], tmp_path: Path
) -> None:
    config = tmp_path / "refinelab.toml"
    config.write_text('[models.endpoints."local:gemma-3-270m"]\nprofile = "open-thinking"\n')
    model = open_model("local:gemma-3-270m", local_model_env, config=load_models_config(config))
    for effort in (None, "xhigh"):  # thinking as the template leaves it, or on without a budget under the cap
        cut = model.generate_sync(ASK, GenerateConfig(temperature=0.0, max_tokens=12, reasoning_effort=effort))
        assert cut.finish_reason == "length" and cut.text == "" and cut.reasoning
        assert cut.usage.reasoning_tokens == cut.usage.completion_tokens == 12
    off = model.generate_sync(ASK, GenerateConfig(temperature=0.0, max_tokens=12, reasoning_effort="none"))
    assert off.finish_reason == "length" and off.text and off.reasoning is None
