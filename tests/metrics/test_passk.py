from __future__ import annotations

import math

import pytest

from refinelab.metrics import mean_pass_at_k, pass_at_k


def test_hand_computed_values() -> None:
    assert pass_at_k(10, 0, 1) == 0.0
    assert pass_at_k(10, 10, 5) == 1.0
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    # 1 - C(7, 2) / C(10, 2) = 1 - 21/45
    assert pass_at_k(10, 3, 2) == pytest.approx(1 - 21 / 45)
    assert pass_at_k(200, 1, 100) == pytest.approx(1 - math.comb(199, 100) / math.comb(200, 100))


def test_mean_over_problems_needs_k_samples_each() -> None:
    assert mean_pass_at_k([(2, 1), (2, 2)], 1) == pytest.approx(0.75)
    assert mean_pass_at_k([(2, 1), (1, 1)], 2) is None
    assert mean_pass_at_k([], 1) is None


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError, match="pass@k"):
        pass_at_k(3, 4, 1)
