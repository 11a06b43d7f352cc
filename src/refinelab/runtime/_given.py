"""The "not given" sentinel every layer of settings uses."""

from __future__ import annotations

from typing import Final


class NotGiven:
    """The type of :data:`NOT_GIVEN`: "this layer says nothing", as opposed to ``None``."""

    def __repr__(self) -> str:
        return "NOT_GIVEN"

    def __bool__(self) -> bool:
        return False


NOT_GIVEN: Final = NotGiven()
"""A flag (or argument) that was not given: the lower layers decide."""
