"""``refinelab report --why PROBLEM``: why each configuration returned what it did, decision by decision."""

from __future__ import annotations

from pathlib import Path

import pytest

from refinelab.cli import main
from tests.view.selecting import make_selecting_run


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return make_selecting_run(tmp_path_factory.mktemp("why"))


def why(run: tuple[Path, str], problem: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["report", run[1], "--store", str(run[0]), "--why", problem], {})
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_why_lists_each_decision_with_its_reason_in_order(
    run: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = why(run, "p1", capsys)  # an id unique in the run stands for jsonl/p1
    assert code == 0
    assert out.startswith(f"Why each configuration returned what it did on jsonl/p1 (run {run[1]})\n")
    verified, codet = out.split("\n\n")[1:]
    assert verified.splitlines() == [
        "verified(k=2, m=1, max_rounds=1) · fake / fake",
        "  returned attempt 0 (stopped: max_iterations); hidden tests: fail",
        "  1. tests    known tests: 1 visible, 3 generated",
        "  2. refine   attempt 0: round 1: fails 2 of 4 known tests",
        "  3. refine   attempt 1: round 1: fails 2 of 4 known tests",
        "  4. discard  attempt 2 (refined from attempt 0): regression: passes 1 of 4 known tests, its parent passed 2",
        "  5. discard  attempt 3 (refined from attempt 1): regression: passes 1 of 4 known tests, its parent passed 2",
        "  6. group    [attempt 0, attempt 1]: 2 program(s) pass the same 2 of 3 tests (score 2.83)",
        "  7. choose   attempt 0: best available after stopping (max_iterations): passes 2 of 4 known tests",
        "  generated tests: 3 from 1 call, the reference passes 2 of 3; 1 rejected",
    ]
    assert codet.startswith("codet(n=2, m=1) · fake\n  returned attempt 0 (stopped: agreement)")
    assert "choose   attempt 0 [attempt 0, attempt 1]: earliest member of the best group" in codet


def test_why_says_when_a_refinement_was_kept_and_the_answer_passes(
    run: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = why(run, "jsonl/p2", capsys)
    assert "returned attempt 2 (stopped: verified); hidden tests: pass" in out
    assert "keep     attempt 2 (refined from attempt 0): passes 3 of 4 known tests (its parent passed 2)" in out


def test_an_unknown_problem_is_a_one_line_user_error(run: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = why(run, "p9", capsys)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"refinelab: error: --why p9: no problem of run {run[1]} match (write benchmark/id, e.g. jsonl/p0)"
    ]
