"""What the ``landlock`` isolation costs against bubblewrap, on the same real programs, in one process.

Every single-pass HumanEval and MBPP program in ../shared/data (2,484 of them, mostly wrong), scored
against its hidden tests by a pool of two workers under each isolation in turn, interleaved over
several rounds; ``--workload livecodebench``: o1-mini's LiveCodeBench programs on their public tests
(stdin/stdout: a process per test, where a per-process cost shows most). Printed: each round's time
to run the programs (the pool already started) and to start the pool, the medians, the ratio
landlock / bwrap (the goal: within 1.2x), and whether every test's verdict is the same in both.

    python bench/landlock_cost.py [--rounds 3] [--workers 2] [--limit N] [--workload single-pass|livecodebench]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from refinelab._location import Location
from refinelab.problems import load_livecodebench
from refinelab.problems._humaneval import _problem as humaneval_problem
from refinelab.problems._mbpp import _humaneval_form as mbpp_problem
from refinelab.sandbox import Item, Limits, Suite, WorkerPool

SHARED = Path(os.environ.get("REFINELAB_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
MODES = ("bwrap", "landlock")


def single_pass(shared: Path) -> list[Item]:
    """Every HumanEval and MBPP single-pass program, framed as the crosscheck frames them."""
    items: list[Item] = []
    for path in sorted((shared / "llm-outputs/single-pass").glob("*.jsonl.gz")):
        if "397" in path.name:
            continue
        build = humaneval_problem if path.name.startswith("humaneval") else mbpp_problem
        with gzip.open(path, "rt") as handle:
            records = [json.loads(line) for line in handle]
        for record in records:
            problem = build(record, Location(path))
            solution = str(record["solution"])
            whole = not solution[:1].isspace() and f"def {problem.entry_point}" in solution
            code = solution if whole else problem.prompt + solution
            items.append(
                (code, Suite.of(problem.hidden_tests, entry_point=problem.entry_point, setup=problem.test_setup))
            )
    return items


def livecodebench(shared: Path) -> list[Item]:
    """o1-mini's LiveCodeBench programs on their problems' public tests."""
    problems = {p.id: p for p in load_livecodebench(shared / "benchmarks/livecodebench-v5-public-tests.jsonl.gz")}
    with gzip.open(shared / "llm-outputs/livecodebench/o1-mini-2024-09-12.json.gz", "rt") as handle:
        records = json.load(handle)
    items: list[Item] = []
    for record in records:
        problem = problems[str(record["question_id"])]
        suite = Suite.of(
            problem.visible_tests, kind=problem.kind, entry_point=problem.entry_point, prelude=problem.prelude
        )
        items += [(str(code), suite) for code in record["code_list"]]
    return items


WORKLOADS: dict[str, tuple[str, Callable[[Path], list[Item]]]] = {
    "single-pass": ("HumanEval + MBPP single-pass", single_pass),
    "livecodebench": ("LiveCodeBench o1-mini, public tests", livecodebench),
}


async def score(items: list[Item], isolation: str, workers: int) -> tuple[float, float, list[tuple[str, ...]]]:
    """(seconds to start the pool, seconds to run the items, every test's verdict)."""
    began = time.perf_counter()
    async with WorkerPool(workers=workers, isolation=isolation, limits=Limits()) as pool:  # type: ignore[arg-type]
        started = time.perf_counter()
        results = await pool.run_items(items)
        ran = time.perf_counter()
        level = pool.isolation
    print(f"  {level:<13} start {started - began:6.2f} s   run {ran - started:7.2f} s", flush=True)
    return started - began, ran - started, [tuple(o.verdict for o in r.outcomes) for r in results]


def compare(name: str, items: list[Item], rounds: int, workers: int) -> None:
    """Score ``items`` under each isolation, ``rounds`` times interleaved; print the medians and verdicts."""
    print(f"{name}: {len(items)} programs, {sum(len(s.tests) for _, s in items)} tests, {workers} workers")
    runs: dict[str, list[tuple[float, float, list[tuple[str, ...]]]]] = {mode: [] for mode in MODES}
    for index in range(rounds):
        print(f" round {index + 1}")
        for mode in MODES if index % 2 == 0 else reversed(MODES):
            runs[mode].append(asyncio.run(score(items, mode, workers)))
    run = {mode: statistics.median(r[1] for r in runs[mode]) for mode in MODES}
    start = {mode: statistics.median(r[0] for r in runs[mode]) for mode in MODES}
    for mode in MODES:
        print(f" median {mode:<9} start {start[mode]:6.2f} s   run {run[mode]:7.2f} s")
    print(
        f" landlock / bwrap: run {run['landlock'] / run['bwrap']:.2f}x, start {start['landlock'] / start['bwrap']:.2f}x"
    )
    first = runs["bwrap"][0][2]
    for mode in MODES:
        for attempt, (_, _, verdicts) in enumerate(runs[mode]):
            differing = [i for i, (a, b) in enumerate(zip(first, verdicts)) if a != b]
            print(f" {mode} round {attempt + 1}: {len(items) - len(differing)}/{len(items)} programs' verdicts equal "
                  f"bwrap round 1's, test by test" + (f" (differ: {differing[:8]})" if differing else ""))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="only the first N programs of each workload")
    parser.add_argument("--workload", action="append", choices=sorted(WORKLOADS), help="default: single-pass")
    parser.add_argument("--shared", type=Path, default=SHARED)
    args = parser.parse_args()
    for name in args.workload or ["single-pass"]:
        title, load = WORKLOADS[name]
        compare(title, load(args.shared)[: args.limit], args.rounds, args.workers)


if __name__ == "__main__":
    main()
