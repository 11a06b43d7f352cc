"""Moving the server (another port, ``localhost`` for ``127.0.0.1``) stops a run with work left and says
so; told that the same model moved (``--endpoint-moved``), the run resumes and re-sends nothing, and
records both addresses; a ``deployment`` tag is the explicit way to keep two deployments of one model name
apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.experiment import ExperimentSpec
from refinelab.store import Store
from refinelab.testing import FakeOpenAI, serve
from tests.experiment.fakes import reply, write_benchmark

STRATEGIES = ["single-pass", "self-refine(max_iters=2)", "sampling(n=2)"]


def run(url: str, data: Path, store: Path, *extra: str) -> int:
    args = ["run", "--benchmark", "jsonl", "--data", str(data), "--model", "fake", "--base-url", url]
    for strategy in STRATEGIES:
        args += ["--strategy", strategy]
    return main([*args, "--store", str(store), "--concurrency", "1", "--quiet", *extra], {})


def bodies(server: FakeOpenAI) -> list[str]:
    return [json.dumps(body, sort_keys=True) for body in server.answered()]


def test_a_run_stopped_halfway_resumes_on_another_port_and_host_name_with_no_repeated_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, store = write_benchmark(tmp_path / "problems.jsonl", n=6), tmp_path / "s.sqlite"
    with serve(reply) as first:
        first.faults.extend(["ok"] * 12 + ["401"] * 100)  # the server refuses everything after 12 answers
        assert run(first.base_url, data, store) == 2  # stopped by the error, halfway
        answered_first = bodies(first)
    assert "refused the API key" in capsys.readouterr().err and len(answered_first) == 12
    with Store(store) as opened:
        (stopped,) = opened.runs()
        assert stopped.status == "failed" and 0 < len(opened.trajectories(stopped.id)) < 3 * 6
    with serve(reply) as second:
        port = second.server_address[1]
        assert run(f"http://localhost:{port}/v1", data, store) == 2  # it says the server moved, asks nothing
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "actor and critic fake was served at http://127.0.0.1:" in err
        assert f"is now at http://localhost:{port}/v1 (--base-url)" in err and "--endpoint-moved" in err
        assert second.log == []
        assert run(f"http://localhost:{port}/v1", data, store, "--endpoint-moved") == 0
        answered_second = bodies(second)
    assert answered_second and not set(answered_first) & set(answered_second)  # nothing was asked twice
    with Store(store) as opened:
        (finished,) = opened.runs()  # the same run, resumed: no second run
        assert finished.id == stopped.id and finished.status == "complete"
        assert len(opened.trajectories(finished.id)) == 3 * 6
        assert finished.header.endpoints is not None
        actor = [use.endpoint.address for use in finished.header.endpoints if use.endpoint.role == "actor"]
        assert actor == [first.base_url, f"http://localhost:{port}/v1"]  # both servers, in order
    with serve(reply) as third:  # a third address: everything is stored, nothing is asked (and no question)
        assert run(third.base_url.replace("127.0.0.1", "localhost"), data, store) == 0
        assert third.log == []


def test_a_deployment_tag_separates_runs_and_responses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data, store = write_benchmark(tmp_path / "problems.jsonl", n=2), tmp_path / "s.sqlite"
    monkeypatch.chdir(tmp_path)
    with serve(reply) as server:
        assert run(server.base_url, data, store) == 0
        untagged = len(server.answered())
        (tmp_path / "refinelab.toml").write_text('[models.endpoints.fake]\ndeployment = "fp8-rev2"\n')
        assert run(server.base_url, data, store) == 0  # a new run: the tagged deployment is asked again
        assert len(server.answered()) == 2 * untagged
        assert run(server.base_url, data, store) == 0  # and resumes like any other
        assert len(server.answered()) == 2 * untagged
    with Store(store) as opened:
        untagged_run, tagged_run = opened.runs()
        assert untagged_run.id != tagged_run.id
        assert ExperimentSpec.from_json(tagged_run.spec).models.endpoints["fake"].deployment == "fp8-rev2"
