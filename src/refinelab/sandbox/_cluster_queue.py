"""The driver's queue of programs waiting for a cluster node, and the calls they belong to.

A call of :meth:`ClusterSandbox.run_items` becomes a :class:`Call` cut into :class:`Chunk`\\ s; nodes take
chunks (several small ones merged into one batch) as they have room. The queue lives in the driver's
memory, so a run of a million programs never sits in Ray's object store: only the batches in flight do.
A chunk a lost node was running goes back to the front of the queue.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from refinelab.sandbox._judge import Ran
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._suite import InputItem


class Call:
    """One caller's programs (``size``, of which ``runnable`` have tests): filled in as batches come back,
    done when every program with tests has run."""

    def __init__(self, size: int, runnable: int) -> None:
        self.found: list[Ran | None] = [None] * size
        self.left = runnable
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if runnable == 0:
            self.done.set_result(None)

    def put(self, index: int, ran: Ran) -> None:
        """Record program ``index``'s run: once only (a retried batch must never score a program twice)."""
        if self.found[index] is not None:
            raise AssertionError(f"program {index} of a call was run twice")
        self.found[index] = ran
        self.left -= 1
        if self.left == 0 and not self.done.done():
            self.done.set_result(None)

    def fail(self, error: BaseException) -> None:
        """End the call with ``error`` (nothing more of it is run)."""
        if not self.done.done():
            self.done.set_exception(error)

    @property
    def finished(self) -> bool:
        """Done, failed, or given up by its caller."""
        return self.done.done()

    def results(self) -> list[Ran | None]:
        """Every program's run, in order (``None`` for a program without tests: nothing to run)."""
        return list(self.found)


@dataclass(frozen=True)
class RunKey:
    """How a batch's programs run: only chunks with the same key share a batch."""

    limits: Limits
    """The limits per test."""
    isolate: bool
    """Each program in a fresh process of its own."""


@dataclass
class Chunk:
    """Some programs of one call, with the same limits: the unit that is queued, batched and retried."""

    call: Call
    """The call they belong to."""
    indices: list[int]
    """Their places in the call."""
    items: list[InputItem]
    """The programs and their suites' inputs."""
    key: RunKey
    """Limits and ``isolate``: only chunks with the same key share a batch."""
    tries: int = field(default=0)
    """Times a node was lost while running it."""


def chunks_of(call: Call, items: Sequence[InputItem], key: RunKey, size: int, nodes: int) -> list[Chunk]:
    """``items`` (the programs with tests) in chunks of at most ``size``, at least one per node,
    interleaved: the samples of one slow problem spread over the chunks, so over the nodes (as
    :class:`WorkerPool` spreads them over its workers)."""
    runnable = [i for i, (_, inputs) in enumerate(items) if inputs.tests]
    count = max(-(-len(runnable) // size), min(len(runnable), nodes))
    groups = [runnable[start::count] for start in range(count)]
    return [Chunk(call, group, [items[i] for i in group], key) for group in groups]


class BatchQueue:
    """Chunks waiting for a node, oldest first; :meth:`take` merges neighbours into one batch."""

    def __init__(self) -> None:
        self._chunks: deque[Chunk] = deque()
        self.programs = 0
        """Programs queued."""

    def put(self, chunks: Sequence[Chunk], *, front: bool = False) -> None:
        """Queue chunks (at the front: a lost node's, run next)."""
        if front:
            self._chunks.extendleft(reversed(chunks))
        else:
            self._chunks.extend(chunks)
        self.programs += sum(len(chunk.items) for chunk in chunks)

    def _pop(self) -> Chunk:
        chunk = self._chunks.popleft()
        self.programs -= len(chunk.items)
        return chunk

    def take(self, limit: int) -> list[Chunk]:
        """The oldest chunk and the ones after it with the same key that fit in ``limit`` programs (none
        when the queue is empty); chunks whose caller has finished are dropped."""
        while self._chunks and self._chunks[0].call.finished:
            self._pop()  # its caller failed or gave up
        if not self._chunks:
            return []
        taken = [self._pop()]
        size = len(taken[0].items)
        while self._chunks and self._chunks[0].key == taken[0].key and size + len(self._chunks[0].items) <= limit:
            chunk = self._pop()
            if not chunk.call.finished:
                taken.append(chunk)
                size += len(chunk.items)
        return taken

    def waiting(self) -> list[Chunk]:
        """Chunks still queued for callers still waiting."""
        return [chunk for chunk in self._chunks if not chunk.call.finished]

    def drain(self) -> list[Chunk]:
        """Remove and return every queued chunk."""
        chunks = list(self._chunks)
        self._chunks.clear()
        self.programs = 0
        return chunks
