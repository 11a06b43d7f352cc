"""A model string no server can be found for (``foo:bar``, ``vllm:``, a bare name without a base URL) or one
whose API key is missing is one line and exit 2 before anything is written: it used to be found when the
first unit opened the model, after the store was made and the run recorded as ``failed``; ``solve`` left a
response cache behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from refinelab.cli import main
from tests.experiment.fakes import write_benchmark

ADVICE = (
    "use one of openai:NAME, vllm:NAME, ollama:NAME, llamacpp:NAME, or give --base-url for an OpenAI-compatible server"
)


def spec_file(tmp_path: Path, actors: str, critics: str = '["same"]') -> Path:
    write_benchmark(tmp_path / "p.jsonl", 1)
    path = tmp_path / "spec.toml"
    path.write_text(
        f'actors = {actors}\ncritics = {critics}\nstrategies = ["single-pass", "self-refine(max_iters=1)"]\n'
        '[[benchmarks]]\nname = "jsonl"\ndata = "p.jsonl"\n'
    )
    return path


@pytest.mark.parametrize(
    ("actors", "critics", "message"),
    [
        ('["foo:bar"]', '["same"]', f"model 'foo:bar': {ADVICE}"),
        ('["vllm:"]', '["same"]', f"model 'vllm:': {ADVICE}"),
        ('["vllm:m"]', '["my-critic"]', f"model 'my-critic': {ADVICE}"),
        ('["openai:gpt-4.1-mini"]', '["same"]', "model 'openai:gpt-4.1-mini' needs an API key: set OPENAI_API_KEY"),
    ],
)
def test_a_run_refuses_it_before_writing(
    tmp_path: Path, actors: str, critics: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "out" / "store.sqlite"
    assert main(["run", str(spec_file(tmp_path, actors, critics)), "--store", str(store), "--quiet"], {}) == 2
    assert capsys.readouterr().err == f"refinelab: error: {message}\n"
    assert not (tmp_path / "out").exists()


def test_a_run_from_flags_refuses_it_before_writing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_benchmark(tmp_path / "p.jsonl", 1)
    store = tmp_path / "out" / "store.sqlite"
    argv = ["run", "--benchmark", "jsonl", "--data", str(data), "--strategy", "single-pass", "--model", "vllm:"]
    assert main([*argv, "--store", str(store), "--quiet"], {}) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("route", ["flag", "environment", "file"])
def test_solve_refuses_it_before_writing(
    tmp_path: Path, route: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    flags, environ = {"flag": (["--model", "foo:bar"], {}), "environment": ([], {"REFINELAB_MODEL": "foo:bar"})}.get(
        route, ([], {})
    )
    if route == "file":
        (tmp_path / "refinelab.toml").write_text('model = "foo:bar"\n')
    assert main(["solve", "Write f(x).", "--test", "f(1) == 1", *flags], environ) == 2
    assert capsys.readouterr().err == f"refinelab: error: model 'foo:bar': {ADVICE}\n"
    assert not (tmp_path / ".refinelab").exists()


def test_a_complete_run_asks_nothing_so_it_is_not_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Run again once complete (to see its report), a run asks no model, so a key it would need is not asked
    for: as a complete run whose server moved is not stopped."""
    from refinelab.testing import serve
    from tests.experiment.fakes import reply

    spec, store = spec_file(tmp_path, '["openai:gpt-4.1-mini"]'), tmp_path / "out" / "store.sqlite"
    with serve(reply) as server:
        argv = ["run", str(spec), "--store", str(store), "--quiet"]
        assert main([*argv, "--base-url", server.base_url], {}) == 0
    capsys.readouterr()
    assert main(argv, {}) == 0  # no --base-url, no OPENAI_API_KEY: nothing is left to ask
    assert capsys.readouterr().err.count("refinelab: error") == 0
