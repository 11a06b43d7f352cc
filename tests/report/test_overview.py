"""The headline table with intervals, per difficulty: every number counted by hand from the report
test's run, with two easy and two hard problems."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from refinelab.metrics import Interval
from refinelab.problems import Problem
from refinelab.report import build_report, report_json
from refinelab.store import Store
from tests.report.test_report import REFINE, SINGLE, fill, problem

DIFFICULTY = {"p0": "easy", "p1": "easy", "p2": "hard", "p3": "hard"}


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    def with_difficulty(name: str) -> Problem:
        return dataclasses.replace(problem(name), metadata={"difficulty": DIFFICULTY[name]})

    monkeypatch.setattr("tests.report.test_report.problem", with_difficulty)
    with Store(tmp_path / "store.sqlite") as opened:
        fill(opened)
        yield opened


def test_tables_for_all_problems_then_each_difficulty(store: Store) -> None:
    tables = build_report(store).overview
    assert [(t.kind, t.name, t.problems) for t in tables] == [
        ("all", "all problems", 4),
        ("difficulty", "jsonl · easy", 2),
        ("difficulty", "jsonl · hard", 2),
    ]
    assert [r.config for r in tables[0].rows] == [SINGLE.key, REFINE.key]


def test_the_all_problems_table_repeats_the_reports_numbers(store: Store) -> None:
    report = build_report(store)
    for row, headline in zip(report.rows, report.overview[0].rows):
        assert tuple(i.value for i in headline.iterations) == tuple(v for v in row.passes.by_iteration if v is not None)
        assert headline.final.value == row.passes.final
        assert headline.regression_errors.value == row.refinement.regression_errors
        assert headline.refinements is not None and headline.refinements.value == row.refinement.refinements
        assert row.vs_single is not None and headline.cost_multiple is not None
        assert headline.cost_multiple.value == pytest.approx(row.vs_single.tokens) and headline.cost_unit == "tokens"


def test_easy_problems_counted_by_hand(store: Store) -> None:
    # self-refine on p0 (right at once) and p1 (wrong, then fixed); resampling two problems gives
    # {p0,p0}, {p1,p1} and the mixed draw, so every interval runs between the two problems' own values
    single, refine = build_report(store).overview[1].rows
    assert refine.iterations == (Interval(0.5, 0.0, 1.0), Interval(1.0, 1.0, 1.0), Interval(1.0, 1.0, 1.0))
    assert refine.changes == (Interval(0.5, 0.0, 1.0), Interval(0.5, 0.0, 1.0))
    assert refine.regression_errors == Interval(0.0, 0.0, 0.0)
    assert refine.refinements == Interval(0.5, 0.0, 1.0)
    # tokens: self-refine p0 135, p1 135 + 185; single pass 110 each
    multiple = refine.cost_multiple
    assert multiple is not None
    assert (multiple.value, multiple.low, multiple.high) == pytest.approx((227.5 / 110, 135 / 110, 320 / 110))
    assert single.iterations == (Interval(0.5, 0.0, 1.0),) and single.changes == ()
    assert single.cost_multiple == Interval(1.0, 1.0, 1.0) and not single.sampled


def test_hard_problems_counted_by_hand(store: Store) -> None:
    # p2: right, rejected, broken, rejected, still broken (one regression error, two refinements); p3: wrong, accepted
    _, refine = build_report(store).overview[2].rows
    assert refine.iterations[0] == Interval(0.5, 0.0, 1.0) and refine.iterations[1] == Interval(0.0, 0.0, 0.0)
    assert refine.changes[0] == Interval(-0.5, -1.0, 0.0)
    assert refine.regression_errors == Interval(1.0, 0.0, 2.0) and refine.refinements == Interval(1.0, 0.0, 2.0)
    assert refine.final == Interval(0.0, 0.0, 0.0)


def test_the_json_report_carries_the_tables(store: Store) -> None:
    data = json.loads(report_json(build_report(store)))
    easy = data["overview"][1]
    assert easy["name"] == "jsonl · easy" and easy["rows"][1]["iterations"][1] == {
        "value": 1.0,
        "low": 1.0,
        "high": 1.0,
    }
