"""``report RUN --baseline OTHER`` pairs by problem, as the viewer's Compare page does, with one
implementation of the paired numbers (``metrics.compare_paired``) for both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.experiment import Configuration
from refinelab.report import build_report, render_text
from refinelab.store import RunProblem, Store, Unit
from refinelab.strategies import StrategySpec, Trajectory
from refinelab.view._payload import compare_payload, run_sides
from tests.report.test_report import HEADER, attempt, problem, result

SINGLE = Configuration(StrategySpec("single-pass"), "m", None)


def make_run(store: Store, run_id: str, verdicts: dict[str, bool]) -> None:
    """A single-pass run over ``verdicts``' problems, each passing or failing its hidden tests."""
    store.open_run(run_id, {"name": run_id, "repeats": 1}, HEADER)
    store.add_configurations(run_id, [SINGLE.stored()])
    store.add_problems(run_id, [RunProblem(f"jsonl/{p}", problem(p)) for p in verdicts])
    for name, passed in verdicts.items():
        trajectory = Trajectory(name, "single-pass", {}, (attempt(0, None, 100),), 0, "single_pass")
        store.save(run_id, Unit(SINGLE.key, f"jsonl/{name}", 0), trajectory, [result(passed)])
    store.finish_run(run_id, "complete")


SHARED = {f"p{i:02d}": i % 2 == 0 for i in range(20)}  # 10 of 20 pass, the same in both runs
EXTRA = {f"q{i:02d}": i < 6 for i in range(10)}  # 6 of 10 more pass only in the 30-problem run


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "store.sqlite"
    with Store(path) as opened:
        make_run(opened, "small", SHARED)
        make_run(opened, "large", {**SHARED, **EXTRA})
    return path


def test_the_baseline_is_paired_by_problem(store: Path) -> None:
    with Store(store) as opened:
        report = build_report(opened, "large", baseline="small")
    assert report.baseline is not None and report.baseline.run == "small"
    (row,) = report.baseline.rows
    assert row.paired is not None
    assert row.paired.pairs == 20 and row.paired.difference is not None and row.paired.difference[0] == 0.0
    assert (row.paired.only_a, row.paired.only_b, row.paired.p_value) == (0, 0, 1.0)
    assert len(row.paired.unpaired_b) == 10 and row.paired.unpaired_a == ()
    text = render_text(report)
    assert "+3.3" not in text  # the unpaired difference (16/30 - 10/20) the report used to show
    assert "+0.0 [+0.0, +0.0]" in text
    assert "Not paired (single-pass · m): only in large: 10 problems (jsonl/q00, jsonl/q01" in text


def test_the_baseline_numbers_equal_the_viewers_compare_page(store: Path) -> None:
    with Store(store) as opened:
        report = build_report(opened, "large", baseline="small")
        (mine,) = run_sides(opened, opened.run("large"))
        (theirs,) = run_sides(opened, opened.run("small"))
        page = compare_payload(theirs, mine, opened.trajectories("small"), opened.trajectories("large"))
    assert report.baseline is not None
    (row,) = report.baseline.rows
    assert row.paired is not None
    for field in ("pairs", "only_a", "only_b", "p_value", "difference"):
        assert page[field] == getattr(row.paired, field), field
    assert page["shown"]["difference"] in render_text(report)  # type: ignore[index]
    assert page["unpaired_b"] == 10  # the problems only the 30-problem run has, stated on the page too


def test_report_baseline_from_the_command_line(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "large", "--baseline", "small", "--store", str(store)], {}) == 0
    out = capsys.readouterr().out
    assert "Against baseline run small, paired by problem" in out
    assert main(["report", "large", "--baseline", "small", "--store", str(store), "--format", "json"], {}) == 0
    data = json.loads(capsys.readouterr().out)
    (entry,) = data["baseline"]["configurations"]
    assert entry["pairs"] == 20 and entry["difference"][0] == 0.0 and len(entry["unpaired_b"]) == 10
