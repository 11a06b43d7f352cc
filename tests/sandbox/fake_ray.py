"""A stand-in for the parts of Ray the cluster sandbox's driver uses, in-process, for fast and exact
tests of its scheduling: nodes that join, hold batches, die mid-batch, or refuse.

Each fake node answers a batch by running its (trusted) programs in-process and reporting values the
way a worker does; what a node receives is kept (``node.batches``) so tests can check what crossed.
The real thing is tested against a real Ray cluster in ``cluster_cases.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from refinelab._version import __version__
from refinelab.sandbox import IsolationLevel, NodeInfo
from refinelab.sandbox._cluster_node import NodeBatch, NodeSetup
from refinelab.sandbox._judge import ProgramReports
from refinelab.sandbox._worker import protocol as wire
from refinelab.sandbox._worker.codec import encode


class FakeRayError(Exception):
    """Like ``ray.exceptions.RayError``."""


class FakeActorDied(FakeRayError):
    """Like ``ray.exceptions.ActorDiedError``."""


class FakeTaskError(FakeRayError):
    """Like ``ray.exceptions.RayTaskError`` (never raised here: a node's own exceptions pass as they are,
    as Ray's dual-class wrapping lets them be caught)."""


@dataclass
class FakeNode:
    """One node: alive, its resources, whether it lets batches finish, and what it got."""

    node_id: str
    cpus: int = 1
    resources: dict[str, float] = field(default_factory=dict)
    isolation: IsolationLevel = "bwrap-uid"
    version: str = __version__
    fail_start: BaseException | None = None
    fail_run: BaseException | None = None
    alive: bool = True
    batches: list[NodeBatch] = field(default_factory=list)
    running: int = 0
    most_running: int = 0
    open: asyncio.Event = field(default_factory=asyncio.Event)
    dead: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.open.set()

    def kill(self) -> None:
        """The node dies: batches it holds, and every later call, raise ``FakeActorDied``."""
        self.alive = False
        self.dead.set()

    def listed(self) -> dict[str, object]:
        return {
            "NodeID": self.node_id,
            "Alive": self.alive,
            "NodeManagerAddress": f"10.0.0.{len(self.node_id)}",
            "Resources": {"CPU": float(self.cpus), **self.resources},
        }


def report(program: str, inputs: Any) -> ProgramReports:
    """What a worker would report for a trusted function program on call tests (a test raising
    ``TimeoutError`` stands for one that exceeded its CPU limit)."""
    namespace: dict[str, object] = {}
    exec(program, namespace)
    row: list[dict[str, object]] = []
    assert inputs.keys == wire.EXPR  # every test an expression
    for expression in inputs.tests:
        try:
            value = eval(expression, namespace)
        except TimeoutError:
            row.append({wire.STATUS: wire.S_TIMEOUT, wire.LIMIT: wire.CPU_LIMIT, wire.MESSAGE: "CPU limit"})
        except Exception as exc:
            row.append({wire.STATUS: wire.S_ERROR, wire.MESSAGE: str(exc), wire.ERROR_TYPE: type(exc).__name__})
        else:
            row.append({wire.STATUS: wire.S_VALUE, wire.VALUE: encode(value)})
    return ProgramReports(tuple(row), "")


class _Method:
    def __init__(self, call: Callable[..., Any]) -> None:
        self._call = call

    def remote(self, *args: object) -> Any:
        return self._call(*args)


class FakeActor:
    """A node's runner: ``start``, ``run`` and ``stop``, each called as ``actor.NAME.remote(...)``."""

    def __init__(self, node: FakeNode, setup: NodeSetup) -> None:
        self.node, self.setup = node, setup
        self.killed = False
        self.start = _Method(self._start)
        self.run = _Method(self._run)
        self.stop = _Method(self._stop)

    async def _start(self) -> NodeInfo:
        if self.node.fail_start is not None:
            raise self.node.fail_start
        workers = min(self.setup.workers, self.node.cpus)
        listed = self.node.listed()
        return NodeInfo(
            self.node.node_id,
            str(listed["NodeManagerAddress"]),
            "fake",
            workers,
            self.node.isolation,
            self.node.version,
        )

    async def _run(self, batch: NodeBatch) -> list[ProgramReports]:
        node = self.node
        if not node.alive or self.killed:
            raise FakeActorDied("the actor died")
        node.batches.append(batch)
        node.running += 1
        node.most_running = max(node.most_running, node.running)
        try:
            opened = asyncio.ensure_future(node.open.wait())
            died = asyncio.ensure_future(node.dead.wait())
            await asyncio.wait({opened, died}, return_when=asyncio.FIRST_COMPLETED)
            opened.cancel()
            died.cancel()
            await asyncio.gather(opened, died, return_exceptions=True)
            if not node.alive:
                raise FakeActorDied("the node died")
            if node.fail_run is not None:
                raise node.fail_run
            return [report(program, inputs) for program, inputs in zip(batch.programs, batch.inputs)]
        finally:
            node.running -= 1

    async def _stop(self) -> None:
        pass


class FakeRay:
    """The ``ray`` module as the driver sees it, over a list of :class:`FakeNode`."""

    def __init__(self, nodes: list[FakeNode], *, connected: bool = True) -> None:
        self.fake_nodes = nodes
        self.actors: list[FakeActor] = []
        self.connected = connected
        self.init_failures: list[Exception] = []
        """What the next ``init`` calls raise, in order."""
        self.inits = 0
        self.exceptions = SimpleNamespace(RayError=FakeRayError, RayTaskError=FakeTaskError)
        strategies = SimpleNamespace(NodeAffinitySchedulingStrategy=lambda node_id, soft: node_id)
        self.util = SimpleNamespace(scheduling_strategies=strategies)

    def is_initialized(self) -> bool:
        return self.connected

    def init(self, **options: object) -> None:
        self.inits += 1
        if self.init_failures:
            raise self.init_failures.pop(0)
        self.connected = True

    def nodes(self) -> list[dict[str, object]]:
        return [node.listed() for node in self.fake_nodes]

    def remote(self, **options: object) -> Callable[[type], Any]:
        return lambda cls: SimpleNamespace(options=self._options)

    def _options(self, *, scheduling_strategy: str) -> Any:
        node = next(n for n in self.fake_nodes if n.node_id == scheduling_strategy)

        def create(setup: NodeSetup) -> FakeActor:
            actor = FakeActor(node, setup)
            self.actors.append(actor)
            return actor

        return SimpleNamespace(remote=create)

    def kill(self, actor: FakeActor) -> None:
        actor.killed = True

    def shutdown(self) -> None:
        self.connected = False
