"""Generated tests and decisions read back from the store as typed records, per trajectory."""

from __future__ import annotations

from pathlib import Path

import pytest

from refinelab.experiment import GeneratedTest, Store, TrajectoryDetail
from refinelab.strategies import Decision
from tests.view.selecting import make_selecting_run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return make_selecting_run(tmp_path_factory.mktemp("selecting"))


@pytest.fixture(scope="module")
def details(run: tuple[Path, str]) -> dict[tuple[str, str], TrajectoryDetail]:
    store, run_id = run
    with Store(store) as opened:
        strategies = {c.key: c.strategy for c in opened.configurations(run_id)}
        return {(strategies[t.config], t.problem): t for t in opened.trajectory_details(run_id)}


def test_generated_tests_come_back_with_reference_verdicts_and_rejections(
    details: dict[tuple[str, str], TrajectoryDetail],
) -> None:
    (generation,) = details["verified", "jsonl/p2"].generations
    assert generation.tests == (
        GeneratedTest(kind="AssertTest", text="assert f(2) == 4", reference_passed=True),
        GeneratedTest(kind="AssertTest", text="assert f(7) == 9", reference_passed=True),
        GeneratedTest(kind="AssertTest", text="assert f(4) == 0", reference_passed=False),
    )
    assert generation.rejected == ("does not call f",)
    assert "assert g(1) == 1" in generation.raw and generation.prompt_tokens > 0


def test_decisions_come_back_in_order_with_their_evidence(details: dict[tuple[str, str], TrajectoryDetail]) -> None:
    decisions = details["verified", "jsonl/p1"].decisions
    assert [d.kind for d in decisions] == ["tests", "refine", "refine", "discard", "discard", "group", "choose"]
    assert decisions[3] == Decision("discard", "regression: passes 1 of 4 known tests, its parent passed 2", 2, 0, 1, 4)
    assert decisions[5].members == (0, 1)
    assert [d.kind for d in details["codet", "jsonl/p0"].decisions] == ["tests", "group", "choose"]


def test_one_problem_reads_only_its_own(run: tuple[Path, str]) -> None:
    with Store(run[0]) as opened:
        found = opened.trajectory_details(run[1], "jsonl/p2")
    assert {t.problem for t in found} == {"jsonl/p2"} and len(found) == 2
    kept = next(t for t in found if len(t.attempts) == 4)
    assert all("f(7) == 9" in g.tests[1].text for t in found for g in t.generations)
    assert [(d.kind, d.attempt, d.parent) for d in kept.decisions if d.kind == "keep"] == [
        ("keep", 2, 0),
        ("keep", 3, 1),
    ]
    assert kept.final == 2 and kept.decisions[-1] == Decision(
        "choose", "meets the stop rule: passes 3 of 4 known tests", 2, None, 3, 4
    )
