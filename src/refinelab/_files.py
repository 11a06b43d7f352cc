"""Writing output files so that they are whole or absent, never half-written; saying where a JSON file
is malformed."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from refinelab.errors import UserError


def write_atomically(path: Path, text: str | Iterable[str]) -> None:
    """Write beside ``path`` and rename; a write error is a one-line user error."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("w", encoding="utf-8") as handle:
            for chunk in [text] if isinstance(text, str) else text:
                handle.write(chunk)
        temporary.replace(path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise UserError(f"{path}: cannot write: {exc.strerror}") from None


def json_problem(error: json.JSONDecodeError) -> str:
    """What is wrong and where on its line: ``Unterminated string starting at column 13`` (``json``'s own
    message ends in a dangling "at" for some errors)."""
    return f"{error.msg.removesuffix(' at')} at column {error.colno}"
