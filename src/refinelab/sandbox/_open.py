"""Which sandbox to open: one typed settings object in, one opened :class:`Sandbox` out.

Today every sandbox is the local :class:`WorkerPool`. Another kind (a cluster of machines) is one more
field on :class:`SandboxSettings` and one more case in :func:`open_sandbox`; nothing that uses a sandbox
changes (see docs/design/runtime.md).
"""

from __future__ import annotations

import typing
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

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
    """``auto``, ``bwrap`` or ``none`` (see :data:`IsolationMode`)."""
    limits: Limits = field(default_factory=Limits)
    """The limits per test."""
    workers: int | None = None
    """Programs run at once; ``None``: one per core this process may use."""
    packages: tuple[str, ...] = ()
    """Packages candidates may import beyond the standard library."""


@asynccontextmanager
async def open_sandbox(settings: SandboxSettings) -> AsyncIterator[Sandbox]:
    """The sandbox ``settings`` ask for, started, and stopped when the block ends."""
    pool = WorkerPool(
        workers=settings.workers, limits=settings.limits, isolation=settings.isolation, packages=settings.packages
    )
    async with pool:
        yield pool
