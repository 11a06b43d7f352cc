"""``run``'s tail: how long a run goes on after the model's last reply, against a server with real latency.

``refinelab run`` does single pass on HumanEval's 164 problems at ``--in-flight`` units (16) against a local
OpenAI-compatible server that waits ``--latency`` seconds (2) before each reply and answers with real
programs real models wrote (tests/experiment/real_server.py, in a process of its own). With ``--loop-last``
(the default) the reply for the last problem is a program that loops on every test, the case that ends a
run late: a looping program pays its visible tests' limit and the rerun that confirms it, and its hidden
tests' limit and rerun. The tail is the time from the server's last reply to the end of the run; the goal
is at most one test limit (HumanEval's 4 s) plus 1.5 s. The job trace (bench/_predict.py) says what the
run would take at 4, 16 and 64 workers, and every sandbox job still running after the last reply is listed
(when it was queued, started and ended, its CPU): where the tail goes.

The looping program costs four runs of one limit each: its visible tests and its hidden tests, each run
again to confirm the timeout (docs/design/sandbox.md). With workers to spare they overlap (the hidden run
starts beside the visible one, each rerun 0.5 s into its run: ``WorkerPool._speculate``), so with four
workers or more the tail is about one limit; ``run`` has one worker per core, and on two cores no worker
is spare: the four runs' 16 CPU seconds take at least two limits. "With a core for each job" is the
tail had every job's CPU time been its wall time (a machine not shared with other work).
``--spare-workers W`` shows the other case here, without ``run``: the looping program's visible and hidden
runs, as ``run`` submits them, in a pool of W workers with nothing else to do (W above the cores shares
them, so read the CPU-time line).

    python bench/run_tail.py [--latency 2] [--in-flight 16] [--no-loop-last] [--shared ../shared/data]
    python bench/run_tail.py --spare-workers 4
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import measure
from _predict import read_trace, report

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SHARED = Path(os.environ.get("REFINELAB_SHARED_DATA") or ROOT.parent / "shared" / "data")
LIMIT = 4.0
"""HumanEval's CPU seconds per test."""
SERVER = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from tests.experiment.real_server import real_answers
from refinelab.testing import FakeOpenAI
answers = real_answers(Path({shared!r}), [f"HumanEval/{{i}}" for i in range(164)], width=1)
LOOP = "```python\\ndef generate_integers(a, b):\\n    while True:\\n        pass\\n```"
log = open({log!r}, "a")

def reply(request):
    text = answers(request)
    if {loop_last} and "def generate_integers" in str(request):
        text = LOOP
    log.write(f"{{time.time()}} {{time.perf_counter()}}\\n")
    log.flush()
    return text

server = FakeOpenAI(reply)
server.delay = {latency}
print(server.base_url, flush=True)
server.serve_forever()
"""
SPEC = """name = "run-tail"
actors = ["vllm:real-programs"]
strategies = ["single-pass"]
concurrency = {in_flight}

[[benchmarks]]
name = "humaneval"

[models.endpoints."vllm:real-programs"]
concurrency = {in_flight}
"""


def tail_jobs(trace: Path, last: float, tail: float) -> list[str]:
    """The jobs that ended after the last reply (``last``, on the trace's clock), and the tail had every job's
    CPU time been its wall time (``tail``: the measured one; what followed the last job kept as measured)."""
    records = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
    jobs = sorted((r for r in records if "chains" in r and r["end"] > last), key=lambda r: r["start"])
    lines = ["  jobs ending after the last reply (seconds after it: queued, started, ended; CPU; chain):"]
    for job in jobs:
        cpu = job["child_cpu"] + job["worker_cpu"]
        lines.append(f"    {job['submitted'] - last:6.2f} {job['start'] - last:6.2f} {job['end'] - last:6.2f}  "
                     f"{cpu:5.2f} CPU s  {job['programs']} program(s)  {','.join(job['chains'])[:40]}")  # fmt: skip
    if jobs:
        after = tail - (max(job["end"] for job in jobs) - last)
        lines.append(f"  after the last job: {after:.2f} s; had each job's CPU time been its wall time, the tail "
                     f"would be {_unloaded(jobs, last) + after:.2f} s")  # fmt: skip
    return lines


def _unloaded(jobs: list[dict[str, object]], last: float) -> float:
    """When the last chain of ``jobs`` would end, in seconds after ``last``, were each job's wall time its CPU
    time: a job queued after the one before it in its chain ended (a rerun) starts when that one ends; one
    queued while it ran (a backup) starts as far into it as it did."""
    ends: list[float] = []
    chains: dict[str, list[dict[str, object]]] = {}
    for job in jobs:
        for chain in job["chains"]:  # type: ignore[attr-defined]
            chains.setdefault(chain, []).append(job)
    for members in chains.values():
        before: dict[str, object] | None = None
        begin = end = 0.0
        for job in sorted(members, key=lambda j: float(j["submitted"])):  # type: ignore[arg-type]
            if before is None:
                begin = float(job["start"]) - last  # type: ignore[arg-type]
            elif float(job["submitted"]) < float(before["end"]):  # type: ignore[arg-type]
                begin += float(job["submitted"]) - float(before["start"])  # type: ignore[arg-type]
            else:
                begin = end
            end = max(end, begin + float(job["child_cpu"]) + float(job["worker_cpu"]))  # type: ignore[arg-type]
            before = job
        ends.append(end)
    return max(ends)


def spare_workers(workers: int) -> int:
    """The looping program's four runs in a pool of ``workers`` with nothing else to run (see the module
    docstring): where the backups start, and the tail from their CPU times."""
    import asyncio
    from dataclasses import replace

    from refinelab.problems import load_humaneval
    from refinelab.sandbox import Limits, Suite, WorkerPool, run_scored

    problem = next(p for p in load_humaneval() if p.id == "HumanEval/163")
    code = "def generate_integers(a, b):\n    while True:\n        pass\n"

    async def both(trace: Path) -> float:
        os.environ["REFINELAB_JOB_TRACE"] = str(trace)
        async with WorkerPool(workers=workers, limits=Limits(cpu_seconds=LIMIT)) as pool:
            start = time.perf_counter()
            hidden = replace(pool.limits, stop_at_failure=True)
            await asyncio.gather(
                pool.run(code, Suite.visible(problem)), run_scored(pool, [(code, Suite.hidden(problem))], limits=hidden)
            )
            return start

    with tempfile.TemporaryDirectory(prefix="run-tail-") as name:
        trace = Path(name) / "jobs.jsonl"
        start = asyncio.run(both(trace))
        ended = max(json.loads(line).get("end", 0.0) for line in trace.read_text().splitlines())
        print(f"the looping program's visible and hidden runs, {workers} workers with nothing else to run:")
        print("\n".join(tail_jobs(trace, start, ended - start)))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=2.0)
    parser.add_argument("--in-flight", type=int, default=16)
    parser.add_argument("--no-loop-last", dest="loop_last", action="store_false")
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    parser.add_argument("--spare-workers", type=int, metavar="W", help="only the looping program, W workers")
    args = parser.parse_args()
    if args.spare_workers:
        return spare_workers(args.spare_workers)
    if not (args.shared / "llm-outputs").is_dir():
        print(f"shared data not found at {args.shared} (give --shared or REFINELAB_SHARED_DATA)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="run-tail-") as name:
        folder = Path(name)
        log, trace = folder / "replies.log", folder / "jobs.jsonl"
        script = SERVER.format(
            root=str(ROOT), shared=str(args.shared), log=str(log), loop_last=args.loop_last, latency=args.latency
        )
        server = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            base_url = server.stdout.readline().strip()
            spec = folder / "spec.toml"
            spec.write_text(SPEC.format(in_flight=args.in_flight))
            env = {
                **os.environ,
                "REFINELAB_CACHE_DIR": str(folder / "cache"),
                "XDG_CACHE_HOME": str(folder),
                "REFINELAB_JOB_TRACE": str(trace),
            }
            command = [sys.executable, "-m", "refinelab", "run", str(spec), "--store", str(folder / "store.sqlite")]
            started = time.time()
            measured = measure([*command, "--base-url", base_url, "--quiet"], env=env)
            ended = started + measured.wall
        finally:
            server.terminate()
            server.wait()
        replies = [[float(field) for field in line.split()] for line in log.read_text().splitlines()]
        tail = ended - max(wall for wall, _ in replies)
        print(f"{len(replies)} replies at {args.latency:g} s latency, {args.in_flight} in flight"
              f"{', the last problem a looping program' if args.loop_last else ''}")  # fmt: skip
        print(measured.line("refinelab run single-pass"))
        print(f"  tail after the last reply: {tail:.2f} s (goal: one test limit + 1.5 s = {LIMIT + 1.5:.1f} s; "
              f"load average {os.getloadavg()[0]:.1f})")  # fmt: skip
        print("\n".join(tail_jobs(trace, max(clock for _, clock in replies), tail)))
        print("\n".join(report(read_trace(trace, measured.main_cpu), "refinelab run")))
    print("(a shared machine: one run; the tail is wall time on this machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
