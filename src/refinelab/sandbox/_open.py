"""Choosing the sandbox: this machine's :class:`WorkerPool`, or a :class:`ClusterSandbox` when a Ray
cluster is named (``--cluster``, or ``[sandbox] cluster`` in ``refinelab.toml``)."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from refinelab.sandbox._cluster import ClusterSandbox
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._pool import WorkerPool
from refinelab.sandbox._workers import IsolationMode


def open_sandbox(
    cluster: str | None = None,
    *,
    workers: int | None = None,
    limits: Limits | None = None,
    isolation: IsolationMode = "auto",
    packages: Sequence[str] = (),
) -> WorkerPool | ClusterSandbox:
    """The sandbox to use (not started: ``async with`` it). ``cluster``: a Ray cluster's address
    (``auto``, ``ray://HOST:PORT``, ``HOST:PORT``), whose nodes run the programs with as many workers as
    each offers Ray CPUs (``workers`` is for this machine's pool); ``None``: this machine."""
    if cluster is None:
        return WorkerPool(workers=workers, limits=limits, isolation=isolation, packages=packages)
    return ClusterSandbox(cluster, limits=limits, isolation=isolation, packages=packages)


def cluster_problem(address: str) -> str | None:
    """What is wrong with a cluster address (``None``: nothing)."""
    if address == "auto":
        return None
    parts = urlsplit(address if "://" in address else f"ray://{address}")
    if parts.scheme != "ray" or not parts.hostname or parts.path not in ("", "/"):
        return f"cluster address {address!r}: use auto, ray://HOST:PORT (Ray Client) or HOST:PORT (the head)"
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        return f"cluster address {address!r} needs a port: ray://HOST:10001 (Ray Client) or HOST:6379 (the head)"
    return None
