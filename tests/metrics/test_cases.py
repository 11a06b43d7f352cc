"""The cases behind the counts: the lists a viewer shows have exactly as many entries as the tables count."""

from __future__ import annotations

from refinelab.metrics import (
    Paired,
    ScoredAttempt,
    ScoredTrajectory,
    confusion_matrix,
    critic_call,
    critic_call_attempts,
    disagreements,
    improved,
    improvement_rate,
    paired,
    regression_error_attempts,
    regression_errors,
    regression_rate,
    worsened,
)


def trajectory(
    problem: str, steps: list[tuple[bool, str | None]], config: str = "c", repeat: int = 0
) -> ScoredTrajectory:
    attempts = tuple(
        ScoredAttempt(i, "draft" if i == 0 else "refine", ok, critic_verdict=verdict)  # type: ignore[arg-type]
        for i, (ok, verdict) in enumerate(steps)
    )
    return ScoredTrajectory(
        config=config, strategy="self-refine", params="", actor="m", critic="m", problem=problem, repeat=repeat,
        attempts=attempts, final=len(attempts) - 1, stop_reason="accepted",
    )  # fmt: skip


# the Sanitize Hands shape: right, rejected, broken, accepted
HANDS = trajectory("hands", [(True, "refine"), (False, "pass")])
# right, rejected, still right, rejected, broken, rejected, right again: two passing attempts were
# rejected but only the second was broken by the next attempt
ZIGZAG = trajectory("zigzag", [(True, "redraft"), (True, "refine"), (False, "refine"), (True, "pass")])
FIXED = trajectory("fixed", [(False, "refine"), (True, "pass")])
LEFT_WRONG = trajectory("wrong", [(False, "pass")])
ALL = [HANDS, ZIGZAG, FIXED, LEFT_WRONG]


def test_regression_error_attempts_are_the_rejected_passing_attempts_broken_next() -> None:
    assert regression_error_attempts(HANDS) == [0]
    assert regression_error_attempts(ZIGZAG) == [1]
    assert regression_error_attempts(FIXED) == regression_error_attempts(LEFT_WRONG) == []
    assert regression_errors(ALL) == 2
    # samples are not refinements: a passing sample before a failing one is no regression error
    samples = tuple(ScoredAttempt(i, "sample", ok) for i, ok in enumerate([True, False]))
    sampled = ScoredTrajectory(
        config="s", strategy="sampling", params="", actor="m", critic=None, problem="p", repeat=0, attempts=samples,
        final=0, stop_reason="sampled",
    )  # fmt: skip
    assert regression_error_attempts(sampled) == []
    # verified: a critic consulted on a tie rejected a passing sample; the next attempt is another candidate
    candidates = (
        ScoredAttempt(0, "sample", True, critic_verdict="refine"),
        ScoredAttempt(1, "sample", False),
        ScoredAttempt(2, "refine", False),
    )
    verified = ScoredTrajectory(
        config="v", strategy="verified", params="", actor="m", critic="m", problem="p", repeat=0, attempts=candidates,
        final=0, stop_reason="verified",
    )  # fmt: skip
    assert regression_error_attempts(verified) == []


def test_critic_calls_partition_the_confusion_matrix() -> None:
    assert [critic_call(a) for a in ZIGZAG.attempts] == ["false_reject", "false_reject", "true_reject", "true_accept"]
    assert critic_call_attempts(HANDS, "false_accept") == [1]
    assert critic_call_attempts(LEFT_WRONG, "false_accept") == [0]
    matrix = confusion_matrix(ALL)
    calls = {
        call: sum(len(critic_call_attempts(t, call)) for t in ALL)
        for call in ("true_accept", "false_accept", "true_reject", "false_reject")
    }
    assert calls == {"true_accept": 2, "false_accept": 2, "true_reject": 2, "false_reject": 3}
    assert (matrix.true_accept, matrix.false_accept, matrix.true_reject, matrix.false_reject) == (2, 2, 2, 3)
    no_verdict = ScoredAttempt(0, "draft", True)
    assert critic_call(no_verdict) is None


def test_improved_and_worsened_are_what_the_rates_count() -> None:
    assert [improved(t) for t in ALL] == [False, False, True, False]
    assert [worsened(t) for t in ALL] == [True, False, False, False]
    assert improvement_rate(ALL).count == 1 and regression_rate(ALL).count == 1


def test_disagreements_are_problems_where_returned_answers_differ() -> None:
    other = [
        trajectory("hands", [(True, None)], config="single"),  # passes where self-refine broke it
        trajectory("fixed", [(True, None)], config="single"),  # both pass: agreement
        trajectory("wrong", [(False, None)], config="single"),  # both fail: agreement
        trajectory("zigzag", [(True, None)], config="single", repeat=1),  # another repeat: not paired
    ]
    assert disagreements([*ALL, *other]) == [("hands", 0)]


def test_paired_lists_the_problems_only_one_side_solved() -> None:
    single = [
        trajectory(p, [(ok, None)], config="single") for p, ok in [("hands", True), ("fixed", False), ("wrong", False)]
    ]
    pairs = paired(single, ALL)
    assert pairs.keys == (("hands", 0), ("fixed", 0), ("wrong", 0))
    assert pairs.only("a") == [("hands", 0)] and pairs.only("b") == [("fixed", 0)]
    assert (pairs.only_a, pairs.only_b) == (1, 1)
    assert Paired((True,), (False,)).only("a") == []  # built by hand, without keys
