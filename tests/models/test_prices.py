"""The price table: current reasoning models priced, each price with the date and place it was read, a dated
snapshot priced as its model, thinking billed as output, an unknown model still unknown."""

from __future__ import annotations

import re

import pytest

from refinelab.models import LISTED, PriceTable, Usage


@pytest.mark.parametrize(
    "model",
    ["o1", "o3", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano"],
)
def test_current_models_are_priced_with_when_and_where_the_price_was_read(model: str) -> None:
    (listed,) = [p for p in LISTED if p.model == f"openai:{model}"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", listed.read) and listed.source
    assert PriceTable().price(f"openai:{model}") == listed.price


def test_thinking_is_billed_as_output_and_a_dated_snapshot_as_its_model() -> None:
    usage = Usage(1000, 3000, cached_tokens=200, reasoning_tokens=2500)  # 2,500 of the 3,000 output tokens thinking
    # o4-mini: 800 x $1.10 + 200 x $0.275 + 3,000 x $4.40, per million
    expected = (800 * 1.10 + 200 * 0.275 + 3000 * 4.40) / 1e6
    assert PriceTable().cost("openai:o4-mini-2025-04-16", usage) == pytest.approx(expected)
    assert PriceTable().cost("vllm:o4-mini-2025-04-16", usage) is None  # only OpenAI's snapshots are dated so
    assert PriceTable().cost("openai:o9-preview", usage) is None
