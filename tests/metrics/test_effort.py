"""Think longer vs refine vs sample: the Pareto frontier, effort order, effort pairs and overthinking, over
hand-built trajectories (every expected number worked out in the comments)."""

from __future__ import annotations

from refinelab.metrics import (
    ScoredAttempt,
    ScoredTrajectory,
    effort_comparisons,
    effort_rank,
    pareto_frontier,
    token_points,
)
from refinelab.records import Spend, Usage


def run(
    config: str, effort: str | None, passed: dict[str, bool], thinking: int, *, strategy: str = "single-pass"
) -> list[ScoredTrajectory]:
    """One configuration's trajectories: a single attempt per problem, 100 prompt tokens, ``thinking`` thinking
    tokens and 10 answer tokens."""
    usage = Usage(100, thinking + 10, reasoning_tokens=thinking)
    return [
        ScoredTrajectory(
            config=config,
            strategy=strategy,
            params="",
            actor="openai:o4-mini",
            critic=None,
            problem=problem,
            repeat=0,
            attempts=(ScoredAttempt(0, "draft", ok, spend=Spend(usage, 0.001)),),
            final=0,
            stop_reason="single_pass",
            effort=effort,
        )
        for problem, ok in passed.items()
    ]


LOW = run("a", "low", {"p0": True, "p1": True, "p2": False, "p3": False}, 50)
HIGH = run("b", "high", {"p0": True, "p1": False, "p2": True, "p3": True}, 400)
MEDIUM = run("c", "medium", {"p0": True, "p1": True, "p2": True, "p3": False}, 1000)


def test_the_pareto_frontier_keeps_what_nothing_cheaper_beats() -> None:
    # (tokens, pass): (1, .5) on; (2, .4) beaten by (1, .5); (3, .9) on; (.5, .1) on (cheapest); (3, .9) again: tie
    assert pareto_frontier([(1, 0.5), (2, 0.4), (3, 0.9), (0.5, 0.1), (3, 0.9)]) == [3, 0, 2]


def test_efforts_sort_by_level_then_budgets_by_size_and_the_default_has_no_place() -> None:
    assert sorted(["high", "none", "low", "xhigh", "minimal", "medium"], key=effort_rank) == [  # type: ignore[arg-type]
        "none", "minimal", "low", "medium", "high", "xhigh",
    ]  # fmt: skip
    assert effort_rank("512") < effort_rank("4096")  # type: ignore[operator]
    assert effort_rank(None) is None


def test_token_points_split_tokens_and_mark_the_frontier() -> None:
    low, high, medium = token_points([LOW, HIGH, MEDIUM])
    # low: 100 + 60 = 160 tokens, pass 2/4; high: 100 + 410 = 510, pass 3/4; medium: 1110, pass 3/4 (beaten by high)
    assert (low.tokens.value, low.prompt, low.visible, low.thinking, low.pass_at_1.value) == (160, 100, 10, 50, 0.5)
    assert (high.tokens.value, high.pass_at_1.value) == (510, 0.75)
    assert [p.frontier for p in (low, high, medium)] == [True, True, False]
    assert low.pass_at_1.low <= 0.5 <= low.pass_at_1.high and low.pass_at_1.low < low.pass_at_1.high


def test_overthinking_is_what_a_higher_effort_broke_of_what_a_lower_one_solved() -> None:
    comparisons = {(c.lower_effort, c.higher_effort): c for c in effort_comparisons([HIGH, LOW, MEDIUM])}
    assert set(comparisons) == {("low", "high"), ("low", "medium"), ("medium", "high")}
    low_high = comparisons[("low", "high")]
    assert low_high.lower_config == "a" and low_high.higher_config == "b"
    assert low_high.overthinking == (("p1", 0),)  # p1: right at low, wrong at high
    assert (low_high.paired.only_a, low_high.paired.only_b) == (1, 2)  # p2, p3 only at high
    assert comparisons[("medium", "high")].overthinking == (("p1", 0),)
    assert comparisons[("low", "medium")].overthinking == ()


def test_only_efforts_of_one_strategy_are_paired() -> None:
    other = run("d", "high", {"p0": False, "p1": False, "p2": False, "p3": False}, 10, strategy="sampling")
    default = run("e", None, {"p0": True, "p1": True, "p2": True, "p3": True}, 10)
    pairs = [(c.lower_config, c.higher_config) for c in effort_comparisons([LOW, other, default])]
    assert pairs == []  # sampling is another strategy; the model's default effort has no place among levels
