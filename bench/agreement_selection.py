"""Dual-agreement selection on real model outputs: the selected program's pass@1 against the samples'.

Samples: 7-16 real programs per HumanEval task (six models' single-pass programs and Reflexion's
gpt-3.5 rounds, from ../shared/data); tests: the asserts gpt-3.5 wrote for itself in those Reflexion
runs. Each task's samples are shuffled with the seed, so "earliest program" ties favour no model. Run
from the repository root:

    python bench/agreement_selection.py [--shared ../shared/data] [--tasks 164] [--seed 1] [--agreement-timeout 1]

Prints, over the tasks: the samples' unbiased pass@1 (a random pick), the selected program's pass@1
(deterministic tie-break), CodeT's measure (a random pick among the tied best groups), the oracle (any
sample passes), and the reference accuracy of the generated tests, for each score and visible-test
setting.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.verification.realdata

from tests.verification.realdata import sample_rows, test_rows, write_jsonl

from refinelab.check import (
    SelectionOptions,
    read_any_samples,
    read_generated_tests,
    score_samples,
    select_by_agreement,
    summarize,
)
from refinelab.problems import load_humaneval
from refinelab.sandbox import Limits, WorkerPool, default_workers

SETTINGS = [("codet", "ignore"), ("product", "ignore"), ("codet", "join")]


async def main(shared: Path, tasks: int, seed: int, workers: int, agreement_seconds: float) -> None:
    problems = load_humaneval()
    with tempfile.TemporaryDirectory() as folder:
        samples_path = write_jsonl(Path(folder) / "samples.jsonl", sample_rows(shared, tasks=tasks, seed=seed))
        tests_path = write_jsonl(Path(folder) / "tests.jsonl", test_rows(shared, tasks=tasks))
        samples, _ = read_any_samples(samples_path, problems)
        tests = read_generated_tests(tests_path, problems)
    async with WorkerPool(workers=workers, limits=Limits(cpu_seconds=2)) as pool:
        scored = await score_samples(samples, pool)
        summary = summarize(scored)
        oracle = _oracle(scored)
        print(f"{summary.samples} real programs on {summary.problems} HumanEval tasks (isolation: {pool.isolation})")
        print(f"samples' pass@1 (random pick):        {summary.pass_at[1]:.4f}")
        print(f"oracle (any sample passes):           {oracle:.4f}")
        for score, visible in SETTINGS:
            start = time.perf_counter()
            limits = Limits(cpu_seconds=agreement_seconds)
            options = SelectionOptions(score=score, visible=visible, limits=limits)  # type: ignore[arg-type]
            chosen = await select_by_agreement(scored, tests, pool, options)
            seconds = time.perf_counter() - start
            _report(chosen, f"{score} score, visible tests {visible}", summary.pass_at[1], seconds)


def _oracle(scored: list) -> float:  # type: ignore[type-arg]
    best: dict[str, bool] = {}
    for item in scored:
        best[item.sample.problem.id] = best.get(item.sample.problem.id, False) or item.result.passed
    return sum(best.values()) / len(best)


def _report(chosen: list, label: str, baseline: float, seconds: float) -> None:  # type: ignore[type-arg]
    selected = sum(s.passed for s in chosen) / len(chosen)
    expected = sum(s.expected_pass for s in chosen) / len(chosen)
    accuracies = [s.tests_correct for s in chosen if s.tests_correct is not None]
    print(f"dual agreement ({label}), {seconds:.1f} s:")
    print(f"  selected pass@1 {selected:.4f} ({selected / baseline:.2f}x the samples')")
    print(f"  CodeT's measure {expected:.4f} ({expected / baseline:.2f}x)")
    print(f"  tests right by the reference: {sum(accuracies) / max(1, len(accuracies)):.4f} on {len(accuracies)} tasks")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=Path("../shared/data"), help="the shared data folder")
    parser.add_argument("--tasks", type=int, default=164, help="first N HumanEval tasks")
    parser.add_argument("--seed", type=int, default=1, help="shuffles each task's samples")
    parser.add_argument("--workers", type=int, default=default_workers(), help="sandbox workers")
    parser.add_argument("--agreement-timeout", type=float, default=1.0, help="CPU s per generated test (as check)")
    args = parser.parse_args()
    if not args.shared.is_dir():
        sys.exit(f"no shared data at {args.shared}")
    asyncio.run(main(args.shared, args.tasks, args.seed, args.workers, args.agreement_timeout))
