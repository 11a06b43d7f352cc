"""The cluster sandbox: its scheduling against an in-process stand-in for Ray (exact and fast), then the
real thing on a real Ray cluster inside a loopback-only network namespace (``cluster_cases.py``)."""

from __future__ import annotations

import asyncio
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import pytest

from refinelab.errors import InfrastructureError, MissingDependency, SandboxUnavailable, UserError
from refinelab.problems import CallTest, StdioTest
from refinelab.sandbox import ClusterOptions, ClusterSandbox, Limits, RunResult, Suite, run_scored
from refinelab.sandbox import _cluster as cluster_module
from refinelab.sandbox._cluster_node import NodeBatch
from refinelab.sandbox._cluster_queue import BatchQueue, Call, RunKey, chunks_of
from refinelab.sandbox._cluster_reach import probe_target, reach_problem
from refinelab.sandbox._pool import input_items
from tests.sandbox.fake_ray import FakeNode, FakeRay
from tests.sandbox.loopback import in_loopback_namespace, namespace_problem

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[2]
FAST = ClusterOptions(poll_seconds=0.01, node_wait=0.2, connect_seconds=None)  # no address here answers


def squares(count: int) -> list[tuple[str, Suite]]:
    """``count`` programs, each returning its own number (so a result delivered to the wrong program fails)."""
    return [(f"def f():\n    return {i}\n", Suite.of([CallTest("f()", i)], entry_point="f")) for i in range(count)]


def with_cluster(
    nodes: list[FakeNode],
    body: Callable[[ClusterSandbox], Awaitable[T]],
    options: ClusterOptions = FAST,
    monkeypatch: pytest.MonkeyPatch | None = None,
) -> T:
    fake = FakeRay(nodes)
    assert monkeypatch is not None
    monkeypatch.setattr(cluster_module, "_import_ray", lambda: fake)

    async def main() -> T:
        async with ClusterSandbox("fake", options=options) as sandbox:
            return await asyncio.wait_for(body(sandbox), 30)  # a scheduling bug hangs: fail instead

    return asyncio.run(main())


def test_results_are_judged_here_in_item_order_and_record_node_and_isolation(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = [FakeNode("a" * 20), FakeNode("b" * 20, isolation="bwrap")]
    items = [*squares(50), ("def f():\n    return 0\n", Suite.of([], entry_point="f"))]
    results = with_cluster(nodes, lambda sandbox: sandbox.run_items(items), monkeypatch=monkeypatch)
    assert [r.passed for r in results[:50]] == [True] * 50
    assert results[50].outcomes == ()
    wrong = with_cluster(nodes, lambda s: s.run("def f():\n    return 7\n", squares(3)[2][1]), monkeypatch=monkeypatch)
    assert wrong.outcomes[0].verdict == "fail" and wrong.outcomes[0].expected == "2"
    names = {f"10.0.0.20/{'a' * 12}": "bwrap-uid", f"10.0.0.20/{'b' * 12}": "bwrap"}
    assert {(r.node, r.isolation) for r in results[:50]} == set(names.items())


def test_the_run_takes_the_weakest_isolation_of_its_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = [FakeNode("a" * 20), FakeNode("b" * 20, isolation="bwrap")]

    async def isolation(sandbox: ClusterSandbox) -> str:
        return sandbox.isolation

    assert with_cluster(nodes, isolation, monkeypatch=monkeypatch) == "bwrap"


def test_no_expected_value_or_output_reaches_a_node(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = [FakeNode("a" * 20)]
    secret = "EXPECTED-7f3a9c-never-sent"
    calls = Suite.of([CallTest("f()", secret)], entry_point="f")
    stdio = Suite.of([StdioTest("1 2\n", secret)], kind="stdio")
    items = [("def f():\n    return 'x'\n", calls), ("print(3)\n", stdio)]

    async def body(sandbox: ClusterSandbox) -> None:
        await sandbox.run_items(items[:1])
        await sandbox.values("def f():\n    return 1\n", ["f()"], entry_point="f")

    with_cluster(nodes, body, monkeypatch=monkeypatch)
    node_batch = NodeBatch(("print(3)\n",), tuple(i for _, i in input_items(items[1:], Limits())), Limits(), False)
    sent = [pickle.dumps(batch) for batch in [*nodes[0].batches, node_batch]]
    assert len(sent) == 3
    assert all(secret.encode() not in blob for blob in sent)
    assert secret.encode() in pickle.dumps(items)  # the check can see it where it is


SLOW_SECOND = "def f(x):\n    if x == 2:\n        raise TimeoutError\n    return {first}\n"
"""A program whose second test always exceeds its CPU limit (on a fake node), its first returning ``first``."""


def test_timeouts_are_confirmed_by_the_local_pools_rule_decided_on_the_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nodes never see expected values, so the driver judges and chooses which timeouts run again: with only
    the verdict wanted, a program that already failed a test before its timeout is not run again."""
    suite = replace(Suite.of([CallTest("f(1)", 1), CallTest("f(2)", 2)], entry_point="f"), reference_seconds=(0.1, 0.5))
    passing, failing = SLOW_SECOND.format(first=1), SLOW_SECOND.format(first=0)
    verdict_only = Limits(stop_at_failure=True).following_reference()

    def reruns(limits: Limits) -> tuple[list[list[str]], list[RunResult]]:
        nodes = [FakeNode("a" * 20)]
        body = lambda sandbox: sandbox.run_items([(passing, suite), (failing, suite)], limits=limits)  # noqa: E731
        results = with_cluster(nodes, body, monkeypatch=monkeypatch)
        assert [b.inputs[0].seconds for b in nodes[0].batches] == [(1.0, 2.0)] * len(nodes[0].batches)
        return [list(b.programs) for b in nodes[0].batches if b.isolate], results

    again, results = reruns(verdict_only)
    assert again == [[passing]]  # the failing program fails either way
    assert [[o.verdict for o in r.outcomes] for r in results] == [["pass", "timeout"], ["fail", "timeout"]]
    assert results[0].outcomes[1].limit_seconds == 2.0  # the test's own limit: max(1, 4 x 0.5)
    again, _ = reruns(replace(verdict_only, stop_at_failure=False))
    assert sorted(map(tuple, again)) == sorted([(passing,), (failing,)])  # every outcome wanted: both


def test_scoring_in_stages_keeps_where_each_program_ran(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run_scored`` on the driver (stages when only the verdict is wanted, large suites in pieces) gives
    each result the node it ran on, as ``check --out`` and the store record it."""
    tests = [CallTest(f"f({i})", i) for i in range(20)]  # three stages: 8, then 12
    suite = Suite.of(tests, entry_point="f")
    items = [("def f(x):\n    return x\n", suite), ("def f(x):\n    return 0\n", suite)]
    limits = Limits(stop_at_failure=True)
    nodes = [FakeNode("a" * 20)]
    results = with_cluster(nodes, lambda sandbox: run_scored(sandbox, items, limits=limits), monkeypatch=monkeypatch)
    assert [r.passed for r in results] == [True, False]
    ran = sorted((len(inputs.tests), code) for b in nodes[0].batches for code, inputs in zip(b.programs, b.inputs))
    assert ran == sorted(
        [(8, items[0][0]), (8, items[1][0]), (12, items[0][0])]
    )  # the wrong program stopped at stage 1
    assert {r.node for r in results} == {f"10.0.0.20/{'a' * 12}"}


def test_batches_spread_over_nodes_with_at_most_in_flight_each(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = [FakeNode("a" * 20, cpus=2), FakeNode("b" * 20, cpus=2)]
    options = ClusterOptions(batch_size=8, in_flight=2, poll_seconds=0.01)
    with_cluster(nodes, lambda sandbox: sandbox.run_items(squares(200)), options, monkeypatch)
    assert all(node.most_running == 2 for node in nodes)
    assert all(len(node.batches) >= 5 for node in nodes)
    sizes = [len(batch.programs) for node in nodes for batch in node.batches]
    assert sum(sizes) == 200 and max(sizes) <= 8


def test_small_calls_from_many_callers_share_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = [FakeNode("a" * 20)]

    async def body(sandbox: ClusterSandbox) -> None:
        nodes[0].open.clear()
        first = asyncio.ensure_future(sandbox.run_items(squares(1)))
        await asyncio.sleep(0.05)
        second = asyncio.ensure_future(sandbox.run_items(squares(1)))
        rest = [asyncio.ensure_future(sandbox.run_items(squares(1))) for _ in range(30)]
        await asyncio.sleep(0.05)
        nodes[0].open.set()
        await asyncio.gather(first, second, *rest)

    with_cluster(nodes, body, ClusterOptions(batch_size=64, in_flight=2), monkeypatch)
    assert sorted(len(batch.programs) for batch in nodes[0].batches) == [1, 31]  # the first, then the rest together


def test_a_node_lost_mid_batch_has_its_batches_run_elsewhere_once(monkeypatch: pytest.MonkeyPatch) -> None:
    doomed, survivor = FakeNode("d" * 20), FakeNode("s" * 20)

    async def body(sandbox: ClusterSandbox) -> list[bool]:
        doomed.open.clear()
        survivor.open.clear()
        run = asyncio.ensure_future(sandbox.run_items(squares(120)))
        while len(doomed.batches) < 2:
            await asyncio.sleep(0.01)
        doomed.kill()
        survivor.open.set()
        return [r.passed for r in await run]

    sandbox_events: list[object] = []

    async def watched(sandbox: ClusterSandbox) -> list[bool]:
        passed = await body(sandbox)
        sandbox_events.extend(sandbox.events)
        assert sandbox.stats["programs"] == 120  # delivered once each, the lost batches included
        assert sandbox.stats["retried_batches"] == 2
        assert sandbox.size == 1
        return passed

    passed = with_cluster([doomed, survivor], watched, ClusterOptions(batch_size=16, poll_seconds=0.01), monkeypatch)
    assert passed == [True] * 120
    kinds = [(e.kind, e.node.split("/")[1][0]) for e in sandbox_events]  # type: ignore[attr-defined]
    assert ("lost", "d") in kinds and kinds.count(("retried", "d")) == 2
    lost_programs = {p for batch in doomed.batches for p in batch.programs}
    ran_again = {p for batch in survivor.batches for p in batch.programs}
    assert lost_programs <= ran_again


def test_a_node_that_joins_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    first = FakeNode("f" * 20)
    late = FakeNode("l" * 20, alive=False)

    async def body(sandbox: ClusterSandbox) -> set[str | None]:
        first.open.clear()
        run = asyncio.ensure_future(sandbox.run_items(squares(100)))
        await asyncio.sleep(0.05)
        late.alive = True
        while sandbox.size < 2:
            await asyncio.sleep(0.01)
        first.open.set()
        return {r.node for r in await run}

    options = ClusterOptions(batch_size=10, poll_seconds=0.01)
    used = with_cluster([first, late], body, options, monkeypatch)
    assert used == {f"10.0.0.20/{'f' * 12}", f"10.0.0.20/{'l' * 12}"}


def test_with_no_node_left_the_run_stops_with_sandbox_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    only = FakeNode("o" * 20)

    async def body(sandbox: ClusterSandbox) -> None:
        only.open.clear()
        run = asyncio.ensure_future(sandbox.run_items(squares(20)))
        await asyncio.sleep(0.05)
        only.kill()
        with pytest.raises(SandboxUnavailable, match=r"no cluster node is left.*run it again to resume"):
            await run
        with pytest.raises(SandboxUnavailable):
            await sandbox.run_items(squares(1))

    with_cluster([only], body, monkeypatch=monkeypatch)


def test_a_node_whose_pool_breaks_is_dropped_and_its_batch_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = FakeNode("x" * 20, fail_run=InfrastructureError("sandbox worker failed to start"))
    fine = FakeNode("y" * 20)

    async def body(sandbox: ClusterSandbox) -> list[str]:
        results = await sandbox.run_items(squares(40))
        assert all(r.passed for r in results)
        return [event.kind for event in sandbox.events]

    kinds = with_cluster([broken, fine], body, ClusterOptions(batch_size=10), monkeypatch)
    assert kinds.count("lost") == 1 and "retried" in kinds


def test_a_bug_on_a_node_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    buggy = FakeNode("z" * 20, fail_run=ValueError("a bug"))

    async def body(sandbox: ClusterSandbox) -> None:
        with pytest.raises(ValueError, match="a bug"):
            await sandbox.run_items(squares(3))
        assert sandbox.size == 1  # the node stays

    with_cluster([buggy], body, monkeypatch=monkeypatch)


def test_programs_that_keep_losing_nodes_fail_as_infrastructure(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = [FakeNode(c * 20, fail_run=InfrastructureError("broke")) for c in "pqrs"]

    async def body(sandbox: ClusterSandbox) -> None:
        with pytest.raises(InfrastructureError, match="3 nodes were lost while running these programs"):
            await sandbox.run_items(squares(1))
        assert sandbox.size == 1  # the fourth node is left

    with_cluster(nodes, body, ClusterOptions(max_tries=3, poll_seconds=0.01, node_wait=5), monkeypatch)


def test_nodes_of_another_version_or_weaker_isolation_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    good = FakeNode("g" * 20)
    old = FakeNode("v" * 20, version="0.0.1")
    weak = FakeNode("w" * 20, alive=False, isolation="none")

    async def body(sandbox: ClusterSandbox) -> list[tuple[str, str]]:
        weak.alive = True
        while len(sandbox.events) < 3:
            await asyncio.sleep(0.01)
        return [(e.kind, e.detail) for e in sandbox.events]

    events = with_cluster([good, old, weak], body, monkeypatch=monkeypatch)
    refused = [detail for kind, detail in events if kind == "refused"]
    assert any("refinelab 0.0.1 there" in d for d in refused)
    assert any("isolation is none, weaker than the run's bwrap-uid" in d for d in refused)


def test_when_no_node_can_start_the_error_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = FakeNode("m" * 20, fail_start=MissingDependency("bubblewrap is not installed"))
    with pytest.raises(UserError, match=r"no cluster node could run programs.*bubblewrap is not installed"):
        with_cluster([missing], lambda sandbox: sandbox.run_items([]), monkeypatch=monkeypatch)
    crashed = FakeNode("c" * 20, fail_start=InfrastructureError("worker died"))
    with pytest.raises(InfrastructureError, match="worker died"):
        with_cluster([crashed], lambda sandbox: sandbox.run_items([]), monkeypatch=monkeypatch)
    with pytest.raises(InfrastructureError, match="no node with CPUs"):
        with_cluster([FakeNode("h" * 20, cpus=0)], lambda sandbox: sandbox.run_items([]), monkeypatch=monkeypatch)


def test_only_nodes_offering_the_chosen_resource_are_used(monkeypatch: pytest.MonkeyPatch) -> None:
    gpu, cpu = FakeNode("g" * 20), FakeNode("c" * 20, resources={"refinelab": 1})
    options = ClusterOptions(node_resource="refinelab", poll_seconds=0.01)
    results = with_cluster([gpu, cpu], lambda sandbox: sandbox.run_items(squares(30)), options, monkeypatch)
    assert {r.node for r in results} == {f"10.0.0.20/{'c' * 12}"} and not gpu.batches


def test_a_client_server_that_dies_as_it_starts_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeRay([FakeNode("a" * 20)], connected=False)
    race = ConnectionError("Initialization failure from server: RuntimeError: Starting Ray client server failed.")
    fake.init_failures = [race, race]
    monkeypatch.setattr(cluster_module, "_import_ray", lambda: fake)

    async def main() -> int:
        async with ClusterSandbox("ray://head:10001", options=FAST) as sandbox:
            return sandbox.size

    assert asyncio.run(main()) == 1 and fake.inits == 3 and not fake.connected  # shut down again at the end
    fake.init_failures = [race] * 3
    with pytest.raises(UserError, match="no Ray cluster at 'ray://head:10001'"):
        asyncio.run(main())
    fake.init_failures = [ConnectionError("Initialization failure from server: psutil.ZombieProcess")] * 2
    assert asyncio.run(main()) == 1
    fake.init_failures = [ConnectionError("Could not find any running Ray instance")]
    with pytest.raises(UserError, match="start one with `ray start --head`"):
        asyncio.run(main())
    assert fake.inits == 10  # three tries for the race, one for anything else


def test_the_probe_finds_what_listens_and_what_does_not() -> None:
    with socket.socket() as listening, socket.socket() as closed:
        listening.bind(("127.0.0.1", 0))
        listening.listen(4)
        closed.bind(("127.0.0.1", 0))  # bound, never listening: a connection is refused
        up, down = listening.getsockname()[1], closed.getsockname()[1]
        assert asyncio.run(reach_problem(f"127.0.0.1:{up}", {}, 5.0)) is None
        assert asyncio.run(reach_problem(f"ray://127.0.0.1:{up}", {}, 5.0)) is None
        problem = asyncio.run(reach_problem(f"127.0.0.1:{down}", {}, 5.0))
        assert problem == f"nothing answers at 127.0.0.1:{down}: connection refused"
        assert asyncio.run(reach_problem("auto", {"RAY_ADDRESS": f"127.0.0.1:{down}"}, 5.0)) == problem
    assert probe_target("auto", {}) is None  # Ray looks for a cluster started on this machine itself
    assert probe_target("ray://head:10001", {}) == ("head", 10001)


def test_a_cluster_address_where_nothing_listens_is_one_line_before_ray_is_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeRay([FakeNode("a" * 20)], connected=False)
    monkeypatch.setattr(cluster_module, "_import_ray", lambda: fake)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{closed.getsockname()[1]}"
        with pytest.raises(UserError, match=rf"no Ray cluster at '{address}' \(nothing answers at {address}"):
            asyncio.run(ClusterSandbox(address).start())
    assert fake.inits == 0  # Ray, which would have retried for minutes, was never asked


def test_ray_init_keeps_the_callers_sigterm_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ray.init`` sets its own SIGTERM handler (it exits the process); the caller's comes back, so a run
    stopped by SIGTERM is still marked interrupted."""
    fake = FakeRay([FakeNode("a" * 20)], connected=False)
    ray_init = fake.init

    def init(**options: object) -> None:
        signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(number))  # what ray.init does
        ray_init(**options)

    fake.init = init  # type: ignore[method-assign]
    monkeypatch.setattr(cluster_module, "_import_ray", lambda: fake)
    mine = signal.getsignal(signal.SIGTERM)
    seen = []

    async def main() -> None:
        async with ClusterSandbox("fake", options=FAST):
            seen.append(signal.getsignal(signal.SIGTERM))

    asyncio.run(main())
    assert fake.inits == 1 and seen == [mine] and signal.getsignal(signal.SIGTERM) is mine


def test_without_ray_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingDependency, match=r"pip install 'refinelab\[ray\]'"):
        asyncio.run(ClusterSandbox("auto").start())


def test_the_queue_merges_neighbours_with_the_same_limits_up_to_the_batch() -> None:
    async def body() -> list[list[int]]:
        queue = BatchQueue()
        call = Call(10, 10)
        inputs = input_items(squares(10), Limits())
        strict = RunKey(Limits(cpu_seconds=1), False)
        queue.put(chunks_of(call, inputs[:6], RunKey(Limits(), False), 2, 1))
        queue.put(chunks_of(call, inputs[6:], strict, 4, 1))
        return [[len(c.items) for c in queue.take(5)] for _ in range(3)]

    assert asyncio.run(body()) == [[2, 2], [2], [4]]


# --- a real Ray cluster ---------------------------------------------------------------------------


def ray_errors(temp: Path) -> str:
    """The last lines of Ray's own error logs under ``temp`` (shown when the cluster tests fail)."""
    found = []
    for log in sorted(temp.glob("**/logs/*.err")):
        if log.name.startswith("worker-"):
            continue  # one per actor, and they say little
        lines = log.read_text(errors="replace").strip().splitlines()
        if lines:
            found.append(f"--- {log.name}\n" + "\n".join(lines[-15:]))
    return "\n".join(["", *found])[-8000:]


def failure_lines(output: str) -> str:
    """The inner run's own failure: its test names and its assertion lines, which a node's logs printed
    after them (a case kills a node on purpose) would push out of the output's tail."""
    lines = [line for line in output.splitlines() if line.startswith(("FAILED", "ERROR", "E   ", "____"))]
    return "\n".join(lines[:80]) + "\n...\n"


@pytest.mark.slow
def test_on_a_real_ray_cluster_in_a_loopback_only_network_namespace() -> None:
    """``cluster_cases.py`` (a head and worker nodes started with ``ray.cluster_utils``) inside a network
    namespace with only ``lo``: no traffic leaves loopback. Its own output is shown when it fails."""
    pytest.importorskip("ray", reason="the cluster tests need Ray: pip install 'refinelab[ray]'")
    if (problem := namespace_problem()) is not None:
        pytest.skip(f"the cluster tests run Ray with no traffic leaving loopback, and {problem}")
    argv = [sys.executable, "-m", "pytest", "tests/sandbox/cluster_cases.py", "-p", "no:randomly"]
    argv += ["-p", "no:cacheprovider", "-q", "-x", "-rs"]
    temp = tempfile.mkdtemp(prefix="rl-ray-", dir="/tmp")  # short: Ray's socket paths must fit in 107 bytes
    env = {**os.environ, "RAY_TMPDIR": temp, "RAY_USAGE_STATS_ENABLED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    env["RAY_CLIENT_SERVER_CHECK_CHANNEL_TIMEOUT_S"] = "180"  # a loaded machine starts a client's server slowly
    process = subprocess.Popen(
        in_loopback_namespace(argv), cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    try:
        output, _ = process.communicate(timeout=1500)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the session this test started, and only it
        output, _ = process.communicate()
    finally:
        logs = ray_errors(Path(temp)) if process.returncode else ""
        shutil.rmtree(temp, ignore_errors=True)
    assert process.returncode == 0, failure_lines(output) + output[-6000:] + logs
    skipped = [line for line in output.splitlines() if line.startswith("SKIPPED")]
    assert " passed" in output and all("shared benchmark data" in line for line in skipped), output[-3000:]
