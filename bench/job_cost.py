"""What a sandbox job costs besides the program's own time: per job, and per test.

Runs through the real pool (one worker, this machine's isolation) with the job trace on
(``REFINELAB_JOB_TRACE``, ``src/refinelab/sandbox/_trace.py``), and reads each job's child and worker CPU
from it:

* **per job**: ``--jobs`` jobs of one trivial program on one test (a new program each time, so each is a
  job of its own); the median child and worker CPU;
* **per test**: one trivial program on ``--tests`` tests in one job, three times; the least child and worker
  CPU, divided by the tests.

A warm HumanEval+ check (1,640 programs) runs about 1,700 jobs and 673,000 tests: multiply to see what these
costs are worth there (docs/design/sandbox.md, "Most of that fixed cost was putting the interpreter back").

    python bench/job_cost.py [--jobs 200] [--tests 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
from pathlib import Path

from refinelab.problems import CallTest
from refinelab.sandbox import Suite, WorkerPool

ADD = "def add(a, b):\n    return a + b\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--tests", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        trace = Path(scratch) / "jobs.trace"
        os.environ["REFINELAB_JOB_TRACE"] = str(trace)
        asyncio.run(_run(args.jobs, args.tests))
        jobs = [record for record in _records(trace) if "chains" in record]
    small, large = jobs[1 : 1 + args.jobs], jobs[1 + args.jobs :]
    child = statistics.median(_cpu(job, "child_cpu") for job in small)
    worker = statistics.median(_cpu(job, "worker_cpu") for job in small)
    print(f"per job (median of {len(small)}): child {child * 1e3:.2f} ms, worker {worker * 1e3:.2f} ms of CPU")
    per_child = min(_cpu(job, "child_cpu") for job in large) / args.tests
    per_worker = min(_cpu(job, "worker_cpu") for job in large) / args.tests
    print(
        f"per test (least of {len(large)} jobs of {args.tests}): child {per_child * 1e6:.1f} us, "
        f"worker {per_worker * 1e6:.1f} us of CPU"
    )


async def _run(jobs: int, tests: int) -> None:
    one = Suite.of([CallTest("add(1, 2)", 3, args="[1, 2]")], kind="function", entry_point="add")
    many = Suite.of(
        [CallTest(f"add({i}, 1)", i + 1, args=json.dumps([i, 1])) for i in range(tests)],
        kind="function",
        entry_point="add",
    )
    async with WorkerPool(workers=1) as pool:
        await pool.run(ADD, one)  # the worker's first job (warming up) is left out
        for index in range(jobs):
            result = await pool.run(f"{ADD}# {index}\n", one)
            assert result.passed, result.outcomes
        for _ in range(3):
            result = await pool.run(ADD, many)
            assert result.passed, result.outcomes[:3]


def _records(trace: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]


def _cpu(job: dict[str, object], key: str) -> float:
    value = job[key]
    assert isinstance(value, (int, float)), job
    return float(value)


if __name__ == "__main__":
    main()
