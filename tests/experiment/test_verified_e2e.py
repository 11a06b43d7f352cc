"""``verified`` and ``codet`` end to end through ``refinelab run``, against a local OpenAI-compatible
server answering with real programs real models wrote for HumanEval and the real tests gpt-3.5 wrote
(tests/experiment/real_server.py). The full table is bench/verified_e2e.py."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import pytest

from tests.experiment.real_server import Outcome, real_answers, run_through_server

pytestmark = pytest.mark.slow

TASKS = [f"HumanEval/{i}" for i in range(25)]
STRATEGIES = ["single-pass", "sampling(n=4)", "codet(n=4, m=1)", "verified(k=4, m=1, consult_critic=false)"]


@functools.cache
def run_once(shared: Path) -> Outcome:
    """One run shared by the tests below (about 15 s)."""
    answers = real_answers(shared, TASKS, width=4)
    with tempfile.TemporaryDirectory() as folder:
        return run_through_server(answers, STRATEGIES, Path(folder))


@pytest.fixture
def outcome(shared_data: Path) -> Outcome:
    return run_once(shared_data)


def finals(outcome: Outcome) -> dict[str, float]:
    rows = outcome.report["configurations"]
    assert isinstance(rows, list)
    return {str(row["strategy"]): float(row["final"]) for row in rows}


def test_verified_and_codet_beat_single_pass_on_real_programs(outcome: Outcome) -> None:
    found = finals(outcome)
    assert found["verified"] > found["single-pass"]
    assert found["codet"] > found["single-pass"]


def test_verified_matches_sampling_at_equal_tokens(outcome: Outcome) -> None:
    compared = outcome.report["equal_tokens"]
    assert isinstance(compared, list)
    (entry,) = [e for e in compared if str(e["configuration"]).startswith("verified")]
    assert str(entry["sampler"]).startswith("sampling(n=4)")
    assert entry["problems"] == len(TASKS) and entry["refinement"] >= entry["sampling"]


def test_the_server_saw_exactly_the_calls_the_trajectories_record(outcome: Outcome) -> None:
    # samples of one request come in one request with ``n`` (each a call of its own in the store)
    sizes = [body.get("n", 1) for body in outcome.requests]
    assert sum(n for n in sizes if isinstance(n, int)) == sum(outcome.server_calls.values())
    assert 4 in sizes and outcome.answered < sum(outcome.server_calls.values())
    assert outcome.server_replies == outcome.stored_replies  # the same replies, each as often
    assert outcome.stored_calls["tests"] == outcome.server_calls["tests"] > 0
    assert outcome.stored_calls["actor"] == outcome.server_calls["draft"] + outcome.server_calls["refine"]
    assert outcome.stored_calls["critic"] == 0  # consult_critic=false: no critic call anywhere
    # codet and verified (m=1) ask the same test-writing request per problem: sent once, then cached
    assert outcome.server_calls["tests"] == len(TASKS)
