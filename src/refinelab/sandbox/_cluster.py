"""Programs run on a Ray cluster: :class:`ClusterSandbox`, one :class:`WorkerPool` per node.

The driver (this process) keeps the queue of programs and every expected value. Each node runs one
async actor (``_cluster_node.NodeRunner``: ``num_cpus=0``, pinned to its node) owning a pool sized to
the node's cores with the node's own isolation; it is fed batches of about ``batch_size`` programs, at
most ``in_flight`` at a time, and returns what the programs did; the driver judges. Nodes that join
the cluster are used; a node lost mid-batch has its batches run again elsewhere (an infrastructure
event, never a failed test); when no node is left, :class:`~refinelab.errors.SandboxUnavailable`
stops the run, which resumes when started again. See docs/design/cluster.md.
"""

from __future__ import annotations

import asyncio
import os
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from refinelab.errors import InfrastructureError, MissingDependency, RefinelabError, SandboxUnavailable, UserError
from refinelab.sandbox._cluster_node import NodeBatch, NodeInfo, NodeRunner, NodeSetup
from refinelab.sandbox._cluster_options import ClusterEvent, ClusterEventKind, ClusterOptions
from refinelab.sandbox._cluster_queue import BatchQueue, Call, Chunk, RunKey, chunks_of
from refinelab.sandbox._cluster_reach import bounded_ray_init, reach_problem
from refinelab.sandbox._confirm import Rerun, confirmed
from refinelab.sandbox._judge import ProgramReports, Ran, value_tests, values_of
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._outcome import IsolationLevel, RunResult, TestOutcome
from refinelab.sandbox._pool import input_items
from refinelab.sandbox._protocol import Sandbox
from refinelab.sandbox._suite import InputItem, Item, Suite, SuiteInputs
from refinelab.sandbox._workers import IsolationMode, SandboxWarning

_STRENGTH: dict[IsolationLevel, int] = {
    "fake": 0,
    "none": 0,
    "landlock": 1,
    "landlock-uid": 2,
    "bwrap": 3,
    "bwrap-uid": 4,
}
_WORKER_BATCH = 32
"""Programs per worker job on a node (the local pool's default)."""


@dataclass(frozen=True)
class _Lost:
    """Why a node is lost (its batch goes to another)."""

    reason: str


@dataclass
class _Node:
    info: NodeInfo
    actor: Any
    alive: bool = True
    busy: int = 0


class ClusterSandbox(Sandbox):
    """Runs candidate programs on every node of a Ray cluster (a :class:`Sandbox`).

    ``address`` is ``auto`` (``RAY_ADDRESS``, else a cluster started on this machine with
    ``ray start``), ``ray://HOST:PORT`` (Ray Client) or ``HOST:PORT`` (the head's GCS). Needs
    ``pip install 'refinelab[ray]'`` here, and refinelab (same version) and bubblewrap on every node::

        async with ClusterSandbox("auto") as sandbox:
            results = await sandbox.run_items(items)
    """

    def __init__(
        self,
        address: str = "auto",
        *,
        limits: Limits | None = None,
        isolation: IsolationMode = "auto",
        packages: Sequence[str] = (),
        options: ClusterOptions | None = None,
    ) -> None:
        self.address = address
        self.limits = limits or Limits()
        self.mode: IsolationMode = isolation
        self.packages = tuple(packages)
        self.options = options or ClusterOptions()
        self.batch_size = self.options.batch_size
        self.isolation: IsolationLevel = "none"
        self.machine: str | None = None
        """Nodes are other machines, each maybe another speed: cached reference times are scaled by the
        calibration wherever they were measured."""
        self.size = 0
        self.events: list[ClusterEvent] = []
        """What happened to nodes, in order (joined, refused, lost, batches retried)."""
        self.stats: dict[str, float] = {"batches": 0, "programs": 0, "retried_batches": 0, "reruns": 0}
        """Batches and programs the nodes ran, batches run again after a node was lost, and programs run again
        alone to confirm a timeout (counted in ``programs`` too)."""
        self._nodes: dict[str, _Node] = {}
        self._seen: set[str] = set()
        self._refusals: list[BaseException] = []
        self._joined: list[NodeInfo] = []
        self._queue = BatchQueue()
        self._calls: set[Call] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()
        self._changed = asyncio.Event()
        self._started = False
        self._failure: SandboxUnavailable | None = None
        self._orphaned: float | None = None
        self._ray: Any = None
        self._remote: Any = None
        self._own_init = False

    async def __aenter__(self) -> ClusterSandbox:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def nodes(self) -> list[NodeInfo]:
        """The nodes in use now."""
        return [node.info for node in self._nodes.values()]

    @property
    def joined(self) -> list[NodeInfo]:
        """Every node that was used, lost ones included (kept after :meth:`close`)."""
        return list(self._joined)

    async def start(self) -> None:
        """Connect to the cluster and start a pool on every node with CPUs; wait (``node_wait``) for one."""
        self._ray = _import_ray()
        await self._connect()
        self._remote = self._ray.remote(num_cpus=0, max_restarts=0)(NodeRunner)
        deadline = time.monotonic() + self.options.node_wait
        await self._discover()
        while not self._nodes and time.monotonic() < deadline:
            await asyncio.sleep(self.options.poll_seconds)
            await self._discover()
        if not self._nodes:
            await self.close()
            raise self._start_failure()
        self.isolation = min((n.info.isolation for n in self._nodes.values()), key=_STRENGTH.__getitem__)
        self._warn_unsandboxed()
        self._started = True
        self._spawn(self._watch())
        self._spawn(self._dispatch())

    async def _connect(self) -> None:
        """Connect unless the caller is connected already; first check that something answers at the
        address, so a wrong one fails in seconds (``_cluster_reach.py``)."""
        ray = self._ray
        if ray.is_initialized():
            return  # the caller's own connection (a notebook, a test): used, and left open
        seconds = self.options.connect_seconds
        problem = None if seconds is None else await reach_problem(self.address, os.environ, seconds)
        try:
            if problem is not None:
                raise ConnectionError(problem)
            with bounded_ray_init():
                self._init()
        except ConnectionError as exc:
            raise UserError(
                f"no Ray cluster at {self.address!r} ({exc}); start one with `ray start --head`, "
                "or give its address (ray://HOST:10001, or HOST:6379)"
            ) from None  # ConnectionError: Ray's own reason, or nothing answering at the address
        self._own_init = True

    def _init(self) -> None:
        """``ray.init``; through Ray Client, tried up to three times when the head could not start its server
        for this client ("Initialization failure from server": the server dies as it starts, an intermittent
        upstream race, ray-project/ray#63202)."""
        for attempt in range(3):
            try:
                self._ray.init(address=self.address, logging_level="warning", log_to_driver=False)
                return
            except ConnectionError as exc:
                if attempt == 2 or "Initialization failure from server" not in str(exc):
                    raise

    def _start_failure(self) -> RefinelabError:
        refused = [event for event in self.events if event.kind == "refused"]
        if not refused:
            return InfrastructureError(
                f"the Ray cluster at {self.address!r} has no node with CPUs for programs after "
                f"{self.options.node_wait:g} s (a node offers CPUs unless started with --num-cpus=0)"
            )
        first = refused[0]
        message = f"no cluster node could run programs; {first.node}: {first.detail}"
        users = all(isinstance(error, UserError) for error in self._refusals)
        return UserError(message) if users else InfrastructureError(message)

    def _warn_unsandboxed(self) -> None:
        if self.isolation != "none":
            return
        names = ", ".join(info.name for info in self.nodes if info.isolation == "none")
        warnings.warn(
            f"UNSANDBOXED: candidate code runs with rlimits only on cluster nodes {names}", SandboxWarning, stacklevel=3
        )

    async def close(self) -> None:
        """Stop the nodes' pools and the driver's tasks; callers still waiting get an infrastructure error."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        closed = InfrastructureError("the cluster sandbox was closed")
        self._queue.drain()
        for call in list(self._calls):
            call.fail(closed)
        nodes = list(self._nodes.values())
        self._nodes.clear()
        self.size = 0
        await asyncio.gather(*(self._stop(node) for node in nodes), return_exceptions=True)
        if self._own_init:
            self._ray.shutdown()
            self._own_init = False

    async def _stop(self, node: _Node) -> None:
        try:
            await asyncio.wait_for(node.actor.stop.remote(), 30.0)
        finally:
            self._ray.kill(node.actor)

    # --- the Sandbox role ---------------------------------------------------------------------

    async def run(self, code: str, suite: Suite, *, limits: Limits | None = None) -> RunResult:
        """Run one program against a suite and judge every test."""
        (result,) = await self.run_items([(code, suite)], limits=limits)
        return result

    async def run_items(
        self, items: Sequence[Item], *, limits: Limits | None = None, isolate: bool = False
    ) -> list[RunResult]:
        """Run programs, each against its own suite, on the cluster; judge every test here; item order.

        Only the programs and their suites' inputs (each test's CPU limit resolved here) go to the nodes.
        The timeout rerun follows the local pool's rule (``_confirm.py``), decided here, where the
        outcomes are judged; a node runs the reruns it is sent. Each result records the node it ran on
        and that node's isolation.
        """
        limits = limits or self.limits
        inputs = input_items(items, limits)
        found = await self._run(inputs, limits, isolate)
        ran = [i for i, run in enumerate(found) if run is not None]
        runs = [run for run in found if run is not None]
        results = await confirmed([items[i] for i in ran], [inputs[i] for i in ran], runs, limits, self._alone(limits))
        judged = dict(zip(ran, results))
        return [judged.get(i, RunResult((), self.isolation)) for i in range(len(items))]

    def _alone(self, limits: Limits) -> Rerun:
        """How a confirming rerun runs on the cluster: one program, in a fresh process, on a node."""

        async def rerun(code: str, inputs: SuiteInputs) -> Ran:
            self.stats["reruns"] += 1  # delivered again on purpose: "programs" counts it too
            (ran,) = await self._run([(code, inputs)], limits, True)
            assert ran is not None, "a rerun has tests"
            return ran

        return rerun

    async def values(  # noqa: PLR0913 - the Sandbox role's values(): keywords, each what one caller sets
        self,
        code: str,
        expressions: Sequence[str],
        *,
        entry_point: str | None = None,
        setup: str = "",
        limits: Limits | None = None,
        arguments: Sequence[str] | None = None,
        encoded: bool = False,
    ) -> list[object | TestOutcome]:
        """Evaluate expressions against a trusted program on a node (see :meth:`WorkerPool.values`)."""
        tests = value_tests(expressions, arguments)
        suite = Suite.of(tests, entry_point=entry_point, setup=setup)
        limits = limits or self.limits
        (ran,) = await self._run([(code, suite.value_inputs(limits))], limits, True)
        return values_of(tests, ran.reports if ran is not None else (), encoded=encoded)

    async def _run(self, items: Sequence[InputItem], limits: Limits, isolate: bool) -> list[Ran | None]:
        if self._failure is not None:
            raise self._failure
        if not self._started:
            raise RuntimeError("start the ClusterSandbox first (async with ClusterSandbox(...) as sandbox)")
        call = Call(len(items), sum(1 for _, inputs in items if inputs.tests))
        self._calls.add(call)
        try:
            self._queue.put(chunks_of(call, items, RunKey(limits, isolate), self.batch_size, len(self._nodes)))
            self._changed.set()
            await call.done
        finally:
            self._calls.discard(call)
        return call.results()

    # --- nodes ----------------------------------------------------------------------------------

    async def _discover(self) -> None:
        """Start a pool on every live node with CPUs not seen before."""
        try:
            listed = await asyncio.to_thread(self._ray.nodes)
        except Exception:  # noqa: BLE001 - the cluster itself is unreachable: no node joins, the watch goes on
            return
        new = [n for n in listed if n.get("Alive") and n["NodeID"] not in self._seen and self._usable(n)]
        self._seen.update(n["NodeID"] for n in new)
        await asyncio.gather(*(self._join(n) for n in new))

    def _usable(self, listed: dict[str, Any]) -> bool:
        """A node offering CPUs (and the chosen resource, if any)."""
        resource = self.options.node_resource
        return _cpus(listed) >= 1 and (resource is None or (listed.get("Resources") or {}).get(resource, 0) > 0)

    async def _join(self, listed: dict[str, Any]) -> None:
        node_id = str(listed["NodeID"])
        name = f"{listed.get('NodeManagerAddress', '?')}/{node_id[:12]}"
        workers = self.options.workers_per_node or _cpus(listed)
        setup = NodeSetup(self.limits, self.mode, self.packages, workers, _WORKER_BATCH)
        strategy = self._ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(node_id, soft=False)
        actor = self._remote.options(scheduling_strategy=strategy).remote(setup)
        try:
            info: NodeInfo = await asyncio.wait_for(actor.start.remote(), self.options.start_timeout)
        except Exception as exc:  # noqa: BLE001 - whatever kept the node from starting is reported as its refusal
            self._refuse(name, actor, exc)
            return
        problem = self._incompatible(info)
        if problem is not None:
            await asyncio.gather(self._stop(_Node(info, actor)), return_exceptions=True)
            self._refusals.append(UserError(problem))
            self._event("refused", info.name, problem)
            return
        self._nodes[node_id] = _Node(info, actor)
        self._joined.append(info)
        self.size += info.workers
        self._orphaned = None
        self._event("joined", info.name, f"{info.hostname}: {info.workers} workers, isolation {info.isolation}")
        self._changed.set()

    def _incompatible(self, info: NodeInfo) -> str | None:
        from refinelab._version import __version__

        if info.version != __version__:
            return f"refinelab {info.version} there, {__version__} here: install the same version on every node"
        if self._started and _STRENGTH[info.isolation] < _STRENGTH[self.isolation]:
            return f"its isolation is {info.isolation}, weaker than the run's {self.isolation}"
        return None

    def _refuse(self, name: str, actor: Any, error: BaseException) -> None:
        try:
            self._ray.kill(actor)
        except Exception:  # noqa: BLE001, S110 - the actor may never have started
            pass
        self._refusals.append(_cause(error))
        self._event("refused", name, _reason(error))

    def _lose(self, node: _Node, reason: str) -> None:
        if not node.alive:
            return
        node.alive = False
        self._nodes.pop(node.info.node_id, None)
        self.size -= node.info.workers
        self._event("lost", node.info.name, reason)
        try:
            self._ray.kill(node.actor)
        except Exception:  # noqa: BLE001, S110 - it is gone already
            pass
        if not self._nodes:
            self._orphaned = time.monotonic()
            self._wake.set()

    async def _watch(self) -> None:
        """Look for nodes that joined; give up once none has been left for ``node_wait`` seconds."""
        while True:
            try:
                await asyncio.wait_for(self._wake.wait(), self.options.poll_seconds)
            except asyncio.TimeoutError:
                pass
            self._wake.clear()
            await self._discover()
            orphaned = self._orphaned
            if not self._nodes and orphaned is not None and time.monotonic() - orphaned >= self.options.node_wait:
                self._give_up()

    def _give_up(self) -> None:
        lost = [event for event in self.events if event.kind == "lost"]
        last = f"; the last, {lost[-1].node}, was lost: {lost[-1].detail}" if lost else ""
        self._failure = SandboxUnavailable(
            f"no cluster node is left to run programs{last}; none joined within {self.options.node_wait:g} s. "
            "The run stops here; run it again to resume"
        )
        for chunk in self._queue.drain():
            chunk.call.fail(self._failure)
        for call in list(self._calls):
            call.fail(self._failure)

    # --- batches --------------------------------------------------------------------------------

    async def _dispatch(self) -> None:
        """Give queued programs to the least busy node with room, whenever work arrives or a batch ends."""
        while True:
            await self._changed.wait()
            self._changed.clear()
            while free := [n for n in self._nodes.values() if n.busy < self.options.in_flight]:
                node = min(free, key=lambda n: n.busy)
                slots = sum(self.options.in_flight - n.busy for n in free)
                share = -(-self._queue.programs // slots)  # small calls merge, but not onto one node
                chunks = self._queue.take(min(max(self.batch_size, 2 * node.info.workers), share))
                if not chunks:
                    break
                node.busy += 1
                self._spawn(self._send(node, chunks))

    async def _send(self, node: _Node, chunks: list[Chunk]) -> None:
        """Run a batch on ``node`` and deliver it; a lost node's batch is queued again for another."""
        try:
            found = await self._run_on(node, chunks)
        except Exception as exc:  # noqa: BLE001 - a bug on the node: its callers raise it, the node stays
            for chunk in chunks:
                chunk.call.fail(exc)
        else:
            if isinstance(found, _Lost):
                self._retry(chunks, node, found.reason)
                self._lose(node, found.reason)
            else:
                self._deliver(chunks, found, node)
        finally:
            node.busy -= 1
            self._changed.set()

    async def _run_on(self, node: _Node, chunks: list[Chunk]) -> list[ProgramReports] | _Lost:
        """The node's reports for the chunks' programs, or why the node is lost; raises what a bug raised."""
        items = [item for chunk in chunks for item in chunk.items]
        limits, isolate = chunks[0].key.limits, chunks[0].key.isolate
        batch = NodeBatch(tuple(p for p, _ in items), tuple(inputs for _, inputs in items), limits, isolate)
        errors = self._ray.exceptions
        try:
            found: list[ProgramReports] = await node.actor.run.remote(batch)
        except InfrastructureError as exc:  # the node's pool could not go on (a worker would not restart)
            return _Lost(_reason(exc))
        except errors.RayTaskError:
            raise
        except errors.RayError as exc:  # the actor or its node died, or the connection to it broke
            return _Lost(_reason(exc))
        if len(found) != len(items):
            return _Lost(f"the node answered {len(found)} of {len(items)} programs")
        return found

    def _deliver(self, chunks: list[Chunk], found: list[ProgramReports], node: _Node) -> None:
        reports = iter(found)
        for chunk in chunks:
            for index in chunk.indices:
                chunk.call.put(index, Ran(next(reports), node.info.name, node.info.isolation))
        self.stats["batches"] += 1
        self.stats["programs"] += len(found)

    def _retry(self, chunks: list[Chunk], node: _Node, reason: str) -> None:
        """Queue a lost node's chunks again, first; a chunk that went through ``max_tries`` lost nodes fails."""
        again = []
        for chunk in chunks:
            chunk.tries += 1
            if chunk.tries >= self.options.max_tries:
                chunk.call.fail(
                    InfrastructureError(f"{chunk.tries} nodes were lost while running these programs (last: {reason})")
                )
            else:
                again.append(chunk)
        self._queue.put(again, front=True)
        self._changed.set()
        self.stats["retried_batches"] += 1
        programs = sum(len(chunk.items) for chunk in again)
        self._event("retried", node.info.name, f"{programs} programs queued again ({reason})")

    def _event(self, kind: ClusterEventKind, node: str, detail: str) -> None:
        self.events.append(ClusterEvent(kind, node, detail, time.time()))

    def _spawn(self, work: Any) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _cpus(listed: dict[str, Any]) -> int:
    resources = listed.get("Resources") or {}
    return int(resources.get("CPU", 0))


def _cause(exc: BaseException) -> BaseException:
    """The exception a node raised, not Ray's wrapping of it."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc


def _reason(exc: BaseException) -> str:
    """One line saying why, from an exception a node raised."""
    error = _cause(exc)
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"


def _import_ray() -> Any:
    try:
        import ray
        import ray.util.scheduling_strategies  # checked here, used when nodes join
    except ImportError:
        raise MissingDependency("the cluster sandbox needs Ray: pip install 'refinelab[ray]'") from None
    return ray
