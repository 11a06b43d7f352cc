"""What ``refinelab run`` and friends say: numbers agree with their nouns."""

from __future__ import annotations

from pathlib import Path

import pytest

from refinelab._words import counted
from refinelab.cli import main
from refinelab.testing import serve
from tests.experiment.fakes import reply, write_benchmark


def test_counted_agrees_in_number() -> None:
    assert [counted(n, "configuration") for n in (0, 1, 2)] == [
        "0 configurations",
        "1 configuration",
        "2 configurations",
    ]
    assert counted(1, "trajectory", "trajectories") == "1 trajectory"
    assert counted(1234, "trajectory", "trajectories") == "1,234 trajectories"


@pytest.mark.parametrize(
    ("strategies", "said"),
    [(["single-pass"], "1 configuration ·"), (["single-pass", "exec-refine"], "2 configurations ·")],
)
def test_run_quiet_names_the_configurations_in_agreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], strategies: list[str], said: str
) -> None:
    data = write_benchmark(tmp_path / "problems.jsonl", n=1)
    args = ["run", "--benchmark", "jsonl", "--data", str(data), "--model", "fake", "--quiet"]
    for strategy in strategies:
        args += ["--strategy", strategy]
    with serve(reply) as server:
        assert main([*args, "--base-url", server.base_url, "--store", str(tmp_path / "s.sqlite")], {}) == 0
    captured = capsys.readouterr()
    assert said in captured.err and captured.out == ""
    assert "1 configurations" not in captured.err
