"""A strategy's traits live on its registry record: the experiment (which strategies' results the agreement's
time limit changes) and the report (which strategies select, refine, or are a baseline) read them there, so a
new strategy registered with its traits is treated as its kind everywhere, with no list of names to extend."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from refinelab.experiment import BenchmarkChoice, ExperimentSpec
from refinelab.metrics import ScoredAttempt, ScoredTrajectory, Spend, Usage
from refinelab.problems import Problem
from refinelab.report._build import _equal_tokens
from refinelab.report._overview import singles_by_actor
from refinelab.report._selection import selection_section
from refinelab.runtime import SandboxChoice
from refinelab.strategies import STRATEGIES, Env, StrategySpec, Trajectory, strategy, strategy_traits

NEW = "best-of-two-test"


@pytest.fixture
def registered() -> Iterator[None]:
    """Each test registers its own strategy under :data:`NEW`; it is taken out of the registry after."""
    yield
    STRATEGIES.pop(NEW, None)


def register(**traits: object) -> None:
    @strategy(NEW, **traits)  # type: ignore[arg-type]
    async def best_of_two(problem: Problem, env: Env, *, select: str = "first") -> Trajectory:
        raise AssertionError("never run here")


def test_the_builtin_strategies_declare_their_traits() -> None:
    names = sorted(STRATEGIES)
    assert [n for n in names if strategy_traits(n).selects] == ["codet", "verified"]
    assert [n for n in names if strategy_traits(n).iterates] == [
        "exec-refine",
        "self-redraft",
        "self-refine",
        "verified",
    ]
    assert [n for n in names if strategy_traits(n).baseline] == ["sampling", "single-pass"]
    agrees = [str(s) for s in map(StrategySpec.parse, ["codet", "verified", "sampling", "sampling(select=visible)"])]
    assert [s for s in agrees if StrategySpec.parse(s).agrees] == ["codet", "verified"]
    assert StrategySpec.parse("sampling(select=dual-agreement)").agrees
    assert not StrategySpec("gone-since").agrees and strategy_traits("gone-since").selects is False


def run_ids(strategy_text: str) -> tuple[str, str]:
    def spec(seconds: float) -> ExperimentSpec:
        strategies = (StrategySpec.parse(strategy_text),)
        choice = SandboxChoice(agreement_timeout=seconds)
        return ExperimentSpec((BenchmarkChoice("humaneval"),), strategies, ("m",), sandbox=choice)

    return spec(0.1).run_id, spec(0.5).run_id


@pytest.mark.usefixtures("registered")
def test_a_new_strategy_that_agrees_makes_the_agreement_time_part_of_its_run() -> None:
    register()
    plain = run_ids(NEW)
    STRATEGIES.pop(NEW)
    register(agrees={"select": "agreement"})
    as_written = run_ids(NEW), run_ids(f"{NEW}(select=agreement)")
    assert plain[0] == plain[1]
    assert as_written[0][0] == as_written[0][1] and as_written[1][0] != as_written[1][1]


def group(strategy_name: str, passes: list[bool], origin: str = "sample") -> list[ScoredTrajectory]:
    attempts = tuple(
        ScoredAttempt(i, origin, p, spend=Spend(Usage(prompt_tokens=10), None))  # type: ignore[arg-type]
        for i, p in enumerate(passes)
    )
    return [
        ScoredTrajectory(
            config=strategy_name, strategy=strategy_name, params="", actor="a", critic=None, problem="p",
            repeat=0, attempts=attempts, final=len(passes) - 1, stop_reason="max_iterations",
        )
    ]  # fmt: skip


@pytest.mark.usefixtures("registered")
def test_a_new_selecting_strategy_gets_the_selection_section() -> None:
    groups = {NEW: group(NEW, [False, True]), "exec-refine": group("exec-refine", [False, True], "refine")}
    assert selection_section(groups).rows == ()
    register(selects=True)
    assert [row.label for row in selection_section(groups).rows] == [f"{NEW} · a"]
    assert selection_section(groups).against == ()  # it does not refine
    STRATEGIES.pop(NEW)
    register(selects=True, iterates=True)
    assert [(a, b) for a, b, _ in selection_section(groups).against] == [(f"{NEW} · a", "exec-refine · a")]


@pytest.mark.usefixtures("registered")
def test_a_new_baseline_strategy_is_what_the_report_measures_against() -> None:
    groups = {NEW: group(NEW, [True]), "other": group("exec-refine", [False, True], "refine")}
    assert singles_by_actor(groups) == {}
    register(baseline="single")
    assert singles_by_actor(groups) == {("a", None): groups[NEW]}
    STRATEGIES.pop(NEW)
    register(baseline="samples")
    assert [b for _, b, _ in _equal_tokens(groups)] == [f"{NEW} · a"]
