"""Bootstrap intervals over problems, on cases small enough to count the resampling distribution by hand."""

from __future__ import annotations

import pytest

from refinelab.metrics import Bootstrap, Interval, PerProblem


def one_each(values: list[float]) -> PerProblem:
    return PerProblem(tuple(values), tuple(1.0 for _ in values))


def test_identical_problems_give_a_zero_width_interval() -> None:
    assert Bootstrap(5).mean(one_each([1, 1, 1, 1, 1])) == Interval(1.0, 1.0, 1.0)
    assert Bootstrap(3).mean(one_each([0, 0, 0])) == Interval(0.0, 0.0, 0.0)


def test_two_problems_one_solved() -> None:
    # resampled means are 0, 1/2, 1 with probabilities 1/4, 1/2, 1/4: both 2.5% tails reach the ends
    assert Bootstrap(2).mean(one_each([1, 0])) == Interval(0.5, 0.0, 1.0)


def test_four_problems_three_solved() -> None:
    # solved draws ~ Binomial(4, 3/4): P(0) = 0.4% and P(<= 1) = 5.1%, so the 2.5th percentile is 1/4;
    # P(4) = 31.6%, so the 97.5th percentile is 1
    assert Bootstrap(4).mean(one_each([1, 1, 1, 0])) == Interval(0.75, 0.25, 1.0)


def test_three_problems_two_solved() -> None:
    # P(all three draws unsolved) = 1/27 = 3.7% > 2.5%: the interval reaches 0
    assert Bootstrap(3).mean(one_each([1, 1, 0])) == Interval(pytest.approx(2 / 3), 0.0, 1.0)  # type: ignore[arg-type]


def test_repeats_stay_with_their_problem_and_weight_the_mean() -> None:
    # problem 0 ran three times (all passed), problem 1 once (failed): the mean is 3/4, not 1/2;
    # resamples: {0,0} -> 1, {1,1} -> 0, mixed -> 3/4
    result = Bootstrap(2).mean(PerProblem((3.0, 0.0), (3.0, 1.0)))
    assert result == Interval(0.75, 0.0, 1.0)


def test_totals_count_cases_over_resampled_problems() -> None:
    # regression errors 2 and 0: resampled totals are 0, 2, 4 with probabilities 1/4, 1/2, 1/4
    assert Bootstrap(2).total([2, 0]) == Interval(2.0, 0.0, 4.0)
    assert Bootstrap(0).total([]) is None


def test_ratio_resamples_both_sides_by_the_same_problems() -> None:
    # cost per problem 4 and 2 against a baseline of 2 and 1: every resample has ratio exactly 2
    assert Bootstrap(2).ratio(one_each([4, 2]), one_each([2, 1])) == Interval(2.0, 2.0, 2.0)
    # a zero baseline has no ratio
    assert Bootstrap(2).ratio(one_each([4, 2]), one_each([0, 0])) is None


def test_empty_data_has_no_interval_and_bad_shapes_are_refused() -> None:
    assert Bootstrap(2).mean(PerProblem((0.0, 0.0), (0.0, 0.0))) is None
    with pytest.raises(ValueError, match="expected 3 per-problem"):
        Bootstrap(3).mean(one_each([1, 0]))
    with pytest.raises(ValueError, match="resamples"):
        Bootstrap(3, resamples=0)


def test_the_same_seed_gives_the_same_interval_and_the_interval_holds_the_value() -> None:
    values = one_each([1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0])
    first, again = Bootstrap(12).mean(values), Bootstrap(12).mean(values)
    other = Bootstrap(12, seed=7).mean(values)
    assert first == again and first is not None and other is not None
    assert first.low <= first.value <= first.high and 0 < first.low < first.high < 1
    narrower = Bootstrap(12, level=0.5).mean(values)
    assert narrower is not None and first.low <= narrower.low <= narrower.high <= first.high


def test_the_interval_ends_are_the_percentiles_of_the_resampled_means() -> None:
    # 41 resamples: the 2.5th and 97.5th percentiles are the 2nd smallest and the 2nd largest of 41
    values = [float(2**i) for i in range(6)]  # distinct sums: every resample has its own mean
    bootstrap = Bootstrap(6, resamples=41)
    means = sorted(sum(w * v for w, v in zip(weights, values)) / 6 for weights in bootstrap.weights)
    assert all(sum(weights) == 6 for weights in bootstrap.weights)
    result = bootstrap.mean(one_each(values))
    assert result == Interval(sum(values) / 6, pytest.approx(means[1]), pytest.approx(means[39]))  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["passes", "changes", "tokens", "one problem holds a value", "fractions"])
def test_resampled_sums_are_each_resamples_products_summed_exactly(kind: str) -> None:
    import random

    rng = random.Random(kind)
    values = {
        "passes": [float(rng.random() < 0.6) for _ in range(250)],
        "changes": [float(rng.choice((-1, 0, 0, 1))) for _ in range(250)],
        "tokens": [float(rng.randrange(100, 90_000)) for _ in range(250)],
        "one problem holds a value": [0.0] * 249 + [3.0],
        "fractions": [rng.random() / 7 for _ in range(250)],
    }[kind]
    bootstrap = Bootstrap(250, resamples=300, seed=3)
    expected = [float(sum(w * v for w, v in zip(weights, values))) for weights in bootstrap.weights]
    assert bootstrap.total(values) == Bootstrap(250, resamples=300, seed=3).total(values)
    found = bootstrap._dots(values)
    assert found == expected if kind != "fractions" else found == pytest.approx(expected)
