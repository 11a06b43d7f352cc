"""Where a record sits in an input file, for errors that name the file, the line and the field."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from refinelab.errors import InputError


@dataclass(frozen=True)
class Location:
    """A record's place: its file, and its line (``None`` where the format has no lines)."""

    path: Path
    """The file."""
    line: int | None = None
    """The record's line, 1-based."""

    def error(self, field: str | None, problem: str) -> InputError:
        """An :class:`InputError` for ``field`` of the record here."""
        return InputError(self.path, self.line, field, problem)
