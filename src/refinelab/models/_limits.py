"""Caps on requests in flight, per endpoint, shared by the models that hold one :class:`EndpointLimits`.

An ``asyncio.Semaphore`` belongs to the event loop it first waits in, so the semaphores are kept for one
loop at a time: a model used under a new loop (``generate_sync`` runs its own) starts fresh, and nothing
keeps a finished loop alive.
"""

from __future__ import annotations

import asyncio
import weakref


class EndpointLimits:
    """One semaphore per endpoint for the running event loop. Every model a runtime opens shares the
    runtime's, so two models served by one endpoint respect one cap; a :class:`Model` made on its own
    has its own."""

    def __init__(self) -> None:
        self._loop: weakref.ref[asyncio.AbstractEventLoop] | None = None
        self._semaphores: dict[str, asyncio.Semaphore] = {}

    def slot(self, endpoint: str, limit: int) -> asyncio.Semaphore:
        """The semaphore capping ``endpoint`` at ``limit`` requests in flight (the first limit asked for
        an endpoint under a loop is the one kept)."""
        loop = asyncio.get_running_loop()
        if self._loop is None or self._loop() is not loop:
            self._loop, self._semaphores = weakref.ref(loop), {}
        if endpoint not in self._semaphores:
            self._semaphores[endpoint] = asyncio.Semaphore(limit)
        return self._semaphores[endpoint]
