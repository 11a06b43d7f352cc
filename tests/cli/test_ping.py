from __future__ import annotations

from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.testing import serve


def test_ping_reports_the_reply_usage_and_unknown_cost(capsys: pytest.CaptureFixture[str]) -> None:
    with serve() as server:
        assert main(["ping", "vllm:coder", "--base-url", server.base_url], environ={}) == 0
    out = capsys.readouterr().out
    assert "vllm:coder at http://127.0.0.1" in out and "cost unknown" in out and "tokens 6 in" in out


def test_ping_an_unreachable_server_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ping", "vllm:coder", "--base-url", "http://127.0.0.1:9/v1"], environ={})
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "that the server is running there" in err


def test_ping_missing_key_and_unknown_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ping", "openai:gpt-4.1-mini"], environ={}) == 2
    assert "set OPENAI_API_KEY" in capsys.readouterr().err
    with serve() as server:
        server.faults.append("404")
        assert main(["ping", "vllm:nope", "--base-url", server.base_url], environ={}) == 2
    assert "does not know model 'nope'" in capsys.readouterr().err


def test_ping_with_a_config_alias(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serve() as server:
        config = tmp_path / "refinelab.toml"
        config.write_text(
            f'[models.aliases]\nsmall = "vllm:q3b"\n\n[models.endpoints."vllm:q3b"]\nbase_url = "{server.base_url}"\n'
            "concurrency = 4\nprice = { input = 1.0, output = 2.0 }\n"
        )
        assert main(["ping", "small", "--config", str(config)], environ={}) == 0
        assert server.answered()[0]["model"] == "q3b"
    assert "tokens 6 in / 7 out, cost $0.000020" in capsys.readouterr().out  # 6 x $1/M + 7 x $2/M


def test_bad_config_is_a_located_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "refinelab.toml"
    config.write_text('[models.endpoints."vllm:x"]\nbase_url = "http://h/v1"\nworkers = 3\n')
    assert main(["ping", "vllm:x", "--config", str(config)], environ={}) == 2
    assert "field 'models.endpoints.vllm:x.workers': unknown key" in capsys.readouterr().err
