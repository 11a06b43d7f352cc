"""Finding the project config, ``refinelab.toml``, the way ruff and pytest find theirs.

``--config FILE`` wins; else ``$REFINELAB_CONFIG``; else the first ``refinelab.toml`` in the current
directory or one of its parents (the nearest one wins, nothing is merged); else none. The file holds
the ``[models]`` table (aliases, endpoints, deployment tags, concurrency and prices) and the
``[sandbox]`` table (``cluster``: a Ray cluster's address to run programs on).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from refinelab._toml import read_toml
from refinelab.errors import InputError, UserError

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


def project_cluster(path: Path | None) -> str | None:
    """``[sandbox] cluster`` of the project config at ``path`` (``None``: not set, or no config)."""
    from refinelab.sandbox import cluster_problem

    if path is None:
        return None
    table = read_toml(path).get("sandbox", {})
    if not isinstance(table, dict):
        raise InputError(path, None, "sandbox", "must be a table")
    unknown = sorted(set(table) - {"cluster"})
    if unknown:
        raise InputError(path, None, f"sandbox.{unknown[0]}", "unknown key ([sandbox] holds cluster)")
    cluster = table.get("cluster")
    if cluster is None:
        return None
    if not isinstance(cluster, str):
        raise InputError(path, None, "sandbox.cluster", "must be a string: auto, ray://HOST:PORT or HOST:PORT")
    if (problem := cluster_problem(cluster)) is not None:
        raise InputError(path, None, "sandbox.cluster", problem)
    return cluster
