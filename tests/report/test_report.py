"""Reports over a stored run built by hand: snapshot of the tables, numbers recomputed by hand, HTML,
CSV and JSON, and the CLI."""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.experiment import Configuration
from refinelab.models import Usage
from refinelab.problems import CallTest, Problem
from refinelab.report import HEADLINE, build_report, overview_html, render_html, render_text, report_csv, report_json
from refinelab.sandbox import RunResult
from refinelab.sandbox import TestOutcome as Outcome
from refinelab.store import RunHeader, RunProblem, Store, Unit
from refinelab.strategies import Attempt, CriticOutput, StrategySpec, Trajectory

SNAPSHOT = Path(__file__).parent / "snapshots" / "report.txt"
SINGLE = Configuration(StrategySpec("single-pass"), "m", None)
REFINE = Configuration(StrategySpec("self-refine", {"max_iters": 2}), "m", "small")
HEADER = RunHeader(
    versions={"refinelab": "0.1.0", "python": "3.11.7"},
    isolation="bwrap-uid",
    limits={"cpu_seconds": 4.0, "wall_factor": 3.0, "memory_bytes": 2**30},
)
# hidden-test truth of each attempt, and the critic's verdict on it, per problem
SINGLE_RUNS = {"p0": [True], "p1": [False], "p2": [True], "p3": [False]}
REFINE_RUNS = {
    "p0": [(True, "pass")],
    "p1": [(False, "refine"), (True, "pass")],
    "p2": [(True, "refine"), (False, "refine"), (False, "pass")],  # a regression error
    "p3": [(False, "pass")],  # a false acceptance
}


def problem(name: str) -> Problem:
    return Problem(id=name, prompt="", kind="function", visible_tests=(CallTest("f()", 1),),
                   hidden_tests=(CallTest("f()", 1), CallTest("f(2)", 2)), entry_point="f")  # fmt: skip


def result(ok: bool) -> RunResult:
    return RunResult((Outcome("pass"), Outcome("pass" if ok else "fail")), "bwrap-uid")


def attempt(index: int, verdict: str | None, tokens: int) -> Attempt:
    critic = None if verdict is None else CriticOutput("{}", verdict, "c", usage=Usage(20, 5), latency_seconds=1.0)  # type: ignore[arg-type]
    return Attempt(index, "draft" if index == 0 else "refine", f"def f(x=1): return x  # {index}", "r",
                   Usage(tokens, 10), 2.0, critic=critic, confidence=0.8)  # fmt: skip


def fill(store: Store) -> None:
    store.open_run("demo-1", {"name": "demo", "repeats": 1}, HEADER)
    store.add_configurations("demo-1", [c.stored() for c in (SINGLE, REFINE)])
    store.add_problems("demo-1", [RunProblem(f"jsonl/{p}", problem(p)) for p in SINGLE_RUNS])
    for name, truth in SINGLE_RUNS.items():
        trajectory = Trajectory(name, "single-pass", {}, (attempt(0, None, 100),), 0, "single_pass")
        store.save("demo-1", Unit(SINGLE.key, f"jsonl/{name}", 0), trajectory, [result(t) for t in truth])
    for name, steps in REFINE_RUNS.items():
        attempts = tuple(attempt(i, verdict, 100 + 50 * i) for i, (_, verdict) in enumerate(steps))
        recorded: dict[str, object] = {"max_iters": 2, "critique_last": False}  # as the paper's loop records it
        trajectory = Trajectory(name, "self-refine", recorded, attempts, len(steps) - 1, "accepted")
        store.save("demo-1", Unit(REFINE.key, f"jsonl/{name}", 0), trajectory, [result(ok) for ok, _ in steps])


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "store.sqlite") as opened:
        fill(opened)
        yield opened


def test_text_report_matches_the_snapshot(store: Store) -> None:
    text = render_text(build_report(store))
    if os.environ.get("REFINELAB_UPDATE_SNAPSHOTS"):
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert text == SNAPSHOT.read_text(encoding="utf-8")


def test_report_numbers_match_a_hand_count(store: Store) -> None:
    data = json.loads(report_json(build_report(store)))
    single, refine = data["configurations"]
    assert single["final"] == 2 / 4 and single["by_iteration"] == [0.5, None, None]
    # self-refine: iteration 0 = p0 P, p1 F, p2 P, p3 F; iteration 1: P P F F; iteration 2: P P F F
    assert refine["by_iteration"] == [0.5, 0.5, 0.5] and refine["final"] == 0.5
    assert refine["regression_errors"] == 1 and refine["refinements"] == (0 + 1 + 2 + 0) / 4
    # tokens per problem: actor 100+10 per draft, +50 per later attempt index, critic 25 per critique
    tokens = [110 + 25, (110 + 25) + (160 + 25), (110 + 25) + (160 + 25) + (210 + 25), 110 + 25]
    assert refine["use"]["tokens"] == sum(tokens) / 4
    assert refine["vs_single"]["tokens"] == pytest.approx(sum(tokens) / 4 / 110)
    assert refine["use"]["cost_usd"] is None  # no price: unknown, never $0
    assert refine["confusion"] == {"true_accept": 2, "false_accept": 2, "true_reject": 2, "false_reject": 1}
    assert refine["improvement"] == {"count": 1, "of": 2} and refine["regression"] == {"count": 1, "of": 2}
    # as if capped lower, the loop ends at the new cap without asking the critic about that attempt
    # (metrics.capped with judges_last=False: these trajectories never critiqued an attempt at their cap)
    assert refine["caps"] == [[0, 0.5, 110.0], [1, 0.5, (135 + 295 + 295 + 135) / 4]]
    (comparison,) = data["comparisons"]
    assert (comparison["only_baseline"], comparison["only_this"], comparison["p_value"]) == (1, 1, 1.0)


def test_html_puts_the_headline_first_then_figures_and_needs_no_network(store: Store) -> None:
    page = render_html(build_report(store))
    assert page.startswith("<!doctype html>")
    headline, figures, tables = (page.index(s) for s in ("rl-overview", "<figure", "Critic verdicts against"))
    assert headline < figures < tables  # the headline table comes first
    names = ["pass-by-iteration", "cost-vs-pass", "critic-confusion", "first-pass"]
    for name in names:
        assert f"download='{name}.svg' href='data:image/svg+xml;base64," in page
        assert f"download='{name}.png' href='data:image/png;base64," in page
    assert "<script" not in page and "src='http" not in page and 'src="http' not in page


def test_html_without_matplotlib_has_every_table_and_names_the_extra(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from refinelab.errors import MissingDependency
    from refinelab.report import render_figures

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    page = render_html(build_report(store))
    assert "Figures need matplotlib: pip install &#x27;refinelab[view]&#x27;" in page and "<img" not in page
    assert "Critic verdicts against the hidden tests" in page  # every table is there
    with pytest.raises(MissingDependency, match=r"refinelab\[view\]"):
        render_figures(build_report(store))


def test_csv_has_a_row_per_configuration(store: Store) -> None:
    lines = report_csv(build_report(store)).splitlines()
    assert len(lines) == 3 and lines[0].startswith("run_id,configuration,strategy")
    assert lines[2].split(",")[:3] == ["demo-1", "self-refine(max_iters=2) · m / small", "self-refine"]


def test_report_and_export_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        fill(store)
    html = tmp_path / "report.html"
    assert main(["report", "--store", str(path), "--html", str(html)], {}) == 0
    out = capsys.readouterr().out
    assert out == SNAPSHOT.read_text(encoding="utf-8") and html.read_text(encoding="utf-8").startswith("<!doctype")
    assert main(["report", "demo", "--store", str(path), "--baseline", "demo-1"], {}) == 0
    assert "Against baseline run demo-1" in capsys.readouterr().out
    assert main(["export", "--store", str(path), "--out", str(tmp_path / "a.jsonl")], {}) == 0
    rows = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()]
    required = {"run_id", "problem_id", "strategy", "params", "actor", "critic", "iteration", "origin", "code"}
    required |= {"critic_verdict", "visible_passed", "hidden_passed", "prompt_tokens", "completion_tokens"}
    assert len(rows) == 4 + 7 and required | {"cost_usd", "latency_s"} <= set(rows[0])
    assert main(["report", "--store", str(tmp_path / "missing.sqlite")], {}) == 2


def test_report_html_without_a_file_name_writes_report_html_here(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        fill(store)
    monkeypatch.chdir(tmp_path)
    assert main(["report", "--store", str(path), "--html"], {}) == 0
    assert (tmp_path / "report.html").read_text(encoding="utf-8").startswith("<!doctype")
    assert "refinelab: HTML report -> report.html" in capsys.readouterr().err
    assert main(["report", "demo-1", "--store", str(path), "--html"], {}) == 0  # a run id, then the flag alone


def test_the_headline_reads_change_from_the_first_attempt_in_text_and_html(store: Store) -> None:
    report = build_report(store)
    text, page = render_text(report), render_html(report)
    assert HEADLINE == "Pass@1 (%) on the hidden tests by iteration (change from the first attempt)"
    assert HEADLINE in text and f"{HEADLINE}," in page and "change from single pass" not in text + page
    header = text.split(HEADLINE)[1].splitlines()[2].split("  ")
    columns = [c.strip() for c in header if c.strip()]
    assert columns == ["configuration", "n", "first attempt", "after 1 it.", "after 2 it.", "final", "Regr.",
                       "Avg It.", "Cost × single"]  # fmt: skip
    html_head = overview_html(report.overview[0]).split("<thead>")[1].split("</thead>")[0]
    assert [c.split("</th>")[0] for c in html_head.split("<th>")[1:]] == columns
    assert "4 problems:" in text and "1 problems" not in text


def test_export_to_a_dash_writes_the_lines_to_standard_output_and_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        fill(store)
    monkeypatch.chdir(tmp_path)
    assert main(["export", "--store", str(path), "--out", str(tmp_path / "a.jsonl")], {}) == 0
    capsys.readouterr()
    assert main(["export", "--store", str(path), "--out", "-"], {}) == 0
    captured = capsys.readouterr()
    assert captured.out == (tmp_path / "a.jsonl").read_text(encoding="utf-8")
    assert captured.err.startswith("11 attempts of run ") and not (tmp_path / "-").exists()


def test_cost_multiple_of_an_unfinished_run_divides_by_single_pass_on_the_same_problems(tmp_path: Path) -> None:
    # interrupted: single pass finished all four problems (the later ones longer), self-refine only p0 and p1
    with Store(tmp_path / "store.sqlite") as opened:
        opened.open_run("demo-1", {"name": "demo", "repeats": 1}, HEADER)
        opened.add_configurations("demo-1", [c.stored() for c in (SINGLE, REFINE)])
        opened.add_problems("demo-1", [RunProblem(f"jsonl/{p}", problem(p)) for p in SINGLE_RUNS])
        for i, name in enumerate(SINGLE_RUNS):  # tokens 110, 410, 710, 1010
            trajectory = Trajectory(name, "single-pass", {}, (attempt(0, None, 100 + 300 * i),), 0, "single_pass")
            opened.save("demo-1", Unit(SINGLE.key, f"jsonl/{name}", 0), trajectory, [result(True)])
        for name in ("p0", "p1"):
            trajectory = Trajectory(name, "self-refine", {"max_iters": 2}, (attempt(0, "pass", 100),), 0, "accepted")
            opened.save("demo-1", Unit(REFINE.key, f"jsonl/{name}", 0), trajectory, [result(True)])
        data = json.loads(report_json(build_report(opened)))
    expected = (110 + 25) / ((110 + 410) / 2)  # self-refine's mean over single pass's mean on p0 and p1
    refine = data["configurations"][1]
    assert refine["vs_single"]["tokens"] == pytest.approx(expected)
    assert data["overview"][0]["rows"][1]["cost_multiple"]["value"] == pytest.approx(expected)


def _two_runs(path: Path) -> None:
    """demo-1 (self-refine to iteration 2) and demo-2 (single pass only, one problem)."""
    with Store(path) as opened:
        fill(opened)
        opened.open_run("demo-2", {"name": "demo", "repeats": 1}, HEADER)
        opened.add_configurations("demo-2", [SINGLE.stored()])
        opened.add_problems("demo-2", [RunProblem("jsonl/p0", problem("p0"))])
        trajectory = Trajectory("p0", "single-pass", {}, (attempt(0, None, 100),), 0, "single_pass")
        opened.save("demo-2", Unit(SINGLE.key, "jsonl/p0", 0), trajectory, [result(True)])


def test_report_of_two_runs_as_json_is_one_json_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _two_runs(tmp_path / "store.sqlite")
    assert main(["report", "demo-1", "demo-2", "--store", str(tmp_path / "store.sqlite"), "--format", "json"], {}) == 0
    reports = json.loads(capsys.readouterr().out)
    assert [r["run"]["id"] for r in reports] == ["demo-1", "demo-2"]


def test_report_of_two_runs_as_csv_has_one_header_over_both(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _two_runs(tmp_path / "store.sqlite")
    assert main(["report", "demo-2", "demo-1", "--store", str(tmp_path / "store.sqlite"), "--format", "csv"], {}) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["run_id"], r["strategy"]) for r in rows] == [
        ("demo-2", "single-pass"), ("demo-1", "single-pass"), ("demo-1", "self-refine")
    ]  # fmt: skip
    assert rows[0]["pass_it2"] == "" and rows[2]["pass_it2"] == "0.5" and rows[2]["pass_final"] == "0.5"
