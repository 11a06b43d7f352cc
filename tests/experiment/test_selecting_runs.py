"""``codet`` and ``verified`` through ``refinelab run`` against a real server on 127.0.0.1: generated
tests and decisions stored, test-writing tokens counted, accuracy measures in the report."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.records import Spend, Usage
from refinelab.store import Store
from refinelab.testing import serve
from tests.experiment.fakes import N_PROBLEMS, reply, write_benchmark

STRATEGIES = ["verified(k=2, m=1, max_rounds=1)", "codet(n=2, m=1)", "exec-refine(max_iters=1)", "sampling(n=2)"]


def with_tests(request: dict[str, object]) -> str:
    """The runner tests' model, which also writes tests: two right, one wrong (f(4) is never 0)."""
    messages = request["messages"]
    assert isinstance(messages, list)
    if "You write unit tests" not in str(messages[0]["content"]):
        return reply(request)
    i = int(str(messages[1]["content"]).split("Problem p")[1].split(":")[0])
    return f"```python\nassert f(2) == {2 + i}\nassert f(7) == {7 + i}\nassert f(4) == 0\n```"


def benchmark(path: Path) -> Path:
    write_benchmark(path)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for i, line in enumerate(lines):
        line["reference"] = f"def f(x):\n    return x + {i}\n"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_selecting_strategies_store_their_tests_and_decisions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, store = benchmark(tmp_path / "problems.jsonl"), tmp_path / "s.sqlite"
    args = ["run", "--benchmark", "jsonl", "--data", str(data), "--model", "fake", "--store", str(store)]
    with serve(with_tests) as server:
        command = [*args, "--base-url", server.base_url, "--quiet"]
        for strategy in STRATEGIES:
            command += ["--strategy", strategy]
        assert main(command, {}) == 0
    db = sqlite3.connect(store)
    generations = db.execute("SELECT c.strategy, g.reference_passed FROM test_generations g JOIN configs c "
                             "ON c.run_id = g.run_id AND c.config = g.config").fetchall()  # fmt: skip
    assert sorted({s for s, _ in generations}) == ["codet", "verified"]
    assert len(generations) == 2 * N_PROBLEMS  # one test-writing call per problem for each
    assert all(json.loads(verdicts) == [True, True, False] for _, verdicts in generations)
    kinds = {k for (k,) in db.execute("SELECT DISTINCT kind FROM decisions")}
    assert {"tests", "group", "choose"} <= kinds
    assert db.execute("SELECT COUNT(*) FROM model_calls WHERE role = 'tests'").fetchone()[0] == 2 * N_PROBLEMS
    with Store(store) as opened:
        trajectories = opened.trajectories(opened.run().id)
    calls = db.execute(
        "SELECT config, problem, repeat, prompt_tokens, completion_tokens, cost_usd FROM test_generations"
    )
    written = {(c, p, r): Spend(Usage(prompt, completion), cost) for c, p, r, prompt, completion, cost in calls}
    for trajectory in (t for t in trajectories if t.strategy in ("codet", "verified")):
        assert trajectory.test_tokens > 0 and trajectory.generated_tests == 3 and trajectory.generated_correct == 2
        assert trajectory.tokens == sum(a.tokens for a in trajectory.attempts) + trajectory.test_tokens
        test_spend = written[(trajectory.config, trajectory.problem, trajectory.repeat)]
        assert trajectory.test_spend == test_spend and test_spend.cost_usd is None  # no price: unknown, not $0
    assert main(["report", "--store", str(store)], {}) == 0
    text = capsys.readouterr().out
    assert "Generated tests (share the reference passes)" in text
    assert "66.7% (12/18)" in text  # 2 of 3 tests right, 6 problems
    assert "verified against iterative refinement" in text
    assert main(["report", "--store", str(store), "--format", "json"], {}) == 0
    section = json.loads(capsys.readouterr().out)["selection"]
    assert [row["test_accuracy"] for row in section["rows"]] == [{"count": 12, "of": 18}] * 2


def test_export_names_each_configuration_and_says_which_attempts_are_refinements(tmp_path: Path) -> None:
    """``config`` is a hash: ``config_label`` is the report's name for it; ``iteration`` is the attempt's index,
    which for sampling, codet and verified counts samples: ``refinement`` is the refinement round, null there."""
    data, store = benchmark(tmp_path / "problems.jsonl"), tmp_path / "s.sqlite"
    strategies = ["sampling(n=2)", "exec-refine(max_iters=1)", "verified(k=2, m=1, max_rounds=1)"]
    with serve(with_tests) as server:
        command = ["run", "--benchmark", "jsonl", "--data", str(data), "--model", "fake", "--store", str(store)]
        command += ["--base-url", server.base_url, "--quiet", *(f"--strategy={s}" for s in strategies)]
        assert main(command, {}) == 0
    assert main(["export", "--store", str(store), "--out", str(tmp_path / "a.jsonl")], {}) == 0
    rows = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    with Store(store) as opened:
        labels = {t.config: t.label for t in opened.trajectories(opened.run().id)}
    assert all(row["config_label"] == labels[row["config"]] for row in rows)
    assert {row["config_label"] for row in rows} == {
        f"{s} · fake" + (" / fake" if s.startswith("verified") else "") for s in strategies
    }
    for row in rows:
        sampled = not row["strategy"].startswith("exec-refine")
        assert row["refinement"] == (None if sampled else row["iteration"])
    assert {row["iteration"] for row in rows if row["strategy"] == "sampling"} == {0, 1}
    assert {row["refinement"] for row in rows if row["strategy"] == "exec-refine"} == {0}  # the drafts pass
