"""How long the viewer takes on a run the size of the Borges & Rios study (248 LiveCodeBench problems,
five configurations): the report, its bootstrap intervals, the figures, a static site.

    python bench/viewer_speed.py [--problems 248] [--keep DIR]

The run is synthetic (seeded random outcomes written straight into a store), since only its size
matters here. Prints seconds and the intervals' share of the report's time.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from refinelab.experiment import Configuration
from refinelab.models import Usage
from refinelab.problems import Problem, StdioTest
from refinelab.report import build_overview, build_report, render_figures
from refinelab.sandbox import RunResult, TestOutcome
from refinelab.store import RunHeader, RunProblem, Store, Unit
from refinelab.strategies import Attempt, CriticOutput, StrategySpec, Trajectory
from refinelab.view import Source, write_site

ACTOR, CRITIC = "vllm:Qwen/Qwen2.5-Coder-32B-Instruct", "vllm:Qwen/Qwen2.5-Coder-7B-Instruct"
CONFIGS = [
    Configuration(StrategySpec("single-pass"), ACTOR, None),
    Configuration(StrategySpec("self-refine", {"max_iters": 3}), ACTOR, ACTOR),
    Configuration(StrategySpec("self-refine", {"max_iters": 3}), ACTOR, CRITIC),
    Configuration(StrategySpec("exec-refine", {"max_iters": 3}), ACTOR, None),
    Configuration(StrategySpec("sampling", {"n": 4}), ACTOR, None),
]
LEVELS = ("easy", "medium", "hard")


def scored(ok: bool) -> RunResult:
    return RunResult((TestOutcome("pass"), TestOutcome("pass" if ok else "fail")), "bwrap-uid")


def trajectory(config: Configuration, problem: Problem, rng: random.Random) -> tuple[Trajectory, list[RunResult]]:
    chance = (0.7, 0.35, 0.1)[LEVELS.index(str(problem.metadata["difficulty"]))]
    oks = [rng.random() < chance]
    steps = 1 if config.strategy.name == "single-pass" else 4
    attempts = []
    for i in range(steps):
        critic = None
        if config.critic is not None:
            verdict = "pass" if (oks[-1] and rng.random() < 0.8) or rng.random() < 0.3 else "refine"
            critic = CriticOutput("{}", verdict, "looks off", usage=Usage(500, 80))  # type: ignore[arg-type]
        origin = "sample" if config.strategy.name == "sampling" else ("draft" if i == 0 else "refine")
        attempts.append(Attempt(i, origin, f"print({i})\n", "reply", Usage(400 + 300 * i, 150), 2.0, critic=critic))  # type: ignore[arg-type]
        if (critic is not None and critic.verdict == "pass") or i == steps - 1:
            break
        oks.append(rng.random() < (0.8 if oks[-1] else 0.4))
    done = Trajectory(problem.id, config.strategy.name, {}, tuple(attempts), len(attempts) - 1, "accepted")
    return done, [scored(ok) for ok in oks]


def fill(path: Path, problems: int) -> str:
    rng = random.Random(0)
    tests = (StdioTest("1\n", "1\n"), StdioTest("2\n", "2\n"))
    chosen = [
        RunProblem(
            f"livecodebench/q{i:04d}",
            Problem(f"q{i:04d}", "Print n.", "stdio", tests[:1], tests, metadata={"difficulty": LEVELS[i % 3]}),
        )
        for i in range(problems)
    ]
    with Store(path) as store:
        store.open_run("bench-1", {"name": "bench"}, RunHeader(versions={}, isolation="bwrap-uid", limits={}))
        store.add_configurations("bench-1", [c.stored() for c in CONFIGS])
        store.add_problems("bench-1", chosen)
        for config in CONFIGS:
            for entry in chosen:
                done, hidden = trajectory(config, entry.problem, rng)
                store.save("bench-1", Unit(config.key, entry.key, 0), done, hidden)
        store.finish_run("bench-1", "complete")
    return "bench-1"


def timed(what: str, action: object) -> float:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    seconds = time.perf_counter() - start
    print(f"{what:<44} {seconds:6.2f} s")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--problems", type=int, default=248)
    parser.add_argument("--keep", type=Path, help="write the store and the site here (to look at them)")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="refinelab-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    store_path = folder / "store.sqlite"
    store_path.unlink(missing_ok=True)
    run = fill(store_path, args.problems)
    print(f"{args.problems} problems x {len(CONFIGS)} configurations")
    with Store(store_path) as store:
        trajectories, problems = store.trajectories(run), store.problem_details(run)
        whole = timed("report (build_report, with intervals)", lambda: build_report(store, run))
        intervals = timed("  of which the interval tables", lambda: build_overview(trajectories, problems))
        report = build_report(store, run)
        timed("figures (four, SVG and PNG)", lambda: render_figures(report))
    timed("static site (view --out)", lambda: write_site(Source(store_path), folder / "site"))
    print(f"intervals: {intervals / whole:.0%} of the report's time")


if __name__ == "__main__":
    main()
