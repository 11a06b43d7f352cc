"""``refinelab.toml`` is found like ruff's and pytest's config: ``--config``, ``$REFINELAB_CONFIG``, else
the nearest one from the current directory up; ``ping`` and ``run`` both use it."""

from __future__ import annotations

from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.errors import UserError
from refinelab.runtime import find_config
from refinelab.store import Store
from refinelab.testing import FakeOpenAI, serve
from tests.experiment.fakes import reply, write_benchmark


def config(folder: Path, server: FakeOpenAI, alias: str = "small", target: str = "vllm:q3b") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "refinelab.toml"
    path.write_text(
        f'[models.aliases]\n{alias} = "{target}"\n\n[models.endpoints."{target}"]\nbase_url = "{server.base_url}"\n'
    )
    return path


def test_the_lookup_order(tmp_path: Path) -> None:
    deep = tmp_path / "project" / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_config(deep, {}) is None
    (tmp_path / "refinelab.toml").write_text("")
    assert find_config(deep, {}) == tmp_path / "refinelab.toml"  # a parent's
    (tmp_path / "project" / "refinelab.toml").write_text("")
    assert find_config(deep, {}) == tmp_path / "project" / "refinelab.toml"  # the nearest wins
    named = tmp_path / "elsewhere.toml"
    named.write_text("")
    assert find_config(deep, {"REFINELAB_CONFIG": str(named)}) == named  # the environment over the lookup
    assert find_config(deep, {"REFINELAB_CONFIG": str(named)}, Path("given.toml")) == Path("given.toml")
    with pytest.raises(UserError, match=r"\$REFINELAB_CONFIG names .*missing.toml, which is not a file"):
        find_config(deep, {"REFINELAB_CONFIG": str(tmp_path / "missing.toml")})


def test_ping_finds_the_config_in_a_parent_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve() as server:
        config(tmp_path, server)
        (tmp_path / "a" / "b").mkdir(parents=True)
        monkeypatch.chdir(tmp_path / "a" / "b")
        assert main(["ping", "small"], environ={}) == 0
        assert server.answered()[0]["model"] == "q3b"
    assert "vllm:q3b at http://127.0.0.1" in capsys.readouterr().out


def test_an_explicit_config_wins_over_the_nearest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serve() as near, serve() as chosen:
        config(tmp_path, near)
        explicit = config(tmp_path / "other", chosen)
        monkeypatch.chdir(tmp_path)
        assert main(["ping", "small", "--config", str(explicit)], environ={}) == 0
        assert main(["ping", "small"], environ={"REFINELAB_CONFIG": str(explicit)}) == 0
        assert (len(near.log), len(chosen.log)) == (0, 2)


def test_run_reads_the_project_config_and_the_spec_table_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data, store = write_benchmark(tmp_path / "problems.jsonl", n=2), tmp_path / "s.sqlite"
    with serve(reply) as project_server, serve(reply) as spec_server:
        config(tmp_path, project_server, alias="coder", target="vllm:fake")
        monkeypatch.chdir(tmp_path)
        args = ["run", "--benchmark", "jsonl", "--data", str(data), "--strategy", "single-pass", "--model", "coder"]
        assert main([*args, "--store", str(store), "--quiet"], {}) == 0
        assert len(project_server.answered()) == 2 and project_server.answered()[0]["model"] == "fake"
        spec = tmp_path / "spec.toml"
        spec.write_text(
            f'actors = ["coder"]\nstrategies = ["sampling(n=1)"]\n\n[[benchmarks]]\nname = "jsonl"\n'
            f'data = "problems.jsonl"\n\n[models.endpoints."vllm:fake"]\nbase_url = "{spec_server.base_url}"\n'
        )
        assert main(["run", str(spec), "--store", str(store), "--quiet"], {}) == 0  # alias from the project
        assert len(spec_server.answered()) == 2 and len(project_server.answered()) == 2  # address from the spec
        elsewhere = tmp_path / "sub"
        elsewhere.mkdir()
        monkeypatch.chdir(elsewhere)
        bad = elsewhere / "bad.toml"
        bad.write_text("[models.aliases]\ncoder = 3\n")
        assert main(["run", str(spec), "--store", str(store), "--config", str(bad)], {}) == 2
    assert "bad.toml:1: field 'models.aliases': must map names to model strings" in capsys.readouterr().err
    with Store(store) as opened:
        assert [r.status for r in opened.runs()] == ["complete", "complete"]


def test_the_report_says_what_an_alias_stood_for_and_its_deployment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs of one spec whose alias named two models (or two deployments) are two runs; the report's
    header says which model each served, as the run recorded it (it named only the alias)."""
    data, store = write_benchmark(tmp_path / "problems.jsonl", n=1), tmp_path / "s.sqlite"
    args = ["run", "--benchmark", "jsonl", "--data", str(data), "--strategy", "single-pass", "--model", "coder"]
    monkeypatch.chdir(tmp_path)
    with serve(reply) as server:
        path = config(tmp_path, server, alias="coder", target="vllm:fake")
        path.write_text(path.read_text() + 'deployment = "fp8"\n')
        assert main([*args, "--store", str(store), "--quiet"], {}) == 0
        capsys.readouterr()
        assert main(["report", "--store", str(store)], {}) == 0
    header = capsys.readouterr().out.splitlines()[:5]
    assert f"  actor coder = vllm:fake (deployment fp8): {server.base_url} (its [models.endpoints] entry)" in header
