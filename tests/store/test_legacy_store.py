"""A store written by older code (tests/experiment/data, made by commit 321781f) still loads, and its
report shows the numbers it showed then."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from refinelab.experiment import ExperimentSpec
from refinelab.report import build_report
from refinelab.store import Store

DATA = Path(__file__).parent / "data"


@pytest.fixture
def legacy(tmp_path: Path) -> Iterator[Store]:
    path = tmp_path / "legacy.sqlite"
    db = sqlite3.connect(path)
    db.executescript((DATA / "legacy_store.sql").read_text(encoding="utf-8"))
    db.close()
    with Store(path) as store:
        yield store


def expected() -> dict[str, object]:
    return json.loads((DATA / "legacy_numbers.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def same(found: object, wanted: object, where: str = "") -> None:
    """Equal, floats to 1e-12 (sums may add in another order), with the path of the first difference;
    a record matches a dict when each of the dict's keys names an attribute (or property) with that value."""
    if isinstance(wanted, float) and isinstance(found, (int, float)):
        assert math.isclose(found, wanted, rel_tol=1e-12, abs_tol=1e-15), where
    elif isinstance(wanted, dict) and isinstance(found, dict):
        keyed = {str(k): v for k, v in found.items()}  # JSON keys are strings
        assert set(keyed) == set(wanted), where
        for key in wanted:
            same(keyed[key], wanted[key], f"{where}.{key}")
    elif isinstance(wanted, dict):  # a record: the value each field had, read by the name it had then
        for key in wanted:
            same(getattr(found, key), wanted[key], f"{where}.{key}")
    elif isinstance(wanted, list):
        assert isinstance(found, (list, tuple)) and len(found) == len(wanted), where
        for i, (f, w) in enumerate(zip(found, wanted)):
            same(f, w, f"{where}[{i}]")
    else:
        assert found == wanted, where


def test_an_old_store_reports_the_same_numbers(legacy: Store) -> None:
    report = build_report(legacy)
    numbers = expected()
    assert (report.problems, report.pending) == (numbers["problems"], numbers["pending"])
    added = {"tests_generated", "critic_covered"}  # since the numbers were recorded
    same([{k: v for k, v in row.to_json().items() if k not in added} for row in report.rows], numbers["rows"], "rows")
    assert all(row.tests_generated.count == 0 for row in report.rows)  # no strategy there wrote tests


def test_an_old_store_loads_every_trajectory_and_export_line(legacy: Store) -> None:
    run = legacy.run()
    numbers = expected()
    same(legacy.trajectories(run.id), numbers["trajectories"], "trajectories")
    rows = list(legacy.export_rows(run.id))
    added = {"config", "decisions", "trajectory_decisions", "generated_tests", "config_label", "refinement"}
    added |= {"isolation", "node"}  # each hidden result's, since
    thinking = {"reasoning_effort", "critic_reasoning_effort", "reasoning_tokens", "critic_reasoning_tokens"}
    thinking |= {"reasoning", "critic_reasoning", "not_sent", "critic_not_sent"}  # since m008_reasoning
    added |= thinking
    same([{k: v for k, v in row.items() if k not in added} for row in rows], numbers["export"], "export")
    for row in rows:  # nothing was thought, asked with an effort or left unsent before efforts existed
        judged = row["critic_verdict"] is not None or row["critic_raw_reply"] is not None
        assert {k: row[k] for k in thinking} == {
            "reasoning_effort": None, "critic_reasoning_effort": None, "reasoning_tokens": 0,
            "critic_reasoning_tokens": 0 if judged else None, "reasoning": None, "critic_reasoning": None,
            "not_sent": [], "critic_not_sent": [],
        }  # fmt: skip
    assert all(row["decisions"] == [] for row in rows)  # an old store has no selecting strategies' records
    first = [row["iteration"] == 0 for row in rows]
    assert [row["generated_tests"] for row in rows] == [[] if f else None for f in first]
    assert [row["trajectory_decisions"] for row in rows] == [[] if f else None for f in first]


def test_an_old_stores_spec_comes_back_parsed(legacy: Store) -> None:
    run = legacy.run()
    spec = ExperimentSpec.from_json(run.spec)
    assert spec.repeats == run.repeats == 2 and spec.actors == ("fake", "priced")
    assert [str(s) for s in spec.strategies][1] == "self-refine(max_iters=2)"
    assert spec.models.endpoints["priced"].price is not None
    assert spec.run_id == run.id  # read back whole: it hashes to the id it was stored under


RELEASED = {
    "m001_initial": "9d6b569c174f0395",
    "m002_model_calls_view": "5a3e0c50dd02c234",
    "m003_run_process": "562a20e5f296991e",
    "m004_problem_details": "041432c2f61312a6",
    "m005_generated_tests_and_decisions": "f3ac5a3416c36815",
}
"""Every released migration and a digest of its script: a store changes only by appending a new one."""


def test_released_migrations_are_never_edited_only_appended() -> None:
    import hashlib

    from refinelab.store import MIGRATIONS

    names = [name for name, _ in MIGRATIONS]
    assert names[: len(RELEASED)] == list(RELEASED), "released migrations keep their names and their order"
    assert names == sorted(names) and len(set(names)) == len(names)
    for name, script in MIGRATIONS[: len(RELEASED)]:
        assert hashlib.sha256(script.encode()).hexdigest()[:16] == RELEASED[name], f"{name} was edited"


def test_the_json_report_shows_the_spec_as_stored(legacy: Store) -> None:
    from refinelab.report import report_json

    stored = legacy._db.execute("SELECT spec FROM runs").fetchone()[0]
    assert json.loads(report_json(build_report(legacy)))["run"]["spec"] == json.loads(stored)
