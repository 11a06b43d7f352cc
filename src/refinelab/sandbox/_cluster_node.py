"""A cluster node's side of :class:`~refinelab.sandbox.ClusterSandbox`: one :class:`WorkerPool` per node.

Ray runs :class:`NodeRunner` as an async actor pinned to its node. It owns a pool sized to the node's
cores with the node's own isolation, so every rule of the local pool holds there unchanged (CPU-time
limits, each test's own limit, stopping a program at its first failing status, a private uid per
worker, nothing of the host visible). It is given programs with their suites' *inputs*
(:class:`NodeBatch`) and returns what the programs did (:class:`~refinelab.sandbox._judge.ProgramReports`):
expected values never leave the driver, which judges, and decides which CPU timeouts are worth a
confirming rerun (``_confirm.py``, the local pool's rule); those reruns come back as batches too.
Nothing here imports Ray; the driver wraps the class with ``ray.remote``.
"""

from __future__ import annotations

import socket
import warnings
from dataclasses import dataclass

from refinelab._version import __version__
from refinelab.sandbox._judge import ProgramReports
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._outcome import IsolationLevel
from refinelab.sandbox._pool import WorkerPool
from refinelab.sandbox._suite import SuiteInputs
from refinelab.sandbox._workers import IsolationMode, SandboxWarning, default_workers


@dataclass(frozen=True)
class NodeSetup:
    """How the driver asks a node to set up its pool."""

    limits: Limits
    """Default limits (the pool's; each batch carries its own)."""
    isolation: IsolationMode
    """``auto``, ``bwrap``, ``landlock`` or ``none``, as for :class:`WorkerPool`."""
    packages: tuple[str, ...]
    """Packages candidates may import (found in the node's own installation)."""
    workers: int
    """Workers wanted (the node's CPUs as Ray counts them); never more than the node's cores."""
    batch_size: int
    """Programs per worker job."""


@dataclass(frozen=True)
class NodeInfo:
    """What a node's runner reports once its pool is up."""

    node_id: str
    """Ray's id of the node (hex)."""
    address: str
    """The node's IP address as Ray knows it."""
    hostname: str
    """The node's host name."""
    workers: int
    """Workers its pool runs."""
    isolation: IsolationLevel
    """The isolation its workers have."""
    version: str
    """The refinelab version installed on the node."""

    @property
    def name(self) -> str:
        """How results and events name the node: ``ADDRESS/`` and the start of its node id."""
        return f"{self.address}/{self.node_id[:12]}"


@dataclass(frozen=True)
class NodeBatch:
    """Programs for one node, each with its suite's inputs (never an expected value)."""

    programs: tuple[str, ...]
    """The programs."""
    inputs: tuple[SuiteInputs, ...]
    """Each program's suite inputs (programs of one suite share one object, sent once)."""
    limits: Limits
    """The job's limits (each test's own CPU limit travels with its inputs: :attr:`SuiteInputs.seconds`)."""
    isolate: bool
    """A process per program (see :meth:`WorkerPool.run_items`)."""


class NodeRunner:
    """The actor on each node: starts the node's pool, runs batches on it, stops it."""

    def __init__(self, setup: NodeSetup) -> None:
        self.setup = setup
        self.pool: WorkerPool | None = None

    async def start(self) -> NodeInfo:
        """Start the pool; report the node and its isolation (the driver warns about an unsandboxed one)."""
        import ray

        setup = self.setup
        workers = max(1, min(setup.workers, default_workers()))
        pool = WorkerPool(
            workers=workers,
            limits=setup.limits,
            isolation=setup.isolation,
            batch_size=setup.batch_size,
            packages=setup.packages,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SandboxWarning)
            await pool.start()
        self.pool = pool
        context = ray.get_runtime_context()
        address = str(ray.util.get_node_ip_address())  # type: ignore[no-untyped-call]
        return NodeInfo(context.get_node_id(), address, socket.gethostname(), workers, pool.isolation, __version__)

    async def run(self, batch: NodeBatch) -> list[ProgramReports]:
        """What each program of the batch did on each test, in order (see :meth:`WorkerPool.reports`)."""
        assert self.pool is not None, "start() first"
        items = list(zip(batch.programs, batch.inputs))
        return await self.pool.reports(items, limits=batch.limits, isolate=batch.isolate)

    async def stats(self) -> dict[str, float]:
        """The pool's totals (children forked, CPU seconds, ...)."""
        return dict(self.pool.stats) if self.pool is not None else {}

    async def stop(self) -> None:
        """Stop the pool's workers."""
        if self.pool is not None:
            await self.pool.close()
            self.pool = None
