"""What the driver's own CPU costs for each program it hands to a worker and judges, through the real pool.

``--programs`` trivial programs (a new one each time) on an eight-test suite, at most ``--in-flight`` at once,
so the pool cuts small jobs, as a check's stages are (about two programs a job in a warm HumanEval+ check);
the driver's process CPU over them, divided by the programs. The workers run in processes of
their own: none of their CPU is counted. This is the per-program part of what one driver can feed
(docs/design/sandbox.md, "Where one driver's CPU goes"); run it before and after a change to the pool, in turn.

    python bench/driver_cost.py [--programs 3000] [--in-flight 4] [--workers 2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from refinelab.problems import CallTest
from refinelab.sandbox import Suite, WorkerPool

IDENTITY = "def f(x):\n    return x  # {n}\n"


async def _round(programs: int, in_flight: int, workers: int) -> tuple[float, float]:
    """The driver's CPU seconds over ``programs`` programs, and the children the workers forked for them (a
    child a job here: every program ends cleanly)."""
    suite = Suite.of([CallTest(f"f({i})", i) for i in range(8)], entry_point="f")
    gate = asyncio.Semaphore(in_flight)
    async with WorkerPool(workers=workers) as pool:
        await pool.run(IDENTITY.format(n="warm-up"), suite)
        children = pool.stats.get("children", 0.0)

        async def one(n: int) -> bool:
            async with gate:
                return (await pool.run(IDENTITY.format(n=n), suite)).passed

        began = time.process_time()
        passed = await asyncio.gather(*(one(n) for n in range(programs)))
        cpu = time.process_time() - began
        jobs = pool.stats.get("children", 0.0) - children
    assert all(passed), "a trivial program failed: the measurement is not of a working pool"
    return cpu, jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=3000)
    parser.add_argument("--in-flight", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    per_program: list[float] = []
    for _ in range(args.rounds):
        cpu, jobs = asyncio.run(_round(args.programs, args.in_flight, args.workers))
        per_program.append(cpu / args.programs)
        jobs_text = f"{args.programs / jobs:.2f} programs a job, " if jobs else ""
        each = cpu / args.programs * 1e6
        print(f"driver CPU {cpu:.3f} s for {args.programs} programs: {jobs_text}{each:.0f} us a program")
    print(f"median {statistics.median(per_program) * 1e6:.0f} us a program")


if __name__ == "__main__":
    main()
