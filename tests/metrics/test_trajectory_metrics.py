"""Metrics over hand-built scored trajectories; every expected number is worked out in the comments."""

from __future__ import annotations

from dataclasses import replace

import pytest

from refinelab.metrics import (
    ConfusionMatrix,
    Paired,
    ScoredAttempt,
    ScoredTrajectory,
    actor_confidence,
    answer_at,
    average_attempts,
    average_refinements,
    bootstrap_difference,
    brier,
    capped,
    confusion_matrix,
    critic_confidence,
    decisions,
    first_pass_iterations,
    improvement_rate,
    judges_last,
    max_iteration,
    mcnemar,
    means,
    paired,
    pass_at_iteration,
    pass_final,
    prompt_tokens_by_round,
    regression_errors,
    regression_rate,
    reliability,
    sampling_at_equal_tokens,
    step_rates,
    trajectories_pass_at_k,
)
from refinelab.records import Spend, Usage


def attempt(i: int, passed: bool, verdict: str | None = None, **kw: object) -> ScoredAttempt:
    origin = "draft" if i == 0 else "refine"
    usage = Usage(int(kw.pop("prompt_tokens", 0)), int(kw.pop("completion_tokens", 0)))  # type: ignore[call-overload]
    spend = Spend(usage, kw.pop("cost_usd", None))  # type: ignore[arg-type]
    return ScoredAttempt(i, kw.pop("origin", origin), passed, critic_verdict=verdict, spend=spend, **kw)  # type: ignore[arg-type]


def trajectory(problem: str, *attempts: ScoredAttempt, final: int | None = None, **kw: object) -> ScoredTrajectory:
    last = len(attempts) - 1 if final is None else final
    fields = {"config": "c", "strategy": "self-refine", "params": "", "actor": "a", "critic": "a", "repeat": 0}
    fields.update({"stop_reason": "accepted", **kw})
    return ScoredTrajectory(problem=problem, attempts=attempts, final=last, **fields)  # type: ignore[arg-type]


# Four self-refine trajectories (P = passes hidden tests, verdicts after each attempt):
#   t1: P(pass)                       - accepted at once, correct
#   t2: F(refine) -> P(pass)          - improved at iteration 1
#   t3: P(refine) -> F(refine) -> F(pass)  - a regression error (passing attempt rejected, refined into a failure)
#   t4: F(pass)                       - false acceptance
T1 = trajectory("p1", attempt(0, True, "pass"))
T2 = trajectory("p2", attempt(0, False, "refine"), attempt(1, True, "pass"))
T3 = trajectory("p3", attempt(0, True, "refine"), attempt(1, False, "refine"), attempt(2, False, "pass"))
T4 = trajectory("p4", attempt(0, False, "pass"))
RUN = [T1, T2, T3, T4]


def test_pass_at_each_iteration_keeps_the_last_attempt_of_stopped_trajectories() -> None:
    # iteration 0: t1 P, t2 F, t3 P, t4 F -> 2/4; iteration 1: P, P, F, F -> 2/4; iteration 2: P, P, F, F
    assert [pass_at_iteration(RUN, i) for i in range(3)] == [0.5, 0.5, 0.5]
    assert pass_final(RUN) == 0.5
    improvement, regression = step_rates(RUN, 1)
    assert (improvement.count, improvement.of) == (1, 2)  # t2 of the failing t2, t4
    assert (regression.count, regression.of) == (1, 2)  # t3 of the passing t1, t3


def test_improvement_regression_and_regression_errors() -> None:
    assert (improvement_rate(RUN).count, improvement_rate(RUN).of) == (1, 2)
    assert (regression_rate(RUN).count, regression_rate(RUN).of) == (1, 2)
    assert regression_errors(RUN) == 1  # only t3's attempt 0
    assert regression_rate([]).value is None  # no case, not 0


def test_iterations() -> None:
    assert average_refinements(RUN) == (0 + 1 + 2 + 0) / 4
    assert average_attempts(RUN) == 7 / 4
    assert first_pass_iterations(RUN) == {0: 2, 1: 1, None: 1}


def test_critic_confusion_matrix_and_decisions() -> None:
    m = confusion_matrix(RUN)
    # verdicts: t1 pass/P (TA); t2 refine/F (TR), pass/P (TA); t3 refine/P (FR), refine/F (TR), pass/F (FA); t4 pass/F (FA)
    assert (m.true_accept, m.false_accept, m.true_reject, m.false_reject) == (2, 2, 2, 1)
    assert m.false_rejection_rate.value == 1 / 3 and m.false_acceptance_rate.value == 2 / 4
    found = decisions(RUN)
    assert (found["pass"].count, found["pass"].led_to_pass) == (4, 2)  # accepted attempts that pass: t1, t2
    assert (found["refine"].count, found["refine"].led_to_pass) == (3, 1)  # next attempts: P (t2), F, F (t3)
    assert found["redraft"].count == 0


def test_step_rates_tell_changes_from_answers_that_stay() -> None:
    # iteration 0 -> 1: P->P twice, P->F once, F->P once, F->F three times. The counts differ from the
    # answers that stayed, so counting those instead shows (the four trajectories above cannot tell).
    changes = [(True, True), (True, True), (True, False), (False, True), (False, False), (False, False), (False, False)]
    run = [trajectory(f"s{i}", attempt(0, a), attempt(1, b)) for i, (a, b) in enumerate(changes)]
    improvement, regression = step_rates(run, 1)
    assert (improvement.count, improvement.of, regression.count, regression.of) == (1, 4, 1, 3)


def test_first_pass_is_the_earliest_passing_attempt() -> None:
    run = [
        trajectory("a", attempt(0, False), attempt(1, True), attempt(2, True)),  # 1, not the later 2
        trajectory("b", attempt(0, True), attempt(1, False), attempt(2, True)),  # 0
        trajectory("c", attempt(0, False), attempt(1, False)),  # never
    ]
    assert first_pass_iterations(run) == {1: 1, 0: 1, None: 1}


def test_critic_rates_have_their_own_denominators() -> None:
    # 3 true accepts, 1 false accept, 2 true rejects, 1 false reject: no two denominators coincide
    m = ConfusionMatrix(true_accept=3, false_accept=1, true_reject=2, false_reject=1)
    assert (m.false_rejection_rate.count, m.false_rejection_rate.of) == (1, 4)  # of the 4 passing programs judged
    assert (m.false_acceptance_rate.count, m.false_acceptance_rate.of) == (1, 3)  # of the 3 failing ones
    assert (m.accept_rate.count, m.accept_rate.of, m.accuracy.count, m.accuracy.of) == (4, 7, 5, 7)


def test_a_rejection_is_judged_by_the_next_attempt() -> None:
    run = [
        # refine on F -> F, refine on F -> P, then pass on P: refine led to a pass once of twice
        trajectory("x", attempt(0, False, "refine"), attempt(1, False, "redraft"), attempt(2, True, "pass")),
        # refine on a passing attempt with no next one (a budget ended the run): not a pass
        trajectory("y", attempt(0, True, "refine")),
    ]
    found = decisions(run)
    assert (found["refine"].count, found["refine"].led_to_pass) == (2, 0)
    assert (found["redraft"].count, found["redraft"].led_to_pass) == (1, 1)
    assert (found["pass"].count, found["pass"].led_to_pass) == (1, 1)


def test_counterfactual_cap_drops_later_attempts_without_new_calls() -> None:
    costly = trajectory(
        "p", attempt(0, True, "refine", completion_tokens=10), attempt(1, False, "pass", completion_tokens=7)
    )
    cut = capped(costly, 0)
    assert cut.final == 0 and cut.passed and cut.tokens == 10 and cut.stop_reason == "max_iterations"
    assert capped(costly, 5) is costly
    # capping every trajectory at i reproduces pass@1 after iteration i
    for cap in range(3):
        assert pass_final([capped(t, cap) for t in RUN]) == pass_at_iteration(RUN, cap)


def test_a_lower_cap_ends_the_loop_without_judging_the_attempt_at_it() -> None:
    """Self-Refine's loop does not ask the critic about the attempt at its cap: re-scored with a lower cap,
    that attempt loses its critic call too (unless the configuration judged the last attempt)."""
    judged = Spend(Usage(20, 5), 0.5)
    first = replace(attempt(0, True, "refine", completion_tokens=10, cost_usd=1.0), critic_spend=judged,
                    critic_latency_seconds=2.0, latency_seconds=3.0)  # fmt: skip
    first = replace(first, spend=first.spend + judged)
    second = attempt(1, False, completion_tokens=7, cost_usd=1.0)
    costly = trajectory("p", first, second, stop_reason="max_iterations", critique_last=False)
    cut = capped(costly, 0, judges_last=False)
    assert (
        cut.tokens == 10
        and cut.cost_usd == 1.0
        and cut.latency_seconds == 1.0
        and cut.attempts[0].critic_verdict is None
    )
    assert capped(costly, 0).tokens == 35  # judged: the call stays
    accepted = trajectory("q", replace(first, critic_verdict="pass"), critique_last=False)
    assert capped(accepted, 0, judges_last=False).tokens == 10 and capped(accepted, 0) is accepted
    assert not judges_last([costly]) and judges_last([replace(costly, critique_last=True)])
    assert judges_last([replace(costly, critique_last=None)])  # runs from before the argument: always judged
    assert not judges_last([trajectory("s", attempt(0, True), critic=None)])


def test_confidence_brier_and_reliability() -> None:
    stated = [
        trajectory("p", attempt(0, True, confidence=0.9, critic_confidence=0.8, verdict="pass")),
        trajectory("q", attempt(0, False, confidence=0.7, critic_confidence=0.6, verdict="pass")),
    ]
    actor = actor_confidence(stated)
    assert actor == [(0.9, True), (0.7, False)]
    assert brier(actor) == pytest.approx(((0.9 - 1) ** 2 + 0.7**2) / 2)  # (0.01 + 0.49) / 2 = 0.25
    assert critic_confidence(stated) == [(0.8, True), (0.6, False)]  # q: accepted failing code -> wrong verdict
    bins = reliability(actor, bins=5)
    assert [b.count for b in bins] == [0, 0, 0, 1, 1]
    assert bins[4].accuracy == 1.0 and bins[3].accuracy == 0.0 and bins[3].mean_confidence == 0.7
    assert brier([]) is None


def test_mcnemar_exact_and_bootstrap() -> None:
    a = [trajectory(f"p{i}", attempt(0, i < 5), strategy="single-pass") for i in range(10)]
    b = [trajectory(f"p{i}", attempt(0, i < 2 or i >= 8)) for i in range(10)]
    pairs = paired(a, b)
    # A only: p2, p3, p4 (3); B only: p8, p9 (2); two-sided exact: 2 * P(X <= 2 | n=5) = 2 * 16/32 = 1.0
    assert (pairs.only_a, pairs.only_b) == (3, 2)
    assert mcnemar(pairs) == 1.0
    lopsided = paired(a[:0] + [trajectory(f"q{i}", attempt(0, False)) for i in range(6)],
                      [trajectory(f"q{i}", attempt(0, True)) for i in range(6)])  # fmt: skip
    assert mcnemar(lopsided) == 2 / 64  # 0 vs 6 discordant: 2 * (1/2)^6
    diff = bootstrap_difference(pairs, resamples=500, seed=1)
    assert diff is not None and diff[0] == pytest.approx(-0.1) and diff[1] <= -0.1 <= diff[2]
    assert bootstrap_difference(pairs, resamples=500, seed=1) == diff  # seeded


@pytest.mark.parametrize(
    ("only_a", "only_b"),
    [(0, 1), (3, 2), (10, 30), (2000, 2096), (2040, 2057), (4000, 4500), (19_900, 20_400), (20_150, 20_150),
     (5, 40_295), (480_000, 520_000)],
)  # fmt: skip
def test_mcnemar_agrees_with_scipy_binomtest_to_six_digits(only_a: int, only_b: int) -> None:
    from scipy.stats import binomtest  # type: ignore[import-untyped]

    pairs = Paired((True,) * only_a + (False,) * only_b, (False,) * only_a + (True,) * only_b)
    expected = binomtest(min(only_a, only_b), only_a + only_b, 0.5).pvalue
    assert mcnemar(pairs) == pytest.approx(expected, rel=1e-6, abs=1e-300)


def sample(i: int, passed: bool, tokens: int, visible: bool, count: int = 0) -> ScoredAttempt:
    return ScoredAttempt(
        i, "sample", passed, visible_passed=visible, visible_pass_count=count, spend=Spend(Usage(0, tokens), None)
    )


def test_pass_at_k_over_samples_and_over_repeats() -> None:
    sampled = [
        trajectory("p", sample(0, True, 1, True), sample(1, False, 1, False), strategy="sampling", final=0),
        trajectory("q", sample(0, False, 1, False), sample(1, False, 1, False), strategy="sampling", final=0),
    ]
    # p: n=2, c=1 -> pass@1 0.5, pass@2 1; q: 0 -> means 0.25 and 0.5
    assert trajectories_pass_at_k(sampled, 1) == 0.25 and trajectories_pass_at_k(sampled, 2) == 0.5
    assert trajectories_pass_at_k(sampled, 3) is None
    repeats = [trajectory("p", attempt(0, r == 0), repeat=r) for r in range(4)]
    assert trajectories_pass_at_k(repeats, 1) == 0.25  # one of four repeats passed


def test_samples_then_refinements_are_not_iterations() -> None:
    # verified: k samples, then refinements of the failing ones; attempt i is not "after i iterations"
    refined = (attempt(2, False, origin="refine"), attempt(3, True, origin="refine"))
    verified = [
        trajectory("p", sample(0, True, 1, True), sample(1, False, 1, False), strategy="verified", final=0),
        trajectory("q", sample(0, False, 1, False), sample(1, False, 1, False), *refined, strategy="verified", final=3),
    ]
    assert max_iteration(verified) == 0 and pass_at_iteration(verified, 1) is None
    assert answer_at(verified[1], 1) is None and answer_at(verified[1], 0) == verified[1].attempts[0]
    assert pass_at_iteration(verified, 0) == 0.5 and pass_final(verified) == 1.0
    assert average_refinements(verified) is None
    # pass@k over the samples only (p: 1 of 2, q: 0 of 2); a refinement is not a sample
    assert trajectories_pass_at_k(verified, 1) == 0.25 and trajectories_pass_at_k(verified, 2) == 0.5
    with pytest.raises(ValueError):
        capped(verified[1], 1)


def test_sampling_at_equal_tokens_uses_the_samples_that_fit() -> None:
    refinement = [
        trajectory("p", attempt(0, False, completion_tokens=30), attempt(1, False, completion_tokens=30)),  # 60 tokens
        trajectory("q", attempt(0, True, completion_tokens=10)),  # 10 tokens
    ]
    sampling = [
        # p: 25 + 25 fit in 60, the third would not; choice by visible tests: sample 1 (passes visible), which passes hidden
        trajectory("p", sample(0, False, 25, False), sample(1, True, 25, True), sample(2, True, 25, True), final=1),
        # q: the first sample always counts even over budget
        trajectory("q", sample(0, False, 20, False, 1), sample(1, True, 20, True), final=1),
    ]
    result = sampling_at_equal_tokens(refinement, sampling)
    assert result is not None
    assert (result.problems, result.refinement, result.sampling, result.any_sample, result.mean_samples) == (
        2,
        0.5,
        0.5,
        0.5,
        1.5,
    )


def test_sampling_at_equal_tokens_counts_a_sample_that_fits_exactly_and_breaks_ties_early() -> None:
    refinement = [trajectory("p", attempt(0, False, completion_tokens=50))]  # 50 tokens
    sampling = [
        # 25 + 25 is exactly 50: both fit. Neither passes its visible tests and both pass one: the earlier wins
        # (and passes the hidden tests; the later does not)
        trajectory(
            "p", sample(0, True, 25, False, 1), sample(1, False, 25, False, 1), sample(2, False, 1, False), final=0
        ),
    ]
    result = sampling_at_equal_tokens(refinement, sampling)
    assert result is not None and (result.sampling, result.any_sample, result.mean_samples) == (1.0, 1.0, 2.0)


def test_means_and_unknown_cost() -> None:
    known = [trajectory("p", attempt(0, True, completion_tokens=4, cost_usd=0.5, latency_seconds=2.0))]
    assert means(known) is not None and means(known).cost_usd == 0.5  # type: ignore[union-attr]
    unknown = [*known, trajectory("q", attempt(0, True, completion_tokens=6))]
    found = means(unknown)
    assert found is not None and found.tokens == 5 and found.seconds == 1.0 and found.cost_usd is None


def test_prompt_tokens_by_round() -> None:
    grow = [
        trajectory("p", attempt(0, False, actor_prompt_tokens=10), attempt(1, True, actor_prompt_tokens=30)),
        trajectory("q", attempt(0, False, actor_prompt_tokens=20), attempt(1, True, actor_prompt_tokens=50)),
    ]
    assert prompt_tokens_by_round(grow) == [15, 40]
