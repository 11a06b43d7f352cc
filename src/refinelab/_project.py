"""Finding the project config, ``refinelab.toml``, the way ruff and pytest find theirs.

``--config FILE`` wins; else ``$REFINELAB_CONFIG``; else the first ``refinelab.toml`` in the current
directory or one of its parents (the nearest one wins, nothing is merged); else none. The file holds
the ``[models]`` table: aliases, endpoints, deployment tags, concurrency and prices.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from refinelab.errors import UserError

CONFIG_NAME = "refinelab.toml"
"""The project config's file name."""


def find_config(start: Path, environ: Mapping[str, str], given: Path | None = None) -> Path | None:
    """The project config for a command run in ``start`` (see the module docstring)."""
    if given is not None:
        return given
    named = environ.get("REFINELAB_CONFIG")
    if named:
        path = Path(named)
        if not path.is_file():
            raise UserError(f"$REFINELAB_CONFIG names {named}, which is not a file")
        return path
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None
