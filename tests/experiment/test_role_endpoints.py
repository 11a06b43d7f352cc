"""Each model role goes to its own server, the most specific setting winning, and the run says which.

Two real servers on 127.0.0.1: the actor's, named by the spec's top-level ``base_url``, and a smaller
critic's, named by the critic's own ``[models.endpoints]`` entry (the README's shape). Every critic call
goes to the critic's server; the run records and reports where each role was served; and a run whose
critic moved stops and offers the choice (``--endpoint-moved``, ``--fresh``) instead of reusing another
server's answers.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.experiment import ExperimentSpec, RunOptions, load_spec, run_endpoints
from refinelab.models import EndpointSetting, ModelsConfig, choose_endpoint
from refinelab.report._text import endpoint_lines
from refinelab.store import EndpointUse, Store
from refinelab.testing import FakeOpenAI, serve
from tests.experiment.fakes import reply, write_benchmark

SPEC = """\
name = "two-servers"
actors = ["big"]
critics = ["same", "small"]
strategies = ["self-refine(max_iters=2)"]
base_url = "{actor}"

[[benchmarks]]
name = "jsonl"
data = "problems.jsonl"
{critic}"""
CRITIC_ENTRY = '\n[models.endpoints.small]\nbase_url = "{url}"\n'


def write_spec(tmp_path: Path, actor: FakeOpenAI, critic: FakeOpenAI | None) -> Path:
    """The README's shape: the actor's server at the top, the small critic's in its own entry (or none)."""
    path = tmp_path / "spec.toml"
    entry = CRITIC_ENTRY.format(url=critic.base_url) if critic is not None else ""
    path.write_text(SPEC.format(actor=actor.base_url, critic=entry), encoding="utf-8")
    return path


def run(spec: Path, store: Path, *extra: str) -> int:
    return main(["run", str(spec), "--store", str(store), "--quiet", "--concurrency", "1", *extra], {})


def models(server: FakeOpenAI) -> list[str]:
    return [str(body["model"]) for body in server.answered()]


def test_a_critics_own_entry_beats_the_specs_top_level_base_url(tmp_path: Path) -> None:
    write_benchmark(tmp_path / "problems.jsonl", n=4)
    store = tmp_path / "s.sqlite"
    with serve(reply) as actor, serve(reply) as critic:
        assert run(write_spec(tmp_path, actor, critic), store) == 0
        assert set(models(actor)) == {"big"}  # the actor, and the actor critiquing itself
        assert models(critic) and set(models(critic)) == {"small"}  # every call of the small critic, here
    with Store(store) as opened:
        (stored,) = opened.runs()
        assert stored.header.endpoints is not None
        found = {
            (u.endpoint.role, u.endpoint.model): (u.endpoint.address, u.endpoint.chosen_by)
            for u in stored.header.endpoints
        }
    assert found == {
        ("actor", "big"): (actor.base_url, "base_url in the spec"),
        ("critic", "big"): (actor.base_url, "as the actor: base_url in the spec"),
        ("critic", "small"): (critic.base_url, "its [models.endpoints] entry"),
    }


def test_the_report_names_the_endpoint_each_role_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_benchmark(tmp_path / "problems.jsonl", n=2)
    store = tmp_path / "s.sqlite"
    with serve(reply) as actor, serve(reply) as critic:
        assert run(write_spec(tmp_path, actor, critic), store) == 0
    capsys.readouterr()
    assert main(["report", "--store", str(store)], {}) == 0
    text = capsys.readouterr().out
    assert f"actor big: {actor.base_url} (base_url in the spec)" in text
    assert f"critic small: {critic.base_url} (its [models.endpoints] entry)" in text
    assert main(["report", "--store", str(store), "--format", "json"], {}) == 0
    endpoints = json.loads(capsys.readouterr().out)["run"]["endpoints"]
    assert {(e["role"], e["model"], e["urls"][0]) for e in endpoints} == {
        ("actor", "big", actor.base_url),
        ("critic", "big", actor.base_url),
        ("critic", "small", critic.base_url),
    }


def stopped_halfway(tmp_path: Path, actor: FakeOpenAI) -> tuple[Path, str]:
    """A run whose small critic had no entry (so it went to the actor's server, by the spec's base_url),
    stopped halfway by the server refusing every request after some answers."""
    write_benchmark(tmp_path / "problems.jsonl", n=6)
    store = tmp_path / "s.sqlite"
    actor.faults.extend(["ok"] * 14 + ["401"] * 200)
    assert run(write_spec(tmp_path, actor, None), store) == 2
    actor.faults.clear()
    with Store(store) as opened:
        (stopped,) = opened.runs()
        assert stopped.status == "failed" and 0 < len(opened.trajectories(stopped.id)) < 3 * 6
    return store, stopped.id


def test_a_critic_that_moved_stops_the_run_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serve(reply) as actor, serve(reply) as critic:
        store, run_id = stopped_halfway(tmp_path, actor)
        answered = len(actor.log)
        capsys.readouterr()
        assert run(write_spec(tmp_path, actor, critic), store) == 2  # the critic's own entry now names its server
        err = capsys.readouterr().err
        assert critic.log == [] and len(actor.log) == answered  # nothing was asked
    assert err.count("\n") == 1 and f"run {run_id}: critic small was served at {actor.base_url} " in err
    assert f"is now at {critic.base_url} (its [models.endpoints] entry)" in err
    assert "--endpoint-moved" in err and "--fresh" in err
    with Store(store) as opened:
        assert [r.id for r in opened.runs()] == [run_id]  # nothing written


def test_fresh_starts_a_new_run_whose_moved_critic_asks_its_own_server(tmp_path: Path) -> None:
    with serve(reply) as actor, serve(reply) as critic:
        store, run_id = stopped_halfway(tmp_path, actor)
        spec = write_spec(tmp_path, actor, critic)
        assert run(spec, store, "--fresh") == 0
        assert set(models(critic)) == {"small"}
        assert run(spec, store) == 0  # the fresh run is the one a plain rerun finds: complete, nothing asked
        critic_calls = len(critic.log)
    with Store(store) as opened:
        first, fresh = opened.runs()
        assert (first.id, fresh.id) == (run_id, f"{run_id}.2") and fresh.status == "complete"
        critics = {c.key: c.critic for c in opened.configurations(fresh.id)}
        details = [t for t in opened.trajectory_details(fresh.id) if critics[t.config] == "small"]
    critiques = [a.critic for t in details for a in t.attempts if a.critic is not None]
    # every critique of the small critic came from its own server, none from the cache the actor's wrote
    assert critiques and not any(c.cached for c in critiques) and len(critiques) == critic_calls


def test_endpoint_moved_resumes_the_run_and_records_both_servers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve(reply) as actor, serve(reply) as critic:
        store, run_id = stopped_halfway(tmp_path, actor)
        assert run(write_spec(tmp_path, actor, critic), store, "--endpoint-moved") == 0
    capsys.readouterr()
    assert main(["report", "--store", str(store)], {}) == 0
    said = re.search(r"critic small: (.*)", capsys.readouterr().out)
    assert said is not None and said.group(1).startswith(f"{actor.base_url} (base_url in the spec), from 20")
    assert said.group(1).endswith(f" {critic.base_url} (its [models.endpoints] entry)")
    with Store(store) as opened:
        (resumed,) = opened.runs()
        assert resumed.id == run_id and resumed.status == "complete"
        assert resumed.header.endpoints is not None
        small = [u for u in resumed.header.endpoints if u.endpoint.model == "small"]
    assert [u.endpoint.address for u in small] == [actor.base_url, critic.base_url]
    assert small[0].since < small[1].since


def test_a_run_stored_before_endpoints_were_recorded_is_judged_by_the_rule_then(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store from before migration m007: refinelab then sent every critic to ``critic_base_url`` or
    ``base_url``, over the critic's own entry; a resume now that would send it elsewhere says so."""
    with serve(reply) as actor, serve(reply) as critic:
        store, run_id = stopped_halfway(tmp_path, actor)
        with sqlite3.connect(store) as db:
            db.execute("UPDATE runs SET endpoints = NULL")
        capsys.readouterr()
        assert run(write_spec(tmp_path, actor, critic), store) == 2
        err = capsys.readouterr().err
        assert "critic small was served at" in err and "as refinelab then chose it" in err
        assert run(write_spec(tmp_path, actor, None), store) == 0  # by the rule then and now, nothing moved
    with Store(store) as opened:
        (finished,) = opened.runs()
        assert finished.id == run_id and finished.header.endpoints is not None  # recorded now


def endpoints_of(spec: ExperimentSpec, options: RunOptions | None = None) -> dict[tuple[str, str], tuple[str, str]]:
    return {(e.role, e.model): (e.address, e.chosen_by) for e in run_endpoints(spec, options or RunOptions())}


def spec_with(tmp_path: Path, top: str, tables: str = "") -> ExperimentSpec:
    write_benchmark(tmp_path / "problems.jsonl", n=1)
    path = tmp_path / "spec.toml"
    benchmark = '[[benchmarks]]\nname = "jsonl"\ndata = "problems.jsonl"\n'
    path.write_text(f'actors = ["big"]\nstrategies = ["self-refine"]\n{top}{benchmark}{tables}', encoding="utf-8")
    return load_spec(path)


def test_the_most_specific_setting_wins(tmp_path: Path) -> None:
    spec = spec_with(
        tmp_path,
        'critics = ["same", "small", "tiny"]\nbase_url = "http://a/v1"\ncritic_base_url = "http://c/v1"\n',
        '[models.endpoints.big]\nbase_url = "http://big/v1"\n[models.endpoints.small]\nbase_url = "http://s/v1"\n',
    )
    assert endpoints_of(spec) == {
        ("actor", "big"): ("http://big/v1", "its [models.endpoints] entry"),  # its entry over base_url
        ("critic", "big"): ("http://big/v1", "as the actor: its [models.endpoints] entry"),
        ("critic", "small"): ("http://s/v1", "its [models.endpoints] entry"),  # its entry over critic_base_url
        ("critic", "tiny"): ("http://c/v1", "critic_base_url in the spec"),
    }
    flags = RunOptions(base_url="http://flag/v1", critic_base_url="http://cflag/v1")
    assert endpoints_of(spec, flags) == {
        ("actor", "big"): ("http://flag/v1", "--base-url"),  # a flag over the entry
        ("critic", "big"): ("http://flag/v1", "as the actor: --base-url"),  # the actor itself goes with it
        ("critic", "small"): ("http://cflag/v1", "--critic-base-url"),
        ("critic", "tiny"): ("http://cflag/v1", "--critic-base-url"),
    }


def test_a_critic_without_an_entry_falls_back_to_the_actors_server(tmp_path: Path) -> None:
    spec = spec_with(tmp_path, 'critics = ["vllm:small"]\nbase_url = "http://a/v1"\n')
    assert endpoints_of(spec)["critic", "vllm:small"] == ("http://a/v1", "base_url in the spec")
    assert endpoints_of(spec, RunOptions(base_url="http://f/v1"))["critic", "vllm:small"] == (
        "http://f/v1",
        "--base-url",
    )
    bare = spec_with(tmp_path, 'critics = ["vllm:small"]\n')
    assert endpoints_of(bare)["critic", "vllm:small"] == ("http://localhost:8000/v1", "vllm's default")


def test_choose_endpoint_keeps_top_level_keys_off_a_local_model() -> None:
    spec = choose_endpoint("actor", "local:gemma-3-270m", ModelsConfig(), under=[EndpointSetting("http://a/v1", "x")])
    assert spec.urls == () and spec.address == "in this process"
    assert endpoint_lines([EndpointUse(endpoint=spec, since=0.0)]) == [
        "model endpoints:",
        "  actor local:gemma-3-270m: in this process",
    ]
