"""Numbers in sentences: ``1 configuration``, ``2 configurations``."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun`` in agreement: ``counted(1, "problem")`` is ``1 problem``, ``counted(3,
    "problem")`` is ``3 problems`` (``plural`` for nouns not made plural by adding an s)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
