"""Prices in USD per million tokens. Unknown models have no price: their cost is ``None``, never 0."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from refinelab.models._types import Usage


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    """Uncached input tokens."""
    output: float
    """Output tokens."""
    cached_input: float | None = None
    """Cached input tokens (``input`` when the provider has no discount)."""

    def cost(self, usage: Usage) -> float:
        """The cost of ``usage`` at this price."""
        cached = min(usage.cached_tokens, usage.prompt_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        total = (
            (usage.prompt_tokens - cached) * self.input + cached * cached_rate + usage.completion_tokens * self.output
        )
        return total / 1_000_000


DEFAULT_PRICES: Mapping[str, Price] = {
    # OpenAI's published standard prices (USD per 1M tokens: input, output, cached input).
    "openai:gpt-4.1": Price(2.00, 8.00, 0.50),
    "openai:gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "openai:gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "openai:gpt-4o": Price(2.50, 10.00, 1.25),
    "openai:gpt-4o-mini": Price(0.15, 0.60, 0.075),
}
"""Defaults for common hosted models; override or extend them in the project config."""


class PriceTable:
    """Prices by model (``provider:name``), defaults overridden by the user's."""

    def __init__(self, overrides: Mapping[str, Price] | None = None) -> None:
        self._prices = {**DEFAULT_PRICES, **(overrides or {})}

    def price(self, model: str) -> Price | None:
        """The price of ``model``, if known."""
        return self._prices.get(model)

    def cost(self, model: str, usage: Usage) -> float | None:
        """The cost of ``usage`` on ``model``, or ``None`` if its price is unknown."""
        price = self.price(model)
        return None if price is None else price.cost(usage)
