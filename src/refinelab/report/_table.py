"""A table of the text report, before it is drawn as text or HTML."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    """A titled table of cells (formatting only)."""

    title: str
    """The line above it."""
    header: list[str]
    """Column names."""
    body: list[list[str]]
    """One list of cells per row."""
