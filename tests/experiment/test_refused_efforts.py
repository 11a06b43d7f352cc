"""A reasoning effort a model's family does not take (``--reasoning-effort none`` for gpt-5, ``xhigh`` or a
token budget for the o-series, a level its profile in ``[models]`` does not list) is one line and exit 2
before anything is written or asked: it used to be found by the first request, after the store was made and
the run recorded as ``failed`` with 0 of its units; ``solve`` left a response cache behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.testing import OPENAI_REASONING, serve
from tests.experiment.fakes import reply, write_benchmark

KEY = {"OPENAI_API_KEY": "sk-test"}
GPT5 = "openai:gpt-5 takes reasoning effort minimal, low, medium, high, not 'none' (model profile openai-gpt-5"
O_SERIES = "takes reasoning effort low, medium, high, not {!r} (model profile openai-o-series"


def spec_file(tmp_path: Path, body: str) -> Path:
    write_benchmark(tmp_path / "p.jsonl", 1)
    path = tmp_path / "spec.toml"
    path.write_text(f'{body}\n[[benchmarks]]\nname = "jsonl"\ndata = "p.jsonl"\n')
    return path


@pytest.mark.parametrize(
    ("model", "effort", "message"),
    [
        ("openai:gpt-5", "none", GPT5),
        ("openai:o4-mini", "xhigh", "openai:o4-mini " + O_SERIES.format("xhigh")),
        ("openai:o4-mini", "2048", "openai:o4-mini " + O_SERIES.format("2048")),
    ],
)
def test_a_run_from_flags_refuses_it_before_writing(
    tmp_path: Path, model: str, effort: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data, store = write_benchmark(tmp_path / "p.jsonl", 1), tmp_path / "out" / "store.sqlite"
    with serve(reply, mimic=OPENAI_REASONING) as server:
        argv = ["run", "--benchmark", "jsonl", "--data", str(data), "--strategy", "single-pass", "--model", model]
        argv += ["--base-url", server.base_url, "--reasoning-effort", effort, "--store", str(store), "--quiet"]
        assert main(argv, KEY) == 2
        assert server.log == []
    err = capsys.readouterr().err
    assert err.startswith(f"refinelab: error: {message}") and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_critics_effort_and_a_profile_named_in_models_are_checked_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve(reply, mimic=OPENAI_REASONING) as server:
        spec = spec_file(
            tmp_path,
            f'actors = ["openai:gpt-5"]\nbase_url = "{server.base_url}"\n'
            'strategies = ["self-refine(max_iters=1, critic=\\"vllm:my-o4\\", effort=\\"low\\", critic_effort=\\"64\\")"]\n'
            f'[models.endpoints."vllm:my-o4"]\nbase_url = "{server.base_url}"\nprofile = "openai-o-series"',
        )
        store = tmp_path / "out" / "store.sqlite"
        assert main(["run", str(spec), "--store", str(store), "--quiet"], KEY) == 2
        assert server.log == []
    assert capsys.readouterr().err.startswith("refinelab: error: vllm:my-o4 " + O_SERIES.format("64"))
    assert not (tmp_path / "out").exists()


def test_solve_refuses_it_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with serve(reply, mimic=OPENAI_REASONING) as server:
        argv = ["solve", "Write f(x).", "--test", "f(1) == 1", "--model", "openai:gpt-5", "--base-url", server.base_url]
        assert main([*argv, "--reasoning-effort", "none", "--store", "out/store.sqlite"], KEY) == 2
        assert server.log == []
    err = capsys.readouterr().err
    assert err.startswith(f"refinelab: error: {GPT5}") and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
