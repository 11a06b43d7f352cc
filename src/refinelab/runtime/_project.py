"""Finding the project config, ``refinelab.toml``, the way ruff and pytest find theirs, and reading it.

``--config FILE`` wins; else ``$REFINELAB_CONFIG``; else the first ``refinelab.toml`` in the current directory
or one of its parents (the nearest one wins, nothing is merged); else none. The file holds the settings of
:data:`refinelab.runtime.SETTINGS` (``store``, ``cache``, ``cache_dir``, ``model``, ``sandbox`` (or ``kind``
in ``[sandbox]``), ``[sandbox] workers``, ``[sandbox] cluster``) and the ``[models]`` table: aliases,
endpoints, deployment tags, concurrency and prices. Any other key is an error naming its line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from refinelab._toml import located, read_toml
from refinelab.errors import UserError
from refinelab.models import ModelsConfig, load_models_config

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


def read_project(path: Path, keys: Mapping[str, type]) -> tuple[dict[str, object], ModelsConfig]:
    """The settings ``path`` sets, by dotted key (``sandbox.workers``), each checked against its type in
    ``keys``, and its ``[models]`` table. Relative paths are relative to the file's folder."""
    table = read_toml(path)
    found: dict[str, object] = {}
    for key, value in _flattened(path, table, set(keys)):
        found[key] = _typed(path, key, value, keys[key])
    models = load_models_config(path) if "models" in table else ModelsConfig()
    return found, models


def _flattened(path: Path, table: Mapping[str, object], keys: set[str]) -> list[tuple[str, object]]:
    """``(dotted key, value)`` for every setting in the file; an unknown key is an error at its line."""
    tables = {key.partition(".")[0] for key in keys if "." in key}
    found = []
    for name, value in table.items():
        if name == "models":
            continue
        if name in tables and isinstance(value, dict):
            found += [(_inner_key(name, inner, keys), item) for inner, item in value.items()]
        else:
            found.append((name, value))
    for key, _ in found:
        if key not in keys:
            known = ", ".join(sorted({*keys, "models"}))
            raise located(path, key, f"unknown key; known: {known}")
    return found


def _inner_key(table: str, inner: str, keys: set[str]) -> str:
    """The dotted key of ``inner`` in ``[table]``; a table that is also a setting of its own (``sandbox =
    "landlock"``) takes that setting as ``kind`` too (``[sandbox]`` with ``kind = "landlock"`` beside
    ``workers``, since TOML allows a name once)."""
    return table if inner == "kind" and table in keys else f"{table}.{inner}"


def _typed(path: Path, key: str, value: object, kind: type) -> object:
    if kind is Path:
        if not isinstance(value, str) or not value:
            raise located(path, key, "must be a path (a non-empty string)")
        return path.parent / Path(value).expanduser()
    if kind is int:
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise located(path, key, "must be an integer >= 1")
        return value
    if not isinstance(value, str) or not value:
        raise located(path, key, "must be a non-empty string")
    return value
