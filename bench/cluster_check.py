"""How many workers one driver keeps busy scoring HumanEval+'s real programs, on the local pool and on a Ray
cluster, on the same two cores, as ``refinelab check`` scores them.

Programs: bench/real_samples.py's ``ten`` set (1,640 real programs, ten a task, mostly wrong) against
HumanEval+ v0.1.10 from the shared data, under evalplus's time rule, tests in stages, each program stopping at
its first failure (what ``check --benchmark humaneval-plus`` runs: ``score_samples``). The problems are loaded
first (from ``--cache-dir``, computed there on the local pool when it holds none), so what is timed is
scoring alone. Rounds alternate between the local pool (two workers) and a cluster of a head without CPUs and
two nodes of one CPU each (bench/cluster_overhead.py's, in a loopback-only network namespace). For each: the
driver's own CPU (this process, Ray's threads in it included) per program, the programs' job CPU (the pools'
children and workers, as they count it), their ratio (how many workers one driver keeps busy), the wall
time, and whether every program's verdict is the same on both (a program whose outcomes differ anywhere is
listed; one whose verdict moves between rounds of the same sandbox, a test near its CPU limit timing out in
one round and not in another, is counted apart, and the bench fails only on a verdict that differs between
the two sandboxes and nowhere else).

    python bench/cluster_check.py [--rounds 2] [--cache-dir DIR] [--shared ../shared/data]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cluster_overhead import Cluster, loopback_only, rerun_in_namespace
from real_samples import DEFAULT_SHARED, rows

from refinelab.check import Sample, read_samples, score_samples
from refinelab.sandbox import ClusterOptions, ClusterSandbox, Limits, WorkerPool, prepare_benchmark
from refinelab.sandbox._outcome import Verdict

PLUS = "benchmarks/humanevalplus-v0.1.10.jsonl.gz"
LIMITS = replace(Limits().following_reference(), stop_at_failure=True)
"""``check``'s limits for HumanEval+: evalplus's time rule, each program stopping at its first failure."""


@dataclass(frozen=True)
class Scored:
    """One timed scoring of every program."""

    wall: float
    driver: float
    """This process's CPU seconds."""
    jobs: float
    """The programs' job CPU seconds (children and workers)."""
    outcomes: list[tuple[Verdict, ...]]
    """Each program's outcomes' verdicts, in order."""
    names: list[str]
    """Each program's task and sample index."""


async def job_cpu(sandbox: WorkerPool | ClusterSandbox) -> float:
    """Job CPU seconds the sandbox's pools have counted so far (a cluster's, summed over its nodes)."""
    if isinstance(sandbox, WorkerPool):
        found = [sandbox.stats]
    else:
        found = [await node.actor.stats.remote() for node in sandbox._nodes.values()]
    return sum(stats.get("child_cpu", 0.0) + stats.get("worker_cpu", 0.0) for stats in found)


async def timed(sandbox: WorkerPool | ClusterSandbox, samples: list[Sample]) -> Scored:
    jobs, cpu, started = await job_cpu(sandbox), time.process_time(), time.perf_counter()
    found = await score_samples(samples, sandbox)
    wall, driver = time.perf_counter() - started, time.process_time() - cpu
    outcomes = [tuple(o.verdict for o in scored.result.outcomes) for scored in found]
    names = [f"{scored.sample.task_id} #{scored.sample.index}" for scored in found]
    return Scored(wall, driver, await job_cpu(sandbox) - jobs, outcomes, names)


async def compare(cluster: Cluster, shared: Path, cache: Path, rounds: int) -> bool:
    """Alternating rounds on the local pool and the cluster; whether every outcome was the same."""
    local = WorkerPool(workers=2, isolation="bwrap", limits=LIMITS)
    await local.start()
    remote = ClusterSandbox(
        cluster.ray.address, isolation="bwrap", limits=LIMITS, options=ClusterOptions(poll_seconds=1.0)
    )
    await remote.start()
    try:
        started = time.perf_counter()
        problems = await prepare_benchmark("humaneval-plus", shared / PLUS, pool=local, cache_dir=cache)
        print(f"problems loaded in {time.perf_counter() - started:.1f} s; the cluster has {remote.size} workers")
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "ten.jsonl"
            path.write_text("".join(json.dumps(row) + "\n" for row in rows(shared, "ten")), encoding="utf-8")
            samples = read_samples(path, problems)
        found: dict[str, list[Scored]] = {"local": [], "cluster": []}
        for round_ in range(rounds):
            order: list[tuple[str, WorkerPool | ClusterSandbox]] = [("local", local), ("cluster", remote)]
            for where, sandbox in order if round_ % 2 == 0 else order[::-1]:
                scored = await timed(sandbox, samples)
                found[where].append(scored)
                print(f"round {round_ + 1} {where:8s}: {describe(scored, len(samples))}")
    finally:
        await local.close()
        await remote.close()
    for where, runs in found.items():
        feeds = statistics.median(run.jobs / max(run.driver, 1e-9) for run in runs)
        print(f"{where}: one driver keeps about {feeds:.0f} workers busy (median of {len(runs)} rounds)")
    first = found["local"][0]
    every = [(f"{where} {i + 1}", run) for where, kept in found.items() for i, run in enumerate(kept)]
    for label, run in every:
        for name, ours, theirs in zip(first.names, first.outcomes, run.outcomes):
            if ours != theirs:
                print(f"  {name}: local 1 {_summary(ours)}; {label} {_summary(theirs)}")
    unsteady = {i for kept in found.values() for run in kept for i in _moved(kept[0], run)}
    differing = set(_moved(found["local"][0], found["cluster"][0])) - unsteady
    print(
        f"programs whose verdict moved between rounds of one sandbox (a test near its CPU limit): {len(unsteady)}; "
        f"whose verdict differs between the two and nowhere else: {len(differing)}"
    )
    return not differing


def _moved(one: Scored, other: Scored) -> list[int]:
    """The programs whose verdict differs between two scorings."""
    return [i for i, (a, b) in enumerate(zip(_passed(one), _passed(other))) if a != b]


def _passed(run: Scored) -> list[bool]:
    return [all(verdict == "pass" for verdict in outcomes) for outcomes in run.outcomes]


def _summary(outcomes: tuple[Verdict, ...]) -> str:
    """Where a program's outcomes first stop passing, and how."""
    stop = next((i for i, verdict in enumerate(outcomes) if verdict != "pass"), None)
    return "passed" if stop is None else f"test {stop} {outcomes[stop]}"


def describe(scored: Scored, programs: int) -> str:
    return (
        f"{scored.wall:.1f} s; driver CPU {scored.driver:.2f} s ({scored.driver / programs * 1000:.2f} ms a program), "
        f"job CPU {scored.jobs:.1f} s ({scored.jobs / programs * 1000:.1f} ms a program): one driver keeps about "
        f"{scored.jobs / max(scored.driver, 1e-9):.0f} workers busy"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    parser.add_argument("--cache-dir", type=Path, help="HumanEval+'s expected outputs (default: a new folder)")
    args = parser.parse_args()
    if not (args.shared / PLUS).is_file():
        print(f"needs the shared data's HumanEval+ ({args.shared / PLUS})", file=sys.stderr)
        return 2
    if not loopback_only():
        return rerun_in_namespace()
    with tempfile.TemporaryDirectory() as scratch:
        cache = args.cache_dir or Path(scratch)
        cluster = Cluster()
        try:
            same = asyncio.run(compare(cluster, args.shared, cache, args.rounds))
        finally:
            cluster.ray.shutdown()
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
