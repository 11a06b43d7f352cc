"""Generated tests and decisions read back from the store as typed records, per trajectory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.store import GeneratedTest, Store, TrajectoryDetail
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


def test_export_carries_each_trajectorys_decisions_and_generated_tests(run: tuple[Path, str], tmp_path: Path) -> None:
    out = tmp_path / "attempts.jsonl"
    assert main(["export", run[1], "--store", str(run[0]), "--out", str(out)], {}) == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    p1 = [line for line in lines if line["strategy"] == "verified" and line["problem_id"] == "jsonl/p1"]
    assert [line["iteration"] for line in p1] == [0, 1, 2, 3]
    first, _, discarded, _ = p1
    assert [d["kind"] for d in first["trajectory_decisions"]] == [
        "tests", "refine", "refine", "discard", "discard", "group", "choose"
    ]  # fmt: skip
    assert [d["kind"] for d in first["decisions"]] == ["refine", "choose"]  # those about attempt 0
    assert discarded["decisions"] == [{
        "kind": "discard", "reason": "regression: passes 1 of 4 known tests, its parent passed 2", "attempt": 2,
        "parent": 0, "known_passed": 1, "known_total": 4, "members": [],
    }]  # fmt: skip
    assert discarded["trajectory_decisions"] is None and discarded["generated_tests"] is None
    (generation,) = first["generated_tests"]
    assert [(t["text"], t["reference_passed"]) for t in generation["tests"]] == [
        ("assert f(2) == 3", True), ("assert f(7) == 8", True), ("assert f(4) == 0", False)
    ]  # fmt: skip
    assert generation["rejected"] == ["does not call f"] and "assert g(1)" in generation["raw"]
    plain = [line for line in lines if line["strategy"] == "codet" and line["iteration"] == 1]
    assert all(line["decisions"] == [] and line["generated_tests"] is None for line in plain)
    with Store(run[0]) as opened:
        assert {line["config"] for line in lines} == {c.key for c in opened.configurations(run[1])}
