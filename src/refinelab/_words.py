"""Numbers in sentences: ``1 configuration``, ``2 configurations``; money: ``$0.0012``."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun`` in agreement: ``counted(1, "problem")`` is ``1 problem``, ``counted(3,
    "problem")`` is ``3 problems`` (``plural`` for nouns not made plural by adding an s)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def dollars(value: float | None) -> str:
    """``$0.0012``; ``$0`` when nothing was spent (a local model), ``<$0.0001`` for a known cost too small for
    four places, and ``unknown`` when the price is unknown (never a false ``$0``)."""
    if value is None:
        return "unknown"
    if value == 0:
        return "$0"
    return "<$0.0001" if value < 0.00005 else f"${value:.4f}"
