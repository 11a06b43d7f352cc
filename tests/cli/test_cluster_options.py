"""Choosing where programs run and which servers answer: ``--cluster`` and ``[sandbox] cluster``,
repeated ``--base-url``; and a run whose sandbox is gone stops, to resume. (Runs on a real cluster are
in tests/sandbox/cluster_cases.py.)"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.errors import InputError, SandboxUnavailable, UserError
from refinelab.experiment import BenchmarkChoice, ExperimentSpec, load_spec, resolve_sources, run_experiment
from refinelab.models import RetryPolicy
from refinelab.runtime import Flags, Settings, open_runtime, resolve_settings
from refinelab.sandbox import (
    ClusterOptions,
    ClusterSandbox,
    FakeSandbox,
    Item,
    Limits,
    RunResult,
    Sandbox,
    SandboxSettings,
    Suite,
    WorkerPool,
    cluster_problem,
)
from refinelab.store import Store
from refinelab.strategies import StrategySpec
from refinelab.testing import serve
from tests.experiment.fakes import reply, write_benchmark


@pytest.mark.parametrize("address", ["auto", "ray://head:10001", "10.0.0.5:6379", "ray://[::1]:10001"])
def test_good_cluster_addresses(address: str) -> None:
    assert cluster_problem(address) is None


@pytest.mark.parametrize(
    ("address", "problem"),
    [("head", "needs a port"), ("ray://head", "needs a port"), ("http://head:8265", "use auto, ray://"), ("", "use")],
)
def test_bad_cluster_addresses_say_what_to_write(address: str, problem: str) -> None:
    found = cluster_problem(address)
    assert found is not None and problem in found


def test_the_runtime_opens_the_cluster_only_when_one_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    async def nothing(self: ClusterSandbox) -> None:
        pass

    monkeypatch.setattr(ClusterSandbox, "start", nothing)  # no Ray here: what is opened, not what it reaches
    monkeypatch.setattr(ClusterSandbox, "close", nothing)

    async def opened(settings: Settings, request: SandboxSettings) -> Sandbox:
        async with open_runtime(settings) as runtime:
            return await runtime.open_sandbox(request)

    with pytest.warns(UserWarning, match="UNSANDBOXED"):
        local = asyncio.run(opened(Settings(workers=1), SandboxSettings(isolation="none")))
    assert isinstance(local, WorkerPool)
    request = SandboxSettings(limits=Limits(cpu_seconds=2))
    cluster = asyncio.run(opened(Settings(cluster="ray://head:10001"), request))
    assert isinstance(cluster, ClusterSandbox) and cluster.address == "ray://head:10001"
    assert cluster.limits.cpu_seconds == 2
    named = asyncio.run(opened(Settings(cluster="ray://head:10001"), replace(request, cluster="auto")))
    assert isinstance(named, ClusterSandbox) and named.address == "auto"  # the request's own wins


def test_the_flag_wins_over_the_environment_which_wins_over_the_project_config(tmp_path: Path) -> None:
    config = tmp_path / "refinelab.toml"
    config.write_text('[sandbox]\ncluster = "ray://from-config:10001"\n')
    environ = {"REFINELAB_CLUSTER": "10.0.0.5:6379"}
    assert resolve_settings(Flags(), {}, tmp_path).cluster == "ray://from-config:10001"
    assert resolve_settings(Flags(), environ, tmp_path).cluster == "10.0.0.5:6379"
    assert resolve_settings(Flags(cluster="auto"), environ, tmp_path).cluster == "auto"
    (tmp_path / "other.toml").write_text("[models.aliases]\nx = 'vllm:y'\n")
    assert resolve_settings(Flags(config=tmp_path / "other.toml"), {}, tmp_path).cluster is None


@pytest.mark.parametrize(
    ("table", "field"),
    [
        ("cluster = 5", "sandbox.cluster"),
        ('cluster = "gpu-box"', "sandbox.cluster"),
        ("nodes = 2", "sandbox.nodes"),
    ],
)
def test_a_bad_sandbox_table_names_the_file_line_and_field(tmp_path: Path, table: str, field: str) -> None:
    config = tmp_path / "refinelab.toml"
    config.write_text(f"[sandbox]\n{table}\n")
    with pytest.raises(InputError, match=rf"refinelab\.toml:2: field '{field}'"):
        resolve_settings(Flags(), {}, tmp_path)


def test_a_bad_cluster_variable_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"^\$REFINELAB_CLUSTER: cluster address 'gpu-box' needs a port"):
        resolve_settings(Flags(), {"REFINELAB_CLUSTER": "gpu-box"}, tmp_path)


def test_bad_cluster_flags_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"task_id": "HumanEval/0", "completion": "    pass\\n"}\n')
    assert main(["check", str(samples), "--benchmark", "humaneval", "--cluster", "gpu-box"], {}) == 2
    assert capsys.readouterr().err.strip().startswith("refinelab: error: --cluster: cluster address 'gpu-box'")


def test_without_ray_a_cluster_run_names_the_extra(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"task_id": "HumanEval/0", "completion": "    pass\\n"}\n')
    assert main(["check", str(samples), "--benchmark", "humaneval", "--cluster", "auto"], {}) == 2
    assert "pip install 'refinelab[ray]'" in capsys.readouterr().err


def test_a_cluster_address_where_nothing_listens_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ray itself would retry such an address for minutes, a warning each time; the address is tried
    first, so the command says so at once."""
    pytest.importorskip("ray", reason="the cluster sandbox needs Ray: pip install 'refinelab[ray]'")
    problem = {"id": "echo", "kind": "stdio", "prompt": "Echo.", "hidden_tests": [{"stdin": "a\n", "stdout": "a\n"}]}
    data = tmp_path / "problems.jsonl"
    data.write_text(json.dumps(problem) + "\n", encoding="utf-8")
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, not listening: nothing answers there
        address = f"127.0.0.1:{closed.getsockname()[1]}"
        argv = ["check", "--self-test", "--benchmark", "jsonl", "--data", str(data), "--cluster", address]
        assert main(argv, {}) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"refinelab: error: no Ray cluster at '{address}' (nothing answers")


def test_replicas_do_not_change_the_run_id(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'actors = ["vllm:m"]\nstrategies = ["single-pass"]\nbase_url = ["http://a:8000/v1", "http://b:8000/v1"]\n'
        '[[benchmarks]]\nname = "humaneval"\n'
    )
    loaded = load_spec(spec)
    assert loaded.base_url == ("http://a:8000/v1", "http://b:8000/v1")
    assert loaded.run_id == replace(loaded, base_url="http://a:8000/v1").run_id == replace(loaded, base_url=None).run_id
    assert ExperimentSpec.from_json(loaded.to_json()).base_url == loaded.base_url


class Vanishing(FakeSandbox):
    """A sandbox whose nodes are all gone after ``left`` calls."""

    def __init__(self, left: int) -> None:
        super().__init__()
        self.left = left

    def _call(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise SandboxUnavailable("no cluster node is left to run programs")

    async def run_items(
        self, items: Sequence[Item], *, limits: Limits | None = None, isolate: bool = False
    ) -> list[RunResult]:
        self._call()
        return [await super(Vanishing, self).run(code, suite) for code, suite in items]

    async def run(self, code: str, suite: Suite, *, limits: Limits | None = None) -> RunResult:
        self._call()  # a call like any other
        return await super().run(code, suite, limits=limits)


@asynccontextmanager
async def opened(sandbox: Sandbox) -> AsyncIterator[Sandbox]:
    yield sandbox


def test_a_run_whose_sandbox_is_gone_stops_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_benchmark(tmp_path / "problems.jsonl", n=4)
    settings = Settings(
        store=tmp_path / "s.sqlite", cache=tmp_path / "c.sqlite", retry=RetryPolicy(attempts=2, base_seconds=0.01)
    )
    with serve(reply) as server:
        benchmarks, strategies = (BenchmarkChoice("jsonl", str(data)),), (StrategySpec("single-pass"),)
        spec = ExperimentSpec(benchmarks, strategies, ("fake",), base_url=server.base_url, concurrency=1)
        spec = resolve_sources(spec, settings)  # the run id covers the benchmark file's bytes
        # two units' calls: each runs its visible tests, then its hidden ones
        monkeypatch.setattr("refinelab.runtime._runtime.open_sandbox", lambda request: opened(Vanishing(4)))
        with pytest.raises(SandboxUnavailable):
            asyncio.run(run_experiment(spec, settings))
        with Store(settings.store) as store:
            run = store.run(spec.run_id)
            assert run.status == "failed" and "no cluster node is left" in (run.note or "")
            assert len(store.trajectories(spec.run_id)) == 2 and store.failures(spec.run_id) == []
        monkeypatch.setattr("refinelab.runtime._runtime.open_sandbox", lambda request: opened(FakeSandbox()))
        again = asyncio.run(run_experiment(spec, settings))
    assert (again.progress.skipped, again.progress.done) == (2, 2)


def test_a_check_on_one_cluster_node_says_node_not_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    from refinelab.cli._check import _isolation
    from refinelab.sandbox import _cluster as cluster_module
    from tests.sandbox.fake_ray import FakeNode, FakeRay

    async def described(nodes: int) -> str:
        fake = FakeRay([FakeNode(str(i) * 20) for i in range(nodes)])
        monkeypatch.setattr(cluster_module, "_import_ray", lambda: fake)
        async with ClusterSandbox("fake", options=ClusterOptions(poll_seconds=0.01, node_wait=0.2)) as sandbox:
            return _isolation(sandbox)

    assert asyncio.run(described(1)).endswith(", on 1 cluster node")
    assert asyncio.run(described(2)).endswith(", on 2 cluster nodes")
