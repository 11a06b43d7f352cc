"""``exec-refine`` end to end through ``refinelab run`` on HumanEval problems without visible tests, against
a local OpenAI-compatible server answering with real programs real models wrote and the real tests
gpt-3.5 wrote (tests/experiment/real_server.py): no request refines blind, the tests the actor wrote are
in the trajectories, and the report says on how many problems they were written."""

from __future__ import annotations

import functools
import json
import sqlite3
import tempfile
from pathlib import Path

import pytest

from refinelab.problems import load_humaneval
from tests.experiment.real_server import Outcome, real_answers, run_through_server

pytestmark = pytest.mark.slow

BLIND = ["HumanEval/38", "HumanEval/41", "HumanEval/50", "HumanEval/105", "HumanEval/130", "HumanEval/160"]
"""Prompts with no example the reader can take: no visible tests (HumanEval/83 too, but its wrong programs
run for minutes)."""
SEEN = ["HumanEval/51", "HumanEval/52"]
STRATEGIES = ["exec-refine(max_iters=3)", "exec-refine(max_iters=3, when_no_tests=stop)"]


@functools.cache
def run_once(shared: Path) -> tuple[Outcome, list[tuple[str, str, int]]]:
    """One run shared by the tests below, and the stored test-writing calls (config, problem, tests)."""
    answers = real_answers(shared, BLIND + SEEN, width=1)
    with tempfile.TemporaryDirectory() as folder:
        outcome = run_through_server(answers, STRATEGIES, Path(folder))
        with sqlite3.connect(Path(folder) / "store.sqlite") as db:
            rows = db.execute("SELECT c.params, g.problem, g.tests FROM test_generations g JOIN configs c "
                              "ON c.run_id = g.run_id AND c.config = g.config").fetchall()  # fmt: skip
    return outcome, [(str(p), str(problem), len(json.loads(t))) for p, problem, t in rows]


@pytest.fixture
def outcome(shared_data: Path) -> tuple[Outcome, list[tuple[str, str, int]]]:
    return run_once(shared_data)


def test_the_chosen_problems_have_no_visible_tests_and_the_others_do() -> None:
    found = {p.id: len(p.visible_tests) for p in load_humaneval()}
    assert [found[p] for p in BLIND] == [0] * len(BLIND)
    assert all(found[p] for p in SEEN)


def test_no_request_refines_blind(outcome: tuple[Outcome, list[tuple[str, str, int]]]) -> None:
    run, _ = outcome
    texts = [str(m["content"]) for body in run.requests for m in body["messages"]]  # type: ignore[attr-defined]
    assert not [t for t in texts if "no visible tests" in t.lower()]
    assert run.server_calls["refine"] > 0  # it did refine, against the tests the actor wrote


def test_tests_are_written_only_where_there_are_no_visible_tests_and_are_recorded(
    outcome: tuple[Outcome, list[tuple[str, str, int]]],
) -> None:
    run, generations = outcome
    assert run.server_calls["tests"] == len(BLIND)  # once per blind problem, by the generating configuration
    assert sorted(problem for _, problem, _ in generations) == sorted(f"humaneval/{p}" for p in BLIND)
    assert all("when_no_tests" not in params for params, _, _ in generations)  # the default: generate
    rows = {str(row["label"]): row for row in run.report["configurations"]}
    written = sum(1 for _, _, count in generations if count > 0)
    generate, stop = (rows[label] for label in sorted(rows, key=len))
    assert generate["tests_generated"] == {"count": written, "of": len(BLIND + SEEN)}
    assert stop["tests_generated"] == {"count": 0, "of": len(BLIND + SEEN)}
