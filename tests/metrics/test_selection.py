"""Selection measures over hand-built scored trajectories."""

from __future__ import annotations

from refinelab.metrics import (
    ScoredAttempt,
    ScoredTrajectory,
    Spend,
    Usage,
    generated_test_accuracy,
    refinement_at_equal_tokens,
    selection_accuracy,
)


def trajectory(
    problem: str, passes: list[bool], final: int, *, strategy: str = "verified", tokens: int = 10, **extra: object
) -> ScoredTrajectory:
    attempts = tuple(
        ScoredAttempt(i, "sample", p, spend=Spend(Usage(prompt_tokens=tokens), None)) for i, p in enumerate(passes)
    )
    return ScoredTrajectory(
        config="c",
        strategy=strategy,
        params="",
        actor="a",
        critic=None,
        problem=problem,
        repeat=0,
        attempts=attempts,
        final=final,
        stop_reason="verified",
        **extra,  # type: ignore[arg-type]
    )


def test_selection_accuracy_counts_only_problems_where_some_candidate_passes() -> None:
    runs = [
        trajectory("p1", [False, True], 1),  # right choice
        trajectory("p2", [True, False], 1),  # wrong choice although one passed
        trajectory("p3", [False, False], 0),  # nothing to choose: not counted
    ]
    rate = selection_accuracy(runs)
    assert (rate.count, rate.of) == (1, 2)


def test_generated_test_accuracy_pools_tests_of_problems_with_a_reference() -> None:
    runs = [
        trajectory("p1", [True], 0, generated_tests=4, generated_correct=3),
        trajectory("p2", [True], 0, generated_tests=2, generated_correct=0),
        trajectory("p3", [True], 0, generated_tests=5, generated_correct=None),  # no reference: left out
    ]
    rate = generated_test_accuracy(runs)
    assert (rate.count, rate.of) == (3, 6)


def test_iterative_refinement_is_cut_at_the_tokens_verified_spent() -> None:
    mine = [
        trajectory("p1", [True], 0, tokens=25, test_spend=Spend(Usage(5), None)),
        trajectory("p2", [False], 0, tokens=100),
    ]
    other = [
        trajectory("p1", [False, False, True], 2, strategy="self-refine", tokens=10),  # 30 tokens: fits exactly
        trajectory("p2", [False, True, True], 2, strategy="self-refine", tokens=60),  # only the first fits
    ]
    result = refinement_at_equal_tokens(mine, other)
    assert result is not None and result.problems == 2
    assert result.reference == 0.5 and result.other == 0.5  # p1 fits whole (final passes); p2 cut to attempt 0
    assert result.reference_tokens == (30 + 100) / 2 and result.other_tokens == (30 + 60) / 2
