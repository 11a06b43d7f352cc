"""``verified`` and ``codet`` end to end: ``refinelab run`` against a local OpenAI-compatible server that
answers with real programs real models wrote for HumanEval and the real tests gpt-3.5 wrote for them.

The server (tests/experiment/real_server.py) answers a draft request with the task's real programs in a
fixed, seeded order (the i-th identical request gets program i, so a temperature-0 single pass gets a
random model's program), a test-writing request with the asserts gpt-3.5 wrote in its Reflexion runs,
and a refinement request with the task's next real program. It never runs anything, so no answer
depends on being right. Run from the repository root:

    python bench/verified_e2e.py [--shared ../shared/data] [--tasks 164] [--seed 1] [--width 4] [--keep DIR]

Prints, per configuration, pass@1 of the returned program on the hidden tests and tokens per task; the
report's at-equal-tokens comparison against sampling; whether ``verified`` and ``codet`` beat single
pass and match or beat sampling at equal tokens; and whether the server saw exactly the calls stored.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.experiment.real_server

from tests.experiment.real_server import Outcome, real_answers, run_through_server


def strategies(width: int) -> list[str]:
    """The configurations, at comparable budgets: ``width`` programs each (sampling also at 2x)."""
    return [
        "single-pass",
        f"sampling(n={width})",
        f"sampling(n={2 * width})",
        f"codet(n={width}, m=1)",
        f"verified(k={width}, m=1, consult_critic=false)",
    ]


def main(shared: Path, tasks: int, seed: int, width: int, keep: Path | None) -> int:
    chosen = [f"HumanEval/{i}" for i in range(tasks)]
    answers = real_answers(shared, chosen, width=width, seed=seed)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=False)
        outcome = run_through_server(answers, strategies(width), keep or Path(folder))
    print(f"{tasks} HumanEval tasks, real programs (seed {seed}), {time.perf_counter() - start:.0f} s")
    finals = _table(outcome)
    verdicts = _verdicts(outcome, finals)
    same = outcome.answered == sum(outcome.stored_calls.values())
    print(f"server answered {outcome.answered} requests {dict(outcome.server_calls)}; "
          f"store records {dict(outcome.stored_calls)} sent: {'equal' if same else 'DIFFERENT'}")  # fmt: skip
    return 0 if same and all(verdicts) else 1


def _table(outcome: Outcome) -> dict[str, float]:
    finals: dict[str, float] = {}
    print(f"{'configuration':<58} {'pass@1':>7} {'tokens/task':>12}")
    for row in outcome.report["configurations"]:
        label = str(row["label"]).split(" · ")[0]
        finals[label] = float(row["final"])
        print(f"{label:<58} {row['final']:>7.4f} {row['use']['tokens']:>12.0f}")
    return finals


def _verdicts(outcome: Outcome, finals: dict[str, float]) -> list[bool]:
    single = finals["single-pass"]
    verdicts = []
    print("at equal tokens (sampling's samples cut at the tokens the strategy spent, chosen by visible tests):")
    for entry in outcome.report["equal_tokens"]:
        mine, sampler = str(entry["configuration"]).split(" · ")[0], str(entry["sampler"]).split(" · ")[0]
        if not mine.startswith(("codet", "verified")):
            continue
        beats, matches = finals[mine] > single, entry["refinement"] >= entry["sampling"]
        verdicts += [beats, matches]
        print(
            f"  {mine} {entry['refinement']:.4f} vs {sampler} {entry['sampling']:.4f} "
            f"({entry['mean_samples']:.2f} samples; any sample {entry['any_sample']:.4f}): "
            f"{'beats' if beats else 'does NOT beat'} single pass ({single:.4f}), "
            f"{'matches or beats' if matches else 'does NOT match'} sampling at equal tokens"
        )
    return verdicts


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=Path("../shared/data"), help="the shared data folder")
    parser.add_argument("--tasks", type=int, default=164, help="first N HumanEval tasks")
    parser.add_argument("--seed", type=int, default=1, help="orders each task's programs")
    parser.add_argument("--width", type=int, default=4, help="programs per configuration (k, n)")
    parser.add_argument("--keep", type=Path, help="a new folder to keep the spec, store and report in")
    args = parser.parse_args()
    if not args.shared.is_dir():
        sys.exit(f"no shared data at {args.shared}")
    sys.exit(main(args.shared, args.tasks, args.seed, args.width, args.keep))
