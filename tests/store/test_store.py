"""The store: named append-only migrations, all-or-nothing trajectories, reading back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from refinelab.errors import UserError
from refinelab.experiment import Configuration
from refinelab.models import Usage
from refinelab.problems import CallTest, Problem
from refinelab.sandbox import RunResult
from refinelab.sandbox import TestOutcome as Outcome
from refinelab.store import MIGRATIONS, SCHEMA_VERSION, RunHeader, RunProblem, Store, Unit
from refinelab.strategies import Attempt, CriticOutput, StrategySpec, Trajectory

PROBLEM = Problem(
    id="p", prompt="f", kind="function", visible_tests=(), hidden_tests=(CallTest("f()", 1),), entry_point="f"
)
CONFIG = Configuration(StrategySpec("self-refine", {"max_iters": 1}), "a", "b")


def attempt(index: int, verdict: str = "refine") -> Attempt:
    critic = CriticOutput("{}", verdict, "looks wrong", usage=Usage(5, 2), cost_usd=0.25)  # type: ignore[arg-type]
    return Attempt(index, "draft" if index == 0 else "refine", "def f(): return 1", "r", Usage(10, 3), 0.5,
                   critic=critic, cost_usd=0.5)  # fmt: skip


def passed(ok: bool) -> RunResult:
    return RunResult((Outcome("pass" if ok else "fail"),), "bwrap-uid")


def trajectory(*attempts: Attempt) -> Trajectory:
    return Trajectory("p", "self-refine", {"max_iters": 1}, attempts, len(attempts) - 1, "accepted")


def open_run(store: Store) -> None:
    store.open_run("r1", {"name": "x", "repeats": 1}, RunHeader(versions={}, isolation="bwrap-uid", limits={}))
    store.add_configurations("r1", [CONFIG.stored()])
    store.add_problems("r1", [RunProblem("jsonl/p", PROBLEM)])


def test_a_new_store_applies_every_migration_once(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        assert store.applied == [name for name, _ in MIGRATIONS] and len(MIGRATIONS) == SCHEMA_VERSION
    with Store(path) as store:  # reopening applies nothing again
        assert store.applied == [name for name, _ in MIGRATIONS]


def test_a_store_from_a_newer_refinelab_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO migrations VALUES ('m999_future', 0)")
    with pytest.raises(UserError, match="newer refinelab \\(migration m999_future\\)"):
        Store(path)


def test_not_a_store_is_a_user_error(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    path.write_text("hello, not sqlite", encoding="utf-8")
    with pytest.raises(UserError, match="not a refinelab store"):
        Store(path)


def test_a_trajectory_is_stored_whole_and_read_back_scored(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        open_run(store)
        store.save(
            "r1",
            Unit(CONFIG.key, "jsonl/p", 0),
            trajectory(attempt(0), attempt(1, "pass")),
            [passed(True), passed(False)],
        )
        (scored,) = store.trajectories("r1")
        assert [a.hidden_passed for a in scored.attempts] == [True, False] and not scored.passed
        assert [a.critic_verdict for a in scored.attempts] == ["refine", "pass"]
        first = scored.attempts[0]
        assert (first.prompt_tokens, first.actor_prompt_tokens, first.completion_tokens) == (15, 10, 5)
        assert first.cost_usd == 0.75 and scored.label == "self-refine(max_iters=1) · a / b"
        calls = store._db.execute("SELECT role, COUNT(*) FROM model_calls GROUP BY role ORDER BY role").fetchall()
        assert calls == [("actor", 2), ("critic", 2)]
        assert store.done("r1") == {Unit(CONFIG.key, "jsonl/p", 0)}


def test_a_failed_write_leaves_nothing_half_written(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        open_run(store)
        broken = trajectory(attempt(0), attempt(0))  # the same attempt index twice: the second insert fails
        with pytest.raises(sqlite3.IntegrityError):
            store.save("r1", Unit(CONFIG.key, "jsonl/p", 0), broken, [passed(True), passed(True)])
        assert store.trajectories("r1") == [] and store.done("r1") == set()
        assert store._db.execute("SELECT COUNT(*) FROM attempts").fetchone() == (0,)


def test_failures_are_listed_and_marked_resolved_once_the_unit_is_stored(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        open_run(store)
        unit = Unit(CONFIG.key, "jsonl/p", 0)
        store.record_failure("r1", unit, "EndpointFailed", "a failed 6 times")
        assert [(f.kind, f.resolved) for f in store.failures("r1")] == [("EndpointFailed", False)]
        store.save("r1", unit, trajectory(attempt(0, "pass")), [passed(True)])
        assert [f.resolved for f in store.failures("r1")] == [True]


def test_runs_are_found_by_prefix(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        with pytest.raises(UserError, match="no runs stored yet"):
            store.run()
        open_run(store)
        assert store.run("r").id == "r1" and store.run().id == "r1"
        with pytest.raises(UserError, match="no single run 'zz'"):
            store.run("zz")
