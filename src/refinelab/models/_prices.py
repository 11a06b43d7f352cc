"""Prices in USD per million tokens. Unknown models have no price: their cost is ``None``, never 0.

Reasoning tokens are output tokens: the servers count them in ``completion_tokens`` and providers bill them
at the output rate, so a completion's cost is ``completion_tokens x output`` whatever part of it was thinking.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from refinelab.models._types import Usage


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    """Uncached input tokens."""
    output: float
    """Output tokens (thinking included)."""
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


@dataclass(frozen=True)
class ListedPrice:
    """One model's published price, with when and where it was read."""

    model: str
    """``provider:name``."""
    price: Price
    """Standard-tier price (no batch, flex or priority discount)."""
    read: str
    """When it was read (``YYYY-MM-DD``)."""
    source: str
    """Where it was read."""


_GENAI = (
    "genai-prices 0.2.3's table (PyPI, maintained by Pydantic; its rows cite developers.openai.com/api/docs/pricing, "
    "verified there 2026-10-12/14); OpenAI's page itself was not reachable from where this was written"
)
LISTED: tuple[ListedPrice, ...] = (
    # Every row read 2026-11-28 from genai-prices (see _GENAI); the GPT-4.1 and 4o rows were in this table
    # before (written 2026-11-22 as OpenAI's published prices) and agree with it.
    ListedPrice("openai:gpt-4.1", Price(2.00, 8.00, 0.50), "2026-11-28", _GENAI),
    ListedPrice("openai:gpt-4.1-mini", Price(0.40, 1.60, 0.10), "2026-11-28", _GENAI),
    ListedPrice("openai:gpt-4.1-nano", Price(0.10, 0.40, 0.025), "2026-11-28", _GENAI),
    ListedPrice("openai:gpt-4o", Price(2.50, 10.00, 1.25), "2026-11-28", _GENAI),
    ListedPrice("openai:gpt-4o-mini", Price(0.15, 0.60, 0.075), "2026-11-28", _GENAI),
    ListedPrice("openai:o1", Price(15.00, 60.00, 7.50), "2026-11-28", _GENAI),
    ListedPrice("openai:o1-mini", Price(1.10, 4.40, 0.55), "2026-11-28", _GENAI),
    ListedPrice("openai:o1-pro", Price(150.00, 600.00), "2026-11-28", _GENAI),
    ListedPrice("openai:o3", Price(2.00, 8.00, 0.50), "2026-11-28", _GENAI),  # $10/$40 before 2025-06-10
    ListedPrice("openai:o3-mini", Price(1.10, 4.40, 0.55), "2026-11-28", _GENAI),
    ListedPrice("openai:o3-pro", Price(20.00, 80.00), "2026-11-28", _GENAI),
    ListedPrice("openai:o4-mini", Price(1.10, 4.40, 0.275), "2026-11-28", _GENAI),
    ListedPrice("openai:gpt-5", Price(1.25, 10.00, 0.125), "2026-11-28", _GENAI),
    ListedPrice("openai:gpt-5-mini", Price(0.25, 2.00, 0.025), "2026-11-28", _GENAI),
    ListedPrice("openai:gpt-5-nano", Price(0.05, 0.40, 0.005), "2026-11-28", _GENAI),
    ListedPrice("openai:gpt-5-codex", Price(1.25, 10.00, 0.125), "2026-11-28", _GENAI),
    ListedPrice("openai:gpt-5.1", Price(1.25, 10.00, 0.125), "2026-11-28", _GENAI),
    ListedPrice("openai:gpt-5.2", Price(1.75, 14.00, 0.175), "2026-11-28", _GENAI),
)
"""Published prices of common hosted models, each with the date and place it was read. Prices change: a user's
own ``price`` in ``refinelab.toml`` wins, and a model not listed costs ``None`` (reports say unknown)."""

DEFAULT_PRICES: Mapping[str, Price] = {listed.model: listed.price for listed in LISTED}
"""Defaults for common hosted models (:data:`LISTED`); override or extend them in the project config."""

_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}$")
"""A dated snapshot's suffix (``o4-mini-2025-04-16``): priced as the model it pins."""


class PriceTable:
    """Prices by model (``provider:name``), defaults overridden by the user's."""

    def __init__(self, overrides: Mapping[str, Price] | None = None) -> None:
        self._prices = {**DEFAULT_PRICES, **(overrides or {})}

    def price(self, model: str) -> Price | None:
        """The price of ``model``, if known (a dated OpenAI snapshot has its model's)."""
        found = self._prices.get(model)
        if found is None and model.startswith("openai:"):
            found = self._prices.get(_SNAPSHOT.sub("", model))
        return found

    def cost(self, model: str, usage: Usage) -> float | None:
        """The cost of ``usage`` on ``model``, or ``None`` if its price is unknown."""
        price = self.price(model)
        return None if price is None else price.cost(usage)
