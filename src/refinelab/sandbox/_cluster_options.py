"""How :class:`~refinelab.sandbox.ClusterSandbox` uses a cluster, and what it reports happened to nodes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class ClusterOptions:
    """How the driver uses the cluster; none of it changes a verdict."""

    batch_size: int = 64
    """Programs per batch sent to a node (at least two per worker of that node)."""
    in_flight: int = 2
    """Batches a node holds at once: one running, one ready, so its workers never wait for the driver."""
    workers_per_node: int | None = None
    """Workers on each node (default: the CPUs the node offers Ray, never more than its cores)."""
    poll_seconds: float = 2.0
    """How often the driver looks for nodes that joined or died."""
    node_wait: float = 60.0
    """How long to wait for a node to join once none is left (or at start) before giving up."""
    start_timeout: float = 300.0
    """How long a node may take to start its pool."""
    max_tries: int = 3
    """Lost nodes a batch may go through before its programs fail as an infrastructure error."""
    connect_seconds: float | None = 5.0
    """How long a TCP connection to the cluster's address may take before nothing counts as answering there:
    checked before Ray is asked to connect, so a wrong address fails in seconds (``_cluster_reach.py``);
    ``None``: not checked."""
    node_resource: str | None = None
    """Use only the nodes offering this custom Ray resource (``ray start --resources='{"refinelab": 1}'``),
    e.g. to keep programs off a shared cluster's GPU nodes. Default: every node with CPUs."""


ClusterEventKind = Literal["joined", "refused", "lost", "retried"]
"""``joined``: a node's pool is up and in use; ``refused``: a node could not be used (it failed to
start, or has another refinelab version or weaker isolation than the run); ``lost``: a node died or its
pool broke; ``retried``: a lost node's batch was queued again."""


@dataclass(frozen=True)
class ClusterEvent:
    """Something that happened to the cluster during a run (never part of a verdict)."""

    kind: ClusterEventKind
    """What happened."""
    node: str
    """The node (``ADDRESS/NODE-ID-PREFIX``)."""
    detail: str
    """Why, or what it means."""
    at: float
    """When (seconds since the epoch)."""
