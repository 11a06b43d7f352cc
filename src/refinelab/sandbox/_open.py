"""Which sandbox to open: one typed settings object in, one opened :class:`Sandbox` out — this machine's
:class:`WorkerPool`, or a :class:`ClusterSandbox` when a Ray cluster is named (``--cluster``,
``$REFINELAB_CLUSTER``, or ``[sandbox] cluster`` in ``refinelab.toml``).

Another kind of sandbox is one more field on :class:`SandboxSettings` and one more case in
:func:`open_sandbox`; nothing that uses a sandbox changes (see docs/design/runtime.md).
"""

from __future__ import annotations

import typing
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from refinelab.sandbox._cluster import ClusterSandbox
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._pool import WorkerPool
from refinelab.sandbox._protocol import Sandbox
from refinelab.sandbox._workers import IsolationMode

ISOLATION_MODES: tuple[IsolationMode, ...] = typing.get_args(IsolationMode)
"""Every isolation mode, in the order the command line lists them."""


@dataclass(frozen=True, kw_only=True)
class SandboxSettings:
    """How to open a sandbox (see :func:`open_sandbox`)."""

    isolation: IsolationMode = "auto"
    """``auto``, ``bwrap``, ``landlock`` or ``none`` (see :data:`IsolationMode`)."""
    limits: Limits = field(default_factory=Limits)
    """The limits per test."""
    workers: int | None = None
    """Programs run at once on this machine; ``None``: one per core this process may use. (A cluster's
    nodes run as many as each offers Ray CPUs.)"""
    packages: tuple[str, ...] = ()
    """Packages candidates may import beyond the standard library."""
    cluster: str | None = None
    """A Ray cluster's address (``auto``, ``ray://HOST:PORT``, ``HOST:PORT``) whose nodes run the
    programs; ``None``: this machine. Verdicts do not depend on it (see docs/design/cluster.md)."""


@asynccontextmanager
async def open_sandbox(settings: SandboxSettings) -> AsyncIterator[Sandbox]:
    """The sandbox ``settings`` ask for, started, and stopped when the block ends."""
    sandbox: WorkerPool | ClusterSandbox
    if settings.cluster is None:
        sandbox = WorkerPool(
            workers=settings.workers, limits=settings.limits, isolation=settings.isolation, packages=settings.packages
        )
    else:
        sandbox = ClusterSandbox(
            settings.cluster, limits=settings.limits, isolation=settings.isolation, packages=settings.packages
        )
    async with sandbox:
        yield sandbox


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
