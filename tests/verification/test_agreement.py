"""Dual agreement on hand-built pass matrices where the right group is known."""

from __future__ import annotations

import math

from refinelab.verification import dual_agreement


def sets(*rows: set[int]) -> list[frozenset[int]]:
    return [frozenset(row) for row in rows]


def test_largest_consistent_group_wins_over_a_lone_program_passing_more() -> None:
    # Three programs agree on tests {0, 1}; one outlier passes {0, 1, 2}; one passes nothing.
    passed = sets({0, 1}, {0, 1, 2}, {0, 1}, set(), {0, 1})
    found = dual_agreement(passed, score="product")
    assert found.best is not None
    assert found.best.members == (0, 2, 4)
    assert found.best.score == 6
    assert found.chosen == 0
    assert [g.members for g in found.groups] == [(0, 2, 4), (1,), (3,)]


def test_codet_score_is_square_root_of_group_size_times_tests() -> None:
    # product: 4 x 1 = 4 beats 1 x 3 = 3; codet: sqrt(4) x 1 = 2 loses to sqrt(1) x 3 = 3.
    passed = sets({0}, {0}, {0}, {0}, {0, 1, 2})
    assert dual_agreement(passed, score="product").chosen == 0
    codet = dual_agreement(passed, score="codet")
    assert codet.chosen == 4
    assert codet.groups[1].score == math.sqrt(4) * 1


def test_ties_more_tests_then_larger_group_then_earliest() -> None:
    # product: {0,1} x 2 programs = 4 and {0,1,2,3} x 1 program = 4 tie; more tests wins.
    passed = sets({0, 1}, {0, 1}, {0, 1, 2, 3})
    assert dual_agreement(passed, score="product").chosen == 2
    # Same score, same tests: earliest program's group wins.
    passed = sets({1}, {0})
    assert dual_agreement(passed, score="product").chosen == 0
    passed = sets({0}, {1})
    assert dual_agreement(passed, score="product").chosen == 0


def test_ties_under_codet_compare_exactly() -> None:
    # sqrt(4) x 3 = 6 = sqrt(9) x 2: equal scores, so the group with more tests wins whatever the rounding.
    passed = sets(*([{0, 1}] * 9), *([{2, 3, 4}] * 4))
    found = dual_agreement(passed)
    assert found.chosen == 9
    assert found.tied == tuple(range(13))


def test_codet_scores_rank_as_codets_floating_point_arithmetic_ranks_them() -> None:
    # 3 programs x 9 tests and 27 programs x 3 tests are equal in exact arithmetic (sqrt(3) x 9 =
    # sqrt(27) x 3), but CodeT compares 9 * sqrt(3) = 15.588457268119894 with 3 * sqrt(27) =
    # 15.588457268119896: the larger group is first and alone, so CodeT's pick is among its 27 only.
    passed = sets(*([set(range(9))] * 3), *([{9, 10, 11}] * 27))
    found = dual_agreement(passed)
    assert found.groups[0].members == tuple(range(3, 30))
    assert found.chosen == 3
    assert found.tied == tuple(range(3, 30))


def test_weights_count_duplicate_tests() -> None:
    passed = sets({0}, {0}, {1}, {1})
    assert dual_agreement(passed).chosen == 0
    assert dual_agreement(passed, weights=[1, 5]).chosen == 2


def test_nobody_passes_anything_picks_the_first_program() -> None:
    found = dual_agreement(sets(set(), set(), set()))
    assert found.chosen == 0
    assert found.best is not None and found.best.score == 0


def test_no_programs() -> None:
    found = dual_agreement([])
    assert found.chosen is None and found.best is None and found.tied == ()


def test_the_decision_as_json() -> None:
    found = dual_agreement(sets({1, 0}, set(), {0, 1}), score="product")
    assert found.to_json() == {
        "score": "product",
        "chosen": 0,
        "groups": [
            {"members": [0, 2], "passed": [0, 1], "tests": 2, "score": 4},
            {"members": [1], "passed": [], "tests": 0, "score": 0},
        ],
    }
