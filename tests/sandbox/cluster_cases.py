"""The cluster sandbox on a real Ray cluster: a head (no CPUs for programs) and worker nodes started on
this machine with ``ray.cluster_utils.Cluster`` (under ``RAY_TMPDIR``, which ``test_cluster.py`` sets
to a directory of its own, so nothing is written to the machine's shared ``/tmp/ray``).

Run only inside a loopback-only network namespace (``test_cluster.py`` runs this file there): Ray
advertises the machine's address, and no test may send traffic anywhere but loopback. The cluster is
this session's own and is shut down at the end. Every program here is bounded (by its own loop count
or by the CPU limit).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from refinelab.errors import SandboxUnavailable
from refinelab.problems import CallTest, StdioTest, load_humaneval, load_livecodebench
from refinelab.sandbox import (
    ClusterOptions,
    ClusterSandbox,
    Item,
    Limits,
    RunResult,
    Suite,
    WorkerPool,
    run_scored,
)
from refinelab.verification import agreement_limits
from tests.sandbox.loopback import loopback_only
from tests.sandbox.test_cheap_failures import SPIN_FOR
from tests.sandbox.test_real_programs import single_pass_items
from tests.sandbox.test_timeouts import SLOW_THE_FIRST_TIME, SPIN

pytestmark = [
    pytest.mark.skipif(not loopback_only(), reason="only inside a loopback-only network namespace (test_cluster.py)"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::ResourceWarning", "ignore::FutureWarning"),
]


SPIN_STDIO = """
import time
seconds = float(input())
end = time.process_time() + seconds
while time.process_time() < end:
    pass
print(seconds)
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Harness:
    """This session's cluster: the head, and worker nodes each offering one CPU and a named resource."""

    def __init__(self) -> None:
        from ray.cluster_utils import Cluster

        self.client_port = free_port()
        head: dict[str, Any] = {
            "num_cpus": 0,
            "node_ip_address": "127.0.0.1",
            "include_dashboard": False,
            "ray_client_server_port": self.client_port,
        }
        self.cluster: Any = Cluster()  # Ray's cluster_utils are untyped
        self.head = self._started(lambda: self.cluster.add_node(**head))
        self.base = [self.add("base") for _ in range(2)]

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def add(self, resource: str) -> Any:
        return self._started(
            lambda: self.cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1", resources={resource: 1})
        )

    @staticmethod
    def _started(start: Callable[[], Any]) -> Any:
        """Ray gives a node 30 s to register, which a machine this loaded can exceed (its three Python
        agents start first): setting up the cluster is tried up to three times before the test errs."""
        for _ in range(2):
            try:
                return start()
            except Exception as exc:
                if "timed out during startup" not in str(exc):
                    raise
        return start()

    def remove(self, node: Any) -> None:
        self.cluster.remove_node(node, allow_graceful=False)


@pytest.fixture(scope="session")
def cluster() -> Iterator[Harness]:
    harness = Harness()
    try:
        yield harness
    finally:
        harness.cluster.shutdown()


def options(resource: str, **more: Any) -> ClusterOptions:
    return ClusterOptions(node_resource=resource, poll_seconds=0.3, **more)


def run_on(sandbox: ClusterSandbox | WorkerPool, items: list[Item], limits: Limits | None = None) -> list[RunResult]:
    async def main() -> list[RunResult]:
        async with sandbox:
            return await sandbox.run_items(items, limits=limits)

    return asyncio.run(main())


def counting(count: int, spin: int = 20_000) -> list[Item]:
    """Programs that each burn a little CPU and return their own number."""
    body = "def f():\n    total = 0\n    for i in range({spin}):\n        total += i\n    return {n}\n"
    return [(body.format(spin=spin, n=n), Suite.of([CallTest("f()", n)], entry_point="f")) for n in range(count)]


# --- verdicts -------------------------------------------------------------------------------------


def humaneval_items() -> list[Item]:
    """HumanEval's reference solutions and, for each, two wrong programs: the reference with its first
    ``return`` returning nothing, and a stub."""
    items: list[Item] = []
    for problem in load_humaneval():
        assert problem.reference is not None
        suite = Suite.hidden(problem)
        head, body = problem.reference[: len(problem.prompt)], problem.reference[len(problem.prompt) :]
        broken = head + body.replace("return ", "return None  # ", 1)
        items += [(problem.reference, suite), (broken, suite), (problem.prompt + "    pass\n", suite)]
    return items


def real_items(data: Path) -> list[Item]:
    """Every HumanEval program three real models wrote (right and wrong), and 60 LiveCodeBench
    stdin/stdout programs o1-mini wrote."""
    items = [item for item in single_pass_items(data) if "def " in item[0]][: 3 * 164]
    lcb = {p.id: p for p in load_livecodebench(data / "benchmarks/livecodebench-v5-public-tests.jsonl.gz")}
    records = json.load(gzip.open(data / "llm-outputs/livecodebench/o1-mini-2024-09-12.json.gz", "rt"))
    stdio = [(r["code_list"][0], lcb[r["question_id"]]) for r in records if lcb[r["question_id"]].kind == "stdio"]
    return items + [(code, Suite.visible(problem)) for code, problem in stdio[:60]]


def hostile_items() -> list[Item]:
    probe = Suite.of([CallTest("f()", "host")], entry_point="f")
    programs = [
        "def f():\n    return open('/etc/hostname').read()\n",
        "import os\ndef f():\n    return sorted(os.listdir('/root'))\n",
        "import os\ndef f():\n    return open(f'/proc/{os.getppid()}/environ').read()\n",
        "import socket\ndef f():\n    socket.create_connection(('127.0.0.1', 22), timeout=1)\n    return 'host'\n",
        "import refinelab\ndef f():\n    return open(refinelab.__file__).read()\n",
    ]
    return [(program, probe) for program in programs]


def verdicts(results: list[RunResult]) -> list[tuple[tuple[str, str], ...]]:
    return [tuple((o.verdict, o.message) for o in r.outcomes) for r in results]


def assert_same_verdicts(cluster: Harness, items: list[Item]) -> list[RunResult]:
    """The cluster's verdicts equal the local pool's (two workers, the same two cores), test by test."""
    remote = run_on(ClusterSandbox(cluster.address, options=options("base")), items)
    local = run_on(WorkerPool(workers=2), items)
    assert {r.node for r in remote if r.outcomes} == {f"127.0.0.1/{n.node_id[:12]}" for n in cluster.base}
    assert {r.isolation for r in remote} == {local[0].isolation}
    differing = [i for i, (a, b) in enumerate(zip(verdicts(remote), verdicts(local))) if a != b]
    assert len(differing) <= 3, [(items[i][0][:80], verdicts(remote)[i], verdicts(local)[i]) for i in differing]
    if differing:  # a program whose CPU time is the limit, give or take the noise: agree without a binding limit
        again = [items[i] for i in differing]
        generous = Limits(cpu_seconds=30)
        remote_again = run_on(ClusterSandbox(cluster.address, options=options("base")), again, generous)
        assert verdicts(remote_again) == verdicts(run_on(WorkerPool(workers=2), again, generous))
    return remote


def test_verdicts_equal_the_local_pools_on_humaneval(cluster: Harness) -> None:
    items = humaneval_items() + hostile_items()
    remote = assert_same_verdicts(cluster, items)
    assert [r.passed for r in remote[:492:3]] == [True] * 164
    assert sum(r.passed for r in remote[1:492:3]) < 40 and not any(r.passed for r in remote[2:492:3])
    assert not any(r.passed for r in remote[492:]), "a hostile probe reached the host"


def test_verdicts_equal_the_local_pools_on_real_model_programs(cluster: Harness, shared_data: Path) -> None:
    items = real_items(shared_data)
    remote = assert_same_verdicts(cluster, items)
    assert 0.3 < sum(r.passed for r in remote) / len(remote) < 0.95


def test_a_cpu_timeout_is_confirmed_on_a_node_before_it_stands(cluster: Harness, tmp_path: Path) -> None:
    """The driver judges the first run and sends the rerun the local pool's rule asks for back to a node."""
    log, mark = tmp_path / "log", tmp_path / "mark"
    code = SLOW_THE_FIRST_TIME.format(log=str(log), mark=str(mark), stall=SPIN)
    suite = Suite.of([CallTest("f(1)", 1), CallTest("f(2)", 2)], entry_point="f")
    sandbox = ClusterSandbox(cluster.address, isolation="none", options=options("base"))
    with pytest.warns(UserWarning, match="UNSANDBOXED"):
        (result,) = run_on(sandbox, [(code, suite)], Limits(cpu_seconds=0.3, timeout_grace=0.0))  # it stalls for ever
    assert result.passed and result.isolation == "none"
    assert len(log.read_text().splitlines()) == 3  # f(1) timed out, then f(1) and f(2) in the second run
    limits = Limits(cpu_seconds=0.3, timeout_reruns=0)
    mark.unlink()
    with pytest.warns(UserWarning, match="UNSANDBOXED"):
        (result,) = run_on(
            ClusterSandbox(cluster.address, isolation="none", options=options("base")), [(code, suite)], limits
        )
    assert [o.verdict for o in result.outcomes] == ["timeout", "skipped"]


def scored_on(sandbox: ClusterSandbox | WorkerPool, items: list[Item], limits: Limits) -> list[RunResult]:
    """``run_scored`` (identical programs once, stages when only the verdict is wanted) on ``sandbox``."""

    async def main() -> list[RunResult]:
        async with sandbox:
            return await run_scored(sandbox, items, limits=limits)

    return asyncio.run(main())


def test_per_test_limits_and_stopping_at_failure_equal_the_local_pools(cluster: Harness) -> None:
    """Each test's own CPU limit (following the reference's time, a suite's own, or dual agreement's short
    one) reaches the nodes, and a program stops at its first failure as it does locally: outcomes and the
    limit each timeout had equal the local pool's, test by test, under each rule."""
    following = Suite(tuple([CallTest("f(0.3)", 0.3)] * 2 + [CallTest("f(0.01)", 0.01)]), entry_point="f")
    following = replace(following, reference_seconds=(0.2, 0.01, 0.01))  # limits 0.8, 0.2 and 0.2 s
    own = replace(Suite.of([CallTest("f(0.3)", 0.3)] * 3, entry_point="f"), seconds=(2.0, 0.15, 2.0))
    wrong_first = Suite.of([CallTest("f(0.01)", 1), *[CallTest(f"f({s})", s) for s in (0.3, 0.01)]], entry_point="f")
    stdio = replace(
        Suite.of([StdioTest("0.01\n", "0.01\n"), StdioTest("0.3\n", "0.3\n")], kind="stdio"), seconds=(2.0, 0.15)
    )
    items = [(SPIN_FOR, following), (SPIN_FOR, own), (SPIN_FOR, wrong_first), (SPIN_STDIO, stdio)]
    rules = {
        "every outcome": Limits(cpu_seconds=30.0).following_reference(factor=4, floor=0.2),
        "verdict only": replace(Limits(cpu_seconds=0.2), stop_at_failure=True).following_reference(floor=0.2),
        "agreement": agreement_limits(0.2),
    }
    for name, limits in rules.items():
        remote = scored_on(ClusterSandbox(cluster.address, options=options("base")), items, limits)
        local = scored_on(WorkerPool(workers=2), items, limits)
        found = [[(o.verdict, o.limit_seconds) for o in r.outcomes] for r in remote]
        assert found == [[(o.verdict, o.limit_seconds) for o in r.outcomes] for r in local], name
    assert found[1] == [("pass", None), ("timeout", 0.15), ("pass", None)]  # agreement: every test's verdict


def test_reference_values_are_computed_on_a_node(cluster: Harness) -> None:
    async def main() -> list[object]:
        async with ClusterSandbox(cluster.address, options=options("base")) as sandbox:
            program = "def f(x):\n    return (x * 2,)\n"
            return [
                *await sandbox.values(program, ["f(21)", "f(None)"], entry_point="f"),
                *await sandbox.values(program, ["f(21)"], entry_point="f", encoded=True),
            ]

    value, failure, encoded = asyncio.run(main())
    assert value == (42,) and getattr(failure, "verdict", None) == "error" and encoded == {"T": [42]}


def test_ray_client_addresses_work(cluster: Harness) -> None:
    sandbox = ClusterSandbox(f"ray://127.0.0.1:{cluster.client_port}", options=options("base"))
    try:
        results = run_on(sandbox, counting(20, spin=10))
    except Exception as exc:  # show why Ray's client server did not start, from its own logs
        logs = sorted(Path(os.environ.get("RAY_TMPDIR", "/tmp")).glob("**/logs/ray_client_server*"))
        raise AssertionError(
            "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}" for log in logs)
        ) from exc
    assert all(r.passed for r in results) and {r.node for r in results} <= {
        f"127.0.0.1/{n.node_id[:12]}" for n in cluster.base
    }


# --- nodes joining and leaving --------------------------------------------------------------------
#
# These cases hold the programs back until the event under test has happened: each program marks that
# it started, then waits for a release file the test writes once the node has joined or is gone (as the
# sandbox sees it). However fast or loaded the machine, no program can finish early. Isolation is "none"
# so that the programs see the test's folder; each waits at most WAIT_BOUND seconds, then returns anyway.

WAIT_BOUND = 170
"""How long a held program waits for its release at most (its own bound; under the wall-clock backstop of
:data:`HELD_LIMITS`)."""
HELD_LIMITS = Limits(cpu_seconds=60.0)
"""Limits for held programs: a wall-clock backstop (181 s) longer than their own bound."""
HELD = """\
import os, time
def f(n):
    open(os.path.join({folder!r}, f"started-{{n}}"), "w").close()
    for _ in range({bound} * 20):
        if os.path.exists({release!r}):
            break
        time.sleep(0.05)
    return n
"""


class Held:
    """Programs held until :meth:`release`; each returns its own number (so a misdelivered result fails)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.release_file = folder / "release"
        code = HELD.format(folder=str(folder), release=str(self.release_file), bound=WAIT_BOUND)
        self.code = code

    def items(self, count: int) -> list[Item]:
        return [(self.code, Suite.of([CallTest(f"f({n})", n)], entry_point="f")) for n in range(count)]

    def started(self) -> int:
        return len(list(self.folder.glob("started-*")))

    def release(self) -> None:
        self.release_file.touch()


async def until(what: str, happened: Callable[[], bool], bound: float = 600.0) -> None:
    """Wait for an event (checked every 50 ms); a bug that keeps it from happening fails after ``bound``
    seconds instead of hanging (a hang guard, not a timing assertion)."""
    deadline = asyncio.get_running_loop().time() + bound
    while not happened():
        assert asyncio.get_running_loop().time() < deadline, f"never happened: {what}"
        await asyncio.sleep(0.05)


def held_sandbox(cluster: Harness, resource: str, **more: Any) -> ClusterSandbox:
    return ClusterSandbox(cluster.address, isolation="none", limits=HELD_LIMITS, options=options(resource, **more))


def events(sandbox: ClusterSandbox, kind: str) -> list[str]:
    return [event.node for event in sandbox.events if event.kind == kind]


def node_name(node: Any) -> str:
    return f"127.0.0.1/{node.node_id[:12]}"


def test_a_node_that_joins_mid_run_is_used(cluster: Harness, tmp_path: Path) -> None:
    first, held = cluster.add("join"), Held(tmp_path)
    joined: list[Any] = []

    async def main() -> list[RunResult]:
        async with held_sandbox(cluster, "join", batch_size=8) as sandbox:
            run = asyncio.ensure_future(sandbox.run_items(held.items(40)))
            await until("the first node runs a program", lambda: held.started() >= 1)
            joined.append(cluster.add("join"))  # in the main thread (Ray sets signal handlers); the run waits
            await until("the joined node runs a program too", lambda: held.started() >= 2)
            held.release()  # one worker per node, each program held: two started means both nodes hold work
            return await run

    try:
        with pytest.warns(UserWarning, match="UNSANDBOXED"):
            results = asyncio.run(main())
    finally:
        held.release()
        for node in [first, *joined]:
            cluster.remove(node)
    assert [r.passed for r in results] == [True] * 40
    assert {r.node for r in results} == {node_name(n) for n in [first, *joined]}


def test_a_node_killed_mid_run_loses_nothing_and_scores_nothing_twice(cluster: Harness, tmp_path: Path) -> None:
    doomed, held = cluster.add("base"), Held(tmp_path)
    items = held.items(48)
    seen: dict[str, Any] = {}
    name = node_name(doomed)

    async def main() -> list[RunResult]:
        async with held_sandbox(cluster, "base", batch_size=8) as sandbox:
            assert sandbox.size == 3
            run = asyncio.ensure_future(sandbox.run_items(items))
            # one worker per node and every program held: three started programs are one on each node
            await until("every node runs a program", lambda: held.started() >= 3)
            cluster.remove(doomed)
            await until("the sandbox sees the node lost", lambda: name in events(sandbox, "lost"))
            held.release()
            results = await run
            seen.update(events=list(sandbox.events), stats=dict(sandbox.stats), size=sandbox.size)
            return results

    try:
        with pytest.warns(UserWarning, match="UNSANDBOXED"):
            results = asyncio.run(main())
    finally:
        held.release()
    assert [r.passed for r in results] == [True] * len(items)
    assert seen["stats"]["programs"] == len(items), "a program was delivered twice, or not at all"
    assert name not in {r.node for r in results}  # the lost node's batches were all run again elsewhere
    kinds = [(event.kind, event.node) for event in seen["events"]]
    assert ("lost", name) in kinds and ("retried", name) in kinds, kinds
    assert seen["size"] == 2


def test_with_no_node_left_the_run_stops_as_an_infrastructure_error(cluster: Harness, tmp_path: Path) -> None:
    alone, held = cluster.add("alone"), Held(tmp_path)

    async def main() -> None:
        async with held_sandbox(cluster, "alone", node_wait=2.0) as sandbox:
            run = asyncio.ensure_future(sandbox.run_items(held.items(40)))
            await until("the node runs a program", lambda: held.started() >= 1)
            cluster.remove(alone)  # while its program is held: the run cannot have finished
            with pytest.raises(SandboxUnavailable, match="no cluster node is left"):
                await run

    try:
        with pytest.warns(UserWarning, match="UNSANDBOXED"):
            asyncio.run(main())
    finally:
        held.release()


# --- the command line and the library entry points ------------------------------------------------


def check(*argv: str) -> subprocess.CompletedProcess[str]:
    """``refinelab check`` in a child process (its own Ray driver, as a user runs it)."""
    return subprocess.run(
        [sys.executable, "-m", "refinelab", "check", *argv], capture_output=True, text=True, timeout=900
    )


def humaneval_samples(path: Path, count: int = 40) -> Path:
    """References, stubs and broken references for the first ``count`` HumanEval problems."""
    lines = []
    for program, suite in humaneval_items()[: 3 * count]:
        del suite
        lines.append(program)
    problems = load_humaneval()[:count]
    records = [{"task_id": p.id, "solution": lines[3 * i + k]} for i, p in enumerate(problems) for k in range(3)]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def out_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def without_node(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in line.items() if k != "node"} for line in lines]


def test_check_through_the_cluster_writes_the_local_results(cluster: Harness, tmp_path: Path) -> None:
    samples = humaneval_samples(tmp_path / "samples.jsonl")
    local, remote = tmp_path / "local.jsonl", tmp_path / "remote.jsonl"
    done = check(str(samples), "--benchmark", "humaneval", "--out", str(local))
    assert done.returncode == 0, done.stderr[-3000:]
    done = check(str(samples), "--benchmark", "humaneval", "--out", str(remote), "--cluster", cluster.address)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "cluster nodes" in done.stdout
    assert without_node(out_lines(remote)) == without_node(out_lines(local))
    assert {line["node"] for line in out_lines(local)} == {None}
    assert {str(line["node"]).split("/")[0] for line in out_lines(remote)} == {"127.0.0.1"}


def test_check_select_through_the_cluster_chooses_as_locally(cluster: Harness, tmp_path: Path) -> None:
    samples = humaneval_samples(tmp_path / "samples.jsonl")
    chosen = {}
    for where, extra in (("local", []), ("cluster", ["--cluster", "auto"])):
        out = tmp_path / f"{where}.jsonl"
        argv = [str(samples), "--benchmark", "humaneval", "--select", "dual-agreement", "--visible-tests", "join"]
        env_done = subprocess.run(
            [sys.executable, "-m", "refinelab", "check", *argv, "--out", str(out), *extra],
            capture_output=True, text=True, timeout=900, env={**os.environ, "RAY_ADDRESS": cluster.address},
        )  # fmt: skip
        assert env_done.returncode == 0, env_done.stderr[-3000:]
        chosen[where] = out_lines(out)
    assert chosen["cluster"] == chosen["local"] and len(chosen["local"]) == 40


def test_self_test_through_the_cluster_from_the_project_config(cluster: Harness, tmp_path: Path) -> None:
    (tmp_path / "refinelab.toml").write_text(f'[sandbox]\ncluster = "{cluster.address}"\n')
    done = subprocess.run(
        [sys.executable, "-m", "refinelab", "check", "--benchmark", "humaneval", "--self-test"],
        capture_output=True, text=True, timeout=900, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "reference solutions pass on 164 of 164" in done.stdout and "cluster nodes" in done.stdout


def test_run_through_the_cluster_stores_the_local_verdicts_and_the_nodes(cluster: Harness, tmp_path: Path) -> None:
    from refinelab.cli import main
    from refinelab.testing import serve
    from tests.experiment.fakes import reply, write_benchmark

    data = write_benchmark(tmp_path / "problems.jsonl", n=6)
    exports = {}
    with serve(reply) as server:
        for where, extra in (("local", []), ("cluster", ["--cluster", cluster.address])):
            store = tmp_path / where / "store.sqlite"
            argv = [
                "run",
                "--benchmark",
                "jsonl",
                "--data",
                str(data),
                "--model",
                "fake",
                "--base-url",
                server.base_url,
            ]
            argv += ["--strategy", "exec-refine", "--strategy", "sampling(n=3)", "--store", str(store), "--quiet"]
            assert main([*argv, *extra], {}) == 0
            out = store.with_name("export.jsonl")
            assert main(["export", "--store", str(store), "--out", str(out)], {}) == 0
            exports[where] = out_lines(out)
    keep = ("problem_id", "strategy", "iteration", "code", "hidden_passed", "hidden_outcomes", "isolation")
    assert [{k: r[k] for k in keep} for r in exports["cluster"]] == [{k: r[k] for k in keep} for r in exports["local"]]
    assert {r["node"] for r in exports["local"]} == {None}
    assert all(str(r["node"]).startswith("127.0.0.1/") for r in exports["cluster"] if r["code"] is not None)


def test_solve_through_the_cluster(cluster: Harness, tmp_path: Path) -> None:
    from refinelab.solve import SolveOptions, solve_async
    from refinelab.testing import ScriptedModel
    from tests.solve.conftest import FIB_DRAFT, FIB_FIXED, FIB_PROMPT, FIB_TESTS, fenced

    options = SolveOptions(strategy="exec-refine", store=tmp_path / "store.sqlite", environ={}, cluster=cluster.address)
    model = ScriptedModel([fenced(FIB_DRAFT), fenced(FIB_FIXED)])
    solution = asyncio.run(solve_async(FIB_PROMPT, model, tests=FIB_TESTS, options=options))
    assert solution.verified
    visible = [a.visible for a in solution.trajectory.attempts]
    assert all(v is not None and str(v.node).startswith("127.0.0.1/") for v in visible)
