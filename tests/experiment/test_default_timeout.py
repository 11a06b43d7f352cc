"""Without a timeout, tests get the CPU time the benchmark's own grader allows: LiveCodeBench's 6 s,
4 s elsewhere; a timeout the user gives always wins."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.experiment import load_spec
from refinelab.problems import BENCHMARKS

SPEC = """\
actors = ["vllm:big"]
strategies = ["single-pass"]
{benchmarks}
{sandbox}
"""


def spec_timeout(tmp_path: Path, names: list[str], sandbox: str = "") -> float:
    tables = "".join(f'[[benchmarks]]\nname = "{name}"\ndata = "x.jsonl"\n' for name in names)
    path = tmp_path / "spec.toml"
    path.write_text(SPEC.format(benchmarks=tables, sandbox=sandbox), encoding="utf-8")
    return load_spec(path).sandbox.timeout


def test_each_benchmark_has_its_graders_time() -> None:
    assert BENCHMARKS["livecodebench"].cpu_seconds == 6.0
    assert {b.cpu_seconds for name, b in BENCHMARKS.items() if name != "livecodebench"} == {4.0}


def test_a_spec_without_a_timeout_takes_its_benchmarks_longest(tmp_path: Path) -> None:
    assert spec_timeout(tmp_path, ["livecodebench"]) == 6.0
    assert spec_timeout(tmp_path, ["jsonl"]) == 4.0
    assert spec_timeout(tmp_path, ["jsonl", "livecodebench"]) == 6.0
    assert spec_timeout(tmp_path, ["livecodebench"], "[sandbox]\ntimeout = 2.5") == 2.5


@pytest.mark.parametrize(("options", "seconds"), [([], "6"), (["--timeout", "3"], "3")])
def test_check_uses_livecodebench_graders_time_unless_told(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], seconds: str
) -> None:
    source = shared_data / "benchmarks" / "livecodebench-v5-public-tests.jsonl.gz"
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        record = next(json.loads(line) for line in handle if json.loads(line)["question_id"] == "abc357_a")
    data = tmp_path / "one.jsonl"  # one real problem, read from the shared file into this test's folder
    data.write_text(json.dumps(record) + "\n", encoding="utf-8")
    args = ["check", "--self-test", "--benchmark", "livecodebench", "--data", str(data), "--workers", "1"]
    assert main([*args, *options]) == 0
    assert f", {seconds} CPU s per test)" in capsys.readouterr().out


def test_check_on_other_benchmarks_keeps_4_seconds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    problem = {"id": "echo", "kind": "stdio", "prompt": "Echo.", "hidden_tests": [{"stdin": "a\n", "stdout": "a\n"}]}
    data = tmp_path / "problems.jsonl"
    data.write_text(json.dumps(problem) + "\n", encoding="utf-8")
    assert main(["check", "--self-test", "--benchmark", "jsonl", "--data", str(data), "--workers", "1"]) == 0
    assert ", 4 CPU s per test)" in capsys.readouterr().out
