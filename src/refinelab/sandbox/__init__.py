"""Running untrusted candidate code against tests, isolated and fast.

See docs/design/sandbox.md for the threat model and how verdicts are protected.
"""

from refinelab.sandbox._cluster import ClusterSandbox
from refinelab.sandbox._cluster_node import NodeInfo
from refinelab.sandbox._cluster_options import ClusterEvent, ClusterOptions
from refinelab.sandbox._compare import outputs_match, values_match
from refinelab.sandbox._fake import FakeSandbox
from refinelab.sandbox._judge import judge
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._loading import Loading
from refinelab.sandbox._open import ISOLATION_MODES, SandboxSettings, cluster_problem, open_sandbox
from refinelab.sandbox._outcome import IsolationLevel, RunResult, TestOutcome, Verdict, outcomes_json
from refinelab.sandbox._packed import Packed
from refinelab.sandbox._pool import WorkerPool
from refinelab.sandbox._protocol import Sandbox
from refinelab.sandbox._reference import prepare_benchmark, stream_benchmark
from refinelab.sandbox._scoring import run_scored, stages
from refinelab.sandbox._suite import Item, Suite, SuiteInputs
from refinelab.sandbox._workers import IsolationMode, SandboxWarning, default_workers

__all__ = [
    "ISOLATION_MODES",
    "ClusterEvent",
    "ClusterOptions",
    "ClusterSandbox",
    "FakeSandbox",
    "IsolationLevel",
    "IsolationMode",
    "Item",
    "Limits",
    "Loading",
    "NodeInfo",
    "Packed",
    "RunResult",
    "Sandbox",
    "SandboxSettings",
    "SandboxWarning",
    "Suite",
    "SuiteInputs",
    "TestOutcome",
    "Verdict",
    "WorkerPool",
    "cluster_problem",
    "default_workers",
    "judge",
    "open_sandbox",
    "outcomes_json",
    "outputs_match",
    "prepare_benchmark",
    "run_scored",
    "stages",
    "stream_benchmark",
    "values_match",
]
