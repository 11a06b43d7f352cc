"""Reading a run in full detail (what the viewer shows), from a new store and from one written before
``m004_problem_details``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.problems import Problem
from refinelab.sandbox import RunResult
from refinelab.sandbox import TestOutcome as Outcome
from refinelab.store import MIGRATIONS, RunHeader, RunProblem, Store, Unit
from tests.store.test_store import CONFIG, PROBLEM, attempt, open_run, trajectory

HARD = Problem(id="p", prompt="Print the answer.", kind="function", visible_tests=(),
               hidden_tests=PROBLEM.hidden_tests, entry_point="f", metadata={"difficulty": "hard", "platform": "x"})  # fmt: skip
RESULTS = [
    RunResult((Outcome("pass"),), "bwrap-uid"),
    RunResult((Outcome("fail", "wrong", expected="1", actual="2"),), "bwrap-uid"),
]


def save(store: Store) -> None:
    store.save("r1", Unit(CONFIG.key, "jsonl/p", 0), trajectory(attempt(0), attempt(1, "pass")), RESULTS)


def test_every_stored_detail_reads_back(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        store.open_run("r1", {"name": "x"}, RunHeader(versions={}, isolation="bwrap-uid", limits={}))
        store.add_configurations("r1", [CONFIG.stored()])
        store.add_problems("r1", [RunProblem("jsonl/p", HARD)])
        save(store)
        (problem,) = store.problem_details("r1")
        (detail,) = store.trajectory_details("r1")
        assert store.trajectory_details("r1", "jsonl/other") == []
        assert len(store.trajectory_details("r1", "jsonl/p")) == 1
    assert (problem.key, problem.benchmark, problem.difficulty, problem.prompt) == (
        "jsonl/p",
        "jsonl",
        "hard",
        "Print the answer.",
    )
    assert problem.metadata["platform"] == "x" and problem.hidden_tests == 1
    assert (detail.config, detail.problem, detail.repeat, detail.final, detail.stop_reason) == (
        CONFIG.key,
        "jsonl/p",
        0,
        1,
        "accepted",
    )
    first, second = detail.attempts
    assert first.code == "def f(): return 1" and first.response == "r" and first.prompt_tokens == 10
    assert first.hidden.passed and not second.hidden.passed and second.hidden.total == 1
    assert second.hidden.outcomes == (Outcome("fail", "wrong", expected="1", actual="2"),)
    assert first.critic is not None and first.critic.verdict == "refine" and first.critic.critique == "looks wrong"
    assert second.critic is not None and second.critic.verdict == "pass" and first.visible is None


def test_a_store_from_before_problem_details_still_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "old.sqlite"
    old = [m for m in MIGRATIONS if m[0] != "m004_problem_details"]
    monkeypatch.setattr("refinelab.store._store.MIGRATIONS", tuple(old))
    with Store(path) as store:
        store.open_run("r1", {"name": "x", "repeats": 1}, RunHeader(versions={}, isolation="bwrap-uid", limits={}))
        store.add_configurations("r1", [CONFIG.stored()])
        store._db.execute("INSERT INTO problems VALUES ('r1', 'jsonl/p', 'function', 0, 1)")
        save(store)
    monkeypatch.undo()
    with Store(path) as store:
        assert "m004_problem_details" in store.applied
        (problem,) = store.problem_details("r1")
        assert (problem.difficulty, problem.prompt, problem.metadata) == (None, None, {})
        assert len(store.trajectory_details("r1")[0].attempts) == 2
        open_run(store)  # resuming the old run fills in what it did not record
        assert store.problem_details("r1")[0].prompt == "f"
    out = tmp_path / "a.jsonl"
    assert main(["export", "--store", str(path), "--out", str(out)], {}) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["difficulty"] for r in rows] == [None, None]


def test_export_carries_what_the_viewer_shows(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.open_run("r1", {"name": "x"}, RunHeader(versions={}, isolation="bwrap-uid", limits={}))
        store.add_configurations("r1", [CONFIG.stored()])
        store.add_problems("r1", [RunProblem("jsonl/p", HARD)])
        save(store)
    out = tmp_path / "a.jsonl"
    assert main(["export", "--store", str(path), "--out", str(out)], {}) == 0
    first, second = (json.loads(line) for line in out.read_text(encoding="utf-8").splitlines())
    assert first["raw_reply"] == "r" and first["parse_error"] is None and first["cached"] is False
    assert first["critic_raw_reply"] == "{}" and first["critic_cached"] is False and first["difficulty"] == "hard"
    assert first["hidden_outcomes"] == [{"verdict": "pass"}]
    assert second["hidden_outcomes"] == [{"verdict": "fail", "message": "wrong", "expected": "1", "actual": "2"}]
    assert first["visible_outcomes"] is None
