"""One model served by several replicas (vLLM replicas, several Ollama hosts): a :class:`Backend` that
sends each request to the least-loaded healthy replica, and a request a replica failed to another.

A request goes to one replica at a time, never to two at once: a replica that fails (a transient
failure: 5xx, 429, a timeout, a dropped or refused connection) is left alone for a while (1 s, doubling
with each failure in a row, at most 60 s) and the request goes straight to another; only when every
replica has failed it does :class:`~refinelab.models.Model` see the failure, wait, and retry. Where the
reply came from is not part of it: the response cache key and the run id never name an address, so a
run answered by one replica or by ten is the same run (docs/design/models.md).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from refinelab.errors import TransientError
from refinelab.models._model import Backend
from refinelab.models._types import GenerateConfig, Message, Reply

FIRST_REST = 1.0
"""Seconds a replica is left alone after a failure (doubling for each further failure in a row)."""
LONGEST_REST = 60.0
"""The longest it is left alone."""


@dataclass
class Replica:
    """One replica: its backend, its load, and how it has been doing."""

    backend: Backend
    """Where requests to it go."""
    limit: int
    """Requests it may have in flight."""
    in_flight: int = 0
    """Requests it has now."""
    answered: int = 0
    """Requests it answered."""
    failures: int = 0
    """Transient failures it had, in all."""
    failing: int = 0
    """Failures in a row (0 once it answers)."""
    resting_until: float = 0.0
    """``time.monotonic()`` before which it gets no request unless every other replica is worse off."""
    last_error: str = field(default="", repr=False)
    """Why it last failed."""

    @property
    def endpoint(self) -> str:
        """Its base URL."""
        return self.backend.endpoint

    def healthy(self, now: float) -> bool:
        """Not resting after a failure."""
        return now >= self.resting_until

    def failed(self, error: TransientError) -> None:
        """Count a failure and rest for a while."""
        self.failures += 1
        self.failing += 1
        self.last_error = error.reason
        self.resting_until = time.monotonic() + min(LONGEST_REST, FIRST_REST * 2.0 ** (self.failing - 1))

    def succeeded(self) -> None:
        """Count an answer; the replica is healthy again."""
        self.answered += 1
        self.failing = 0
        self.resting_until = 0.0


class ReplicaBackend:
    """A :class:`Backend` over replicas of one model; see the module docstring.

    ``concurrency`` is per replica, as a server's own capacity is; the :class:`Model` above may have
    ``concurrency * len(replicas)`` requests in flight.
    """

    def __init__(self, replicas: Sequence[Backend], *, concurrency: int) -> None:
        if not replicas:
            raise ValueError("a model needs at least one replica")
        self.replicas = [Replica(backend, max(1, concurrency)) for backend in replicas]
        self.model = replicas[0].model
        self.endpoint = ", ".join(replica.endpoint for replica in self.replicas)
        self.accepts = getattr(replicas[0], "accepts", None)
        """The replicas' shared profile and learned refusals (they serve one model), when they have one."""
        self._turn = 0
        self._conditions: dict[int, asyncio.Condition] = {}

    async def complete(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
        """``n`` replies from one replica: the least loaded healthy one, then the others in turn if it fails."""
        failed: list[tuple[Replica, TransientError]] = []
        while len(failed) < len(self.replicas):
            replica = await self._take([r for r in self.replicas if all(r is not f for f, _ in failed)])
            try:
                replies = await replica.backend.complete(messages, config, n)
            except TransientError as error:
                replica.failed(error)
                failed.append((replica, error))
                continue
            finally:
                await self._give_back(replica)
            replica.succeeded()
            return replies
        raise _all_failed(failed)

    async def _take(self, candidates: list[Replica]) -> Replica:
        """The best candidate, once it has room: the healthy one with the fewest requests in flight (equal
        loads take turns); only when none is healthy, the one whose rest ends first."""
        freed = self._freed()
        async with freed:
            while True:
                now = time.monotonic()
                healthy = [r for r in candidates if r.healthy(now)]
                room = [r for r in healthy or candidates if r.in_flight < r.limit]
                if room:
                    chosen = self._least_loaded(room) if healthy else min(room, key=lambda r: r.resting_until)
                    chosen.in_flight += 1
                    return chosen
                try:  # a slot frees, or a resting replica becomes healthy
                    await asyncio.wait_for(freed.wait(), FIRST_REST)
                except asyncio.TimeoutError:
                    pass

    def _least_loaded(self, room: list[Replica]) -> Replica:
        self._turn += 1
        order = {id(r): (i - self._turn) % len(self.replicas) for i, r in enumerate(self.replicas)}
        return min(room, key=lambda r: (r.in_flight, order[id(r)]))

    async def _give_back(self, replica: Replica) -> None:
        freed = self._freed()
        async with freed:
            replica.in_flight -= 1
            freed.notify_all()

    def _freed(self) -> asyncio.Condition:
        """This event loop's condition for "a replica has room" (a condition cannot move between loops)."""
        loop = id(asyncio.get_running_loop())
        if loop not in self._conditions:
            self._conditions[loop] = asyncio.Condition()
        return self._conditions[loop]

    async def aclose(self) -> None:
        """Close every replica's connections for the running event loop."""
        for replica in self.replicas:
            close = getattr(replica.backend, "aclose", None)
            if close is not None:
                await close()


def _all_failed(failed: list[tuple[Replica, TransientError]]) -> TransientError:
    """Every replica failed: one error for the Model to retry (a connection failure only if all were)."""
    reasons = "; ".join(f"{replica.endpoint}: {error.reason}" for replica, error in failed)
    waits = [error.retry_after for _, error in failed if error.retry_after is not None]
    connection = all(error.connection for _, error in failed)
    return TransientError(reasons, retry_after=min(waits) if waits else None, connection=connection)
