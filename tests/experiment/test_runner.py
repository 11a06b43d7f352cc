"""``refinelab run`` against a real OpenAI-compatible server on 127.0.0.1: every attempt scored on the
hidden tests, resumes that repeat nothing, infrastructure failures kept apart."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.experiment import BenchmarkChoice, ExperimentSpec, run_experiment
from refinelab.models import RetryPolicy
from refinelab.runtime import Settings
from refinelab.store import Store
from refinelab.strategies import StrategySpec
from refinelab.testing import FakeOpenAI, serve
from tests.experiment.fakes import N_PROBLEMS, reply, write_benchmark

STRATEGIES = ["single-pass", "self-refine(max_iters=2)", "exec-refine", "sampling(n=3)"]


def run_cli(server: FakeOpenAI, data: Path, store: Path, *extra: str) -> int:
    args = ["run", "--benchmark", "jsonl", "--data", str(data), "--model", "fake", "--base-url", server.base_url]
    for strategy in STRATEGIES:
        args += ["--strategy", strategy]
    return main([*args, "--store", str(store), "--quiet", *extra], {})


def exported(store: Path) -> list[dict[str, object]]:
    out = store.with_name("export.jsonl")
    assert main(["export", "--store", str(store), "--out", str(out)], {}) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # what may differ between two runs of the same spec: ids, timings, and which replies came from the cache
    varying = ("run_id", "latency_s", "critic_latency_s", "cached", "critic_cached")
    return [{k: v for k, v in row.items() if k not in varying} for row in rows]


def test_every_attempt_is_scored_and_a_second_run_repeats_nothing(tmp_path: Path) -> None:
    data = write_benchmark(tmp_path / "problems.jsonl")
    with serve(reply) as server:
        assert run_cli(server, data, tmp_path / "s.sqlite") == 0
        requests = len(server.log)
        assert run_cli(server, data, tmp_path / "s.sqlite") == 0
        assert len(server.log) == requests  # everything was stored: no call, no work
    rows = exported(tmp_path / "s.sqlite")
    assert {(r["strategy"], r["problem_id"]) for r in rows} == {
        (s.split("(")[0], f"jsonl/p{i}") for s in STRATEGIES for i in range(N_PROBLEMS)
    }
    assert all(r["hidden_total"] == 2 for r in rows)  # every attempt ran on the two hidden tests
    refine = [r for r in rows if r["strategy"] == "self-refine" and r["problem_id"] == "jsonl/p3"]
    # p3: a correct draft the critic rejects, "fixed" into a wrong program, which the critic then accepts
    assert [(r["iteration"], r["hidden_passed"], r["critic_verdict"]) for r in refine] == [
        (0, True, "refine"),
        (1, False, "pass"),
    ]


def test_repeats_are_new_draws_and_a_resume_redoes_none_of_them(tmp_path: Path) -> None:
    data = write_benchmark(tmp_path / "problems.jsonl", n=2)
    args = ["run", "--benchmark", "jsonl", "--data", str(data), "--model", "fake", "--strategy", "single-pass"]
    args += ["--repeats", "3", "--store", str(tmp_path / "s.sqlite"), "--quiet"]
    with serve(reply) as server:
        assert main([*args, "--base-url", server.base_url], {}) == 0
        assert len(server.log) == 2 * 3  # every repeat asks the server: not the first repeat's cached reply
        assert main([*args, "--base-url", server.base_url], {}) == 0
        assert len(server.log) == 2 * 3  # every repeat was stored: a resume asks nothing
    rows = exported(tmp_path / "s.sqlite")
    assert sorted((r["problem_id"], r["repeat"]) for r in rows) == [
        (f"jsonl/p{i}", r) for i in range(2) for r in range(3)
    ]


def test_identical_requests_from_different_strategies_are_made_once(tmp_path: Path) -> None:
    data = write_benchmark(tmp_path / "problems.jsonl")
    with serve(reply) as server:
        assert run_cli(server, data, tmp_path / "s.sqlite") == 0
        bodies = Counter(json.dumps(body, sort_keys=True) for body in server.answered() if body["temperature"] == 0)
    # single-pass, self-refine and exec-refine share their first draft: the cache and the in-flight
    # check make it one request per problem
    assert max(bodies.values()) == 1


def test_a_fault_injecting_server_changes_no_result(tmp_path: Path) -> None:
    data = write_benchmark(tmp_path / "problems.jsonl")
    with serve(reply) as clean:
        assert run_cli(clean, data, tmp_path / "clean.sqlite") == 0
    with serve(reply) as faulty:
        faulty.fault_rate = 0.2
        # its own response cache: the cache does not key on the address, so the clean run's would answer
        assert run_cli(faulty, data, tmp_path / "faulty.sqlite", "--cache", str(tmp_path / "faulty-cache.sqlite")) == 0
        faults = [action for _, action in faulty.log if action != "ok"]
    assert faults, "the server should have injected faults"
    assert exported(tmp_path / "faulty.sqlite") == exported(tmp_path / "clean.sqlite")
    with Store(tmp_path / "faulty.sqlite") as store:
        assert store.failures(store.run().id) == []  # every fault was retried away


def test_infrastructure_failures_are_kept_apart_and_retried_on_resume(tmp_path: Path) -> None:
    data = write_benchmark(tmp_path / "problems.jsonl", n=2)
    settings = Settings(
        store=tmp_path / "s.sqlite", cache=tmp_path / "c.sqlite", retry=RetryPolicy(attempts=2, base_seconds=0.01)
    )
    with serve(reply) as server:
        benchmarks, strategies = (BenchmarkChoice("jsonl", str(data)),), (StrategySpec("single-pass"),)
        spec = ExperimentSpec(benchmarks, strategies, ("fake",), base_url=server.base_url, concurrency=1)
        server.faults.extend(["500", "500"])  # the first problem's only call fails twice: retries exhausted
        summary = asyncio.run(run_experiment(spec, settings))
        run_id = summary.run_id  # the spec's, with the benchmark file's hash resolved into it
        assert (summary.progress.done, summary.progress.failed) == (1, 1)
        with Store(settings.store) as store:
            (failure,) = store.failures(run_id)
            assert failure.kind == "EndpointFailed" and not failure.resolved
            assert len(store.trajectories(run_id)) == 1  # the failure is not scored as a failed problem
            assert store.run(run_id).status == "incomplete"
        again = asyncio.run(run_experiment(spec, settings))
        assert again.run_id == run_id
        assert (again.progress.skipped, again.progress.done, again.progress.failed) == (1, 1, 0)
    with Store(settings.store) as store:
        assert [f.resolved for f in store.failures(run_id)] == [True]
        assert store.run(run_id).status == "complete"


def test_progress_adds_up_what_the_stored_trajectories_spent(tmp_path: Path) -> None:
    from refinelab.models import EndpointSettings, ModelsConfig, Price

    data = write_benchmark(tmp_path / "problems.jsonl", n=2)
    strategies = (StrategySpec("single-pass"), StrategySpec.parse("self-refine(max_iters=1)"))
    priced = ModelsConfig(endpoints={"priced": EndpointSettings(price=Price(input=1.0, output=2.0))})
    with serve(reply) as server:
        for actor, models in (("fake", ModelsConfig()), ("priced", priced)):
            settings = Settings(store=tmp_path / f"{actor}.sqlite", cache=tmp_path / f"{actor}-cache.sqlite")
            spec = ExperimentSpec((BenchmarkChoice("jsonl", str(data)),), strategies, (actor,), base_url=server.base_url,
                                  models=models)  # fmt: skip
            summary = asyncio.run(run_experiment(spec, settings))
            progress = summary.progress
            with Store(settings.store) as store:
                stored = store.trajectories(summary.run_id)
            assert progress.tokens == sum(t.tokens for t in stored) > 0
            if actor == "fake":
                assert progress.cost_usd is None  # no price: unknown, never $0
            else:
                assert progress.cost_usd is not None and progress.cost_usd > 0
                assert progress.cost_usd == pytest.approx(sum(t.cost_usd or 0.0 for t in stored))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give a spec file, or at least --benchmark, --strategy and --model"),
        (["spec.toml", "--benchmark", "jsonl"], "give a spec file or --benchmark"),
        (
            ["--benchmark", "jsonl", "--strategy", "exec-refine(max_iter=2)", "--model", "m"],
            "has no parameter 'max_iter'",
        ),
        (
            ["--benchmark", "jsonl", "--strategy", "single-pass", "--model", "m", "--param", "oops"],
            "expected KEY=VALUE",
        ),
    ],
)
def test_bad_run_commands_are_one_line_errors(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["run", *args, "--store", str(tmp_path / "s.sqlite")], {}) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and err[-1].startswith("refinelab: error:")
    assert not (tmp_path / "s.sqlite").exists()  # nothing half-written


def test_an_unreachable_server_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_benchmark(tmp_path / "problems.jsonl", n=1)
    args = ["run", "--benchmark", "jsonl", "--data", str(data), "--strategy", "single-pass", "--model", "m"]
    code = main([*args, "--base-url", "http://127.0.0.1:9/v1", "--store", str(tmp_path / "s.sqlite"), "--quiet"], {})
    assert code == 2 and "cannot reach http://127.0.0.1:9/v1" in capsys.readouterr().err


def test_a_benchmark_with_no_problems_is_a_user_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty, store = tmp_path / "empty.jsonl", tmp_path / "s.sqlite"
    empty.write_text("")
    args = ["run", "--strategy", "single-pass", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--quiet"]
    assert main([*args, "--benchmark", "jsonl", "--data", str(empty), "--store", str(store)], {}) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"refinelab: error: {empty}: no jsonl problems in the file"
    assert not store.exists()  # no run, no store: nothing half-written
    spec = tmp_path / "spec.toml"
    data = write_benchmark(tmp_path / "problems.jsonl", n=2)  # problems without a date: none is after 2024
    spec.write_text(
        f'actors = ["m"]\nbase_url = "http://127.0.0.1:9/v1"\nstrategies = ["single-pass"]\n'
        f'[[benchmarks]]\nname = "jsonl"\ndata = "{data}"\n'
        'after = "2024-06-01"\n'
    )
    assert main(["run", str(spec), "--store", str(store), "--quiet"], {}) == 2
    expected = "refinelab: error: jsonl: no problem is dated on or after 2024-06-01"
    assert capsys.readouterr().err.splitlines()[-1] == expected
    assert not store.exists()
