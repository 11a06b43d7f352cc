"""Model profiles: what each family accepts, what is left out and recorded, how each server takes an effort,
and the per-endpoint overrides of refinelab.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from refinelab.errors import InputError, UserError
from refinelab.models import (
    Accepts,
    GenerateConfig,
    ProfileOverrides,
    checked_effort,
    effort_problem,
    load_models_config,
    profile_for,
)
from refinelab.models._profiles import effort_fields


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("openai:o4-mini", "openai-o-series"),
        ("openai:o3", "openai-o-series"),
        ("openai:o1-mini", "openai-o1-mini"),
        ("openai:gpt-5-mini", "openai-gpt-5"),
        ("openai:gpt-5-nano-2025-08-07", "openai-gpt-5"),
        ("openai:gpt-5.1", "openai-gpt-5.1"),
        ("openai:gpt-5.2", "openai-gpt-5.2"),
        ("openai:gpt-5-chat-latest", "openai-gpt-5-chat"),
        ("openai:gpt-4.1-mini", "openai-chat"),
        ("vllm:Qwen/Qwen3-8B", "open-thinking"),
        ("ollama:deepseek-r1:7b", "open-thinking"),
        ("vllm:deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", "open-thinking"),
        ("vllm:Qwen/Qwen3-Coder-30B-A3B-Instruct", "generic"),  # Qwen3-Coder does not think
        ("vllm:Qwen/Qwen2.5-Coder-7B-Instruct", "generic"),
        ("vllm:openai/gpt-oss-20b", "gpt-oss"),
        ("custom:my-model", "generic"),
    ],
)
def test_each_family_is_found_by_its_name(model: str, family: str) -> None:
    assert profile_for(model).name == family


def test_the_server_decides_how_an_open_model_takes_its_effort() -> None:
    controls = {p: profile_for(f"{p}:qwen3:8b").effort for p in ("vllm", "ollama", "llamacpp", "local")}
    assert controls == {"vllm": "chat_template_kwargs", "ollama": "ollama", "llamacpp": "llamacpp", "local": "local"}
    assert profile_for("custom:anything").effort == "reasoning_effort"


def test_a_reasoning_model_is_not_sent_what_it_refuses_and_the_reply_says_so() -> None:
    accepts = Accepts(profile_for("openai:o4-mini"))
    asked = GenerateConfig(temperature=0.0, top_p=0.95, max_tokens=100, stop=("```",), reasoning_effort="high")
    sent, not_sent = accepts.prepare("openai:o4-mini", asked)
    assert (sent.temperature, sent.top_p, sent.stop, sent.max_tokens) == (None, None, (), 100)
    assert sent.reasoning_effort == "high"
    assert [str(n) for n in not_sent] == ["temperature=0.0", "top_p=0.95", "stop=```"]
    assert "samples only at temperature 1" in not_sent[0].reason and "openai-o-series" in not_sent[0].reason
    assert accepts.limit_field == "max_completion_tokens"


def test_asking_a_reasoning_model_for_its_own_fixed_value_changes_nothing_and_is_not_recorded() -> None:
    sent, not_sent = Accepts(profile_for("openai:o4-mini")).prepare("openai:o4-mini", GenerateConfig(temperature=1.0))
    assert sent.temperature is None and not_sent == ()


def test_a_model_that_does_not_reason_records_an_effort_as_not_sent() -> None:
    sent, not_sent = Accepts(profile_for("openai:gpt-4.1-mini")).prepare(
        "openai:gpt-4.1-mini", GenerateConfig(temperature=0.0, reasoning_effort="high")
    )
    assert sent == GenerateConfig(temperature=0.0)
    assert [str(n) for n in not_sent] == ["reasoning_effort=high"] and "does not reason" in not_sent[0].reason


def test_an_effort_level_the_family_does_not_take_is_the_users_to_fix() -> None:
    with pytest.raises(UserError, match="takes reasoning effort low, medium, high, not 'minimal'"):
        Accepts(profile_for("openai:o4-mini")).prepare("openai:o4-mini", GenerateConfig(reasoning_effort="minimal"))
    with pytest.raises(UserError, match="not '2048'"):
        Accepts(profile_for("openai:o3")).prepare("openai:o3", GenerateConfig(reasoning_effort="2048"))
    sent, _ = Accepts(profile_for("openai:gpt-5")).prepare("openai:gpt-5", GenerateConfig(reasoning_effort="minimal"))
    assert sent.reasoning_effort == "minimal"


def test_each_server_gets_the_effort_its_way() -> None:
    vllm, ollama, llamacpp = (profile_for(f"{p}:qwen3-8b") for p in ("vllm", "ollama", "llamacpp"))
    assert effort_fields(profile_for("openai:o4-mini"), "low") == {"reasoning_effort": "low"}
    assert effort_fields(vllm, "none") == {"chat_template_kwargs": {"enable_thinking": False}}
    assert effort_fields(vllm, "low") == {
        "chat_template_kwargs": {"enable_thinking": True, "thinking_budget": 1024}, "thinking_token_budget": 1024,
    }  # fmt: skip
    assert effort_fields(vllm, "3000")["thinking_token_budget"] == 3000
    assert effort_fields(vllm, "xhigh") == {"chat_template_kwargs": {"enable_thinking": True}}  # no budget
    assert effort_fields(ollama, "none") == {"reasoning_effort": "none"}
    assert effort_fields(llamacpp, "high") == {"chat_template_kwargs": {"enable_thinking": True}}
    assert effort_fields(vllm, None) == {}


def test_llamacpps_budget_and_ollamas_budget_are_recorded_as_not_sent() -> None:
    sent, not_sent = Accepts(profile_for("llamacpp:qwen3")).prepare(
        "llamacpp:qwen3", GenerateConfig(reasoning_effort="low")
    )
    assert sent.reasoning_effort == "low" and [str(n) for n in not_sent] == ["thinking_budget=1024"]
    sent, not_sent = Accepts(profile_for("ollama:qwen3")).prepare(
        "ollama:qwen3", GenerateConfig(reasoning_effort="512")
    )
    assert sent.reasoning_effort is None and "not a thinking-token budget" in not_sent[0].reason


def test_a_learned_refusal_leaves_the_setting_out_of_later_requests_and_a_value_only_that_value() -> None:
    accepts = Accepts(profile_for("custom:reasoner"))
    accepts.learn("temperature", "0.0", "http://x refused it: Only the default (1) value is supported.")
    accepts.learn("stop", None, "http://x refused it: 'stop' is not supported")
    asked = GenerateConfig(temperature=0.0, stop=("a",))
    sent, not_sent = accepts.prepare("custom:reasoner", asked)
    assert (sent.temperature, sent.stop) == (None, ())
    assert [n.reason for n in not_sent] == [
        "http://x refused it: Only the default (1) value is supported.", "http://x refused it: 'stop' is not supported",
    ]  # fmt: skip
    sent, not_sent = accepts.prepare("custom:reasoner", GenerateConfig(temperature=0.7))
    assert sent.temperature == 0.7 and not_sent == ()


def test_effort_spelling() -> None:
    assert effort_problem("high") is None and effort_problem("2048") is None
    assert effort_problem("0") is not None and effort_problem("max") is not None
    assert checked_effort(4096, "x") == "4096"
    with pytest.raises(UserError, match="--reasoning-effort: reasoning effort 'hard'"):
        checked_effort("hard", "--reasoning-effort")


def test_a_budget_is_written_one_way_and_only_in_ascii_digits() -> None:
    assert checked_effort("02048", "x") == "2048"  # one budget, one configuration and one cache key
    for text in ("²", "٣", "00"):  # str.isdigit() takes the first two; int() refuses the first
        with pytest.raises(UserError, match="thinking-token budget"):
            checked_effort(text, "--reasoning-effort")


def test_refinelab_toml_overrides_a_profile_per_endpoint(tmp_path: Path) -> None:
    config = tmp_path / "refinelab.toml"
    config.write_text(
        '[models.endpoints."custom:my-o4"]\nprofile = "openai-o-series"\n\n'
        '[models.endpoints."vllm:my-thinker"]\neffort_control = "chat_template_kwargs"\nrefuses = ["seed"]\n'
        "thinking_budgets = { low = 100, high = 900 }\n"
    )
    models = load_models_config(config)
    assert profile_for("custom:my-o4", models.settings("custom:my-o4").profile_overrides).name == "openai-o-series"
    thinker = profile_for("vllm:my-thinker", models.settings("vllm:my-thinker").profile_overrides)
    assert thinker.refuses == ("seed",) and thinker.budgets["low"] == 100 and thinker.budgets["medium"] == 4096
    assert ProfileOverrides().empty and not models.settings("vllm:my-thinker").profile_overrides.empty


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('profile = "o-whatever"', "profile"),
        ('effort_control = "magic"', "effort_control"),
        ('refuses = ["colour"]', "refuses"),
        ("thinking_budgets = { huge = 10 }", "thinking_budgets"),
    ],
)
def test_a_bad_profile_key_is_located(tmp_path: Path, line: str, field: str) -> None:
    config = tmp_path / "refinelab.toml"
    config.write_text(f'[models.endpoints."vllm:x"]\n{line}\n')
    with pytest.raises(InputError, match=f"field 'models.endpoints.vllm:x.{field}'"):
        load_models_config(config)
