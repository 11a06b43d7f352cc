"""The one rule for adding up what calls cost: tokens add, an estimate stays marked, an unknown price
stays unknown (never a false $0.00)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from refinelab.records import ScoredAttempt, ScoredTrajectory, Spend, Usage, total_cost


def test_usage_adds_every_count_and_keeps_an_estimate_marked() -> None:
    exact, guessed = Usage(10, 2, 4), Usage(5, 1, 0, estimated=True)
    assert exact + guessed == Usage(15, 3, 4, estimated=True)
    assert guessed + exact == Usage(15, 3, 4, estimated=True)
    assert not (exact + exact).estimated
    assert (exact + guessed).total_tokens == 18


def test_an_unknown_price_stays_unknown_in_any_order() -> None:
    known, unknown = Spend(Usage(10, 2), 0.25), Spend(Usage(1, 1), None)
    assert known + known == Spend(Usage(20, 4), 0.5)
    assert (known + unknown).cost_usd is None and (unknown + known).cost_usd is None
    assert (known + unknown).usage == Usage(11, 3)  # the tokens still add up
    assert Spend.total([known, known, unknown]).cost_usd is None
    assert Spend.total([known, known]) == known + known
    assert Spend.total([]) == Spend()  # nothing spent is $0, known
    assert total_cost([0.25, 0.5]) == 0.75 and total_cost([0.25, None]) is None and total_cost([]) == 0.0


def test_a_trajectory_spends_its_attempts_and_its_test_writing_calls() -> None:
    attempts = (ScoredAttempt(0, "sample", True, spend=Spend(Usage(10, 2), 0.5)),)
    fields: dict[str, Any] = {
        "config": "c",
        "strategy": "codet",
        "params": "",
        "actor": "a",
        "critic": None,
        "problem": "p",
    }
    known = ScoredTrajectory(**fields, repeat=0, attempts=attempts, final=0, stop_reason="agreement",
                             test_spend=Spend(Usage(3, 1), 0.25))  # fmt: skip
    assert (known.tokens, known.test_tokens, known.cost_usd) == (16, 4, 0.75)
    assert known.spend == Spend(Usage(13, 3), 0.75)
    unknown = replace(known, test_spend=Spend(Usage(3, 1), None))  # the test writer's price is unknown
    assert unknown.cost_usd is None and unknown.tokens == 16
