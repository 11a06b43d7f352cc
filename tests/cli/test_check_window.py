"""``check --after/--before`` scores the samples of the window's tasks and leaves the rest out, saying so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from refinelab.cli import main


def _files(tmp_path: Path) -> tuple[Path, Path]:
    problems = tmp_path / "problems.jsonl"
    lines = []
    for task, day in (("old", "2023-05-01"), ("mid", "2024-03-01"), ("new", "2024-09-01")):
        record = {"id": task, "kind": "stdio", "prompt": "Echo.", "metadata": {"contest_date": day}}
        lines.append({**record, "hidden_tests": [{"stdin": "hi\n", "stdout": "hi\n"}]})
    problems.write_text("".join(json.dumps(line) + "\n" for line in lines))
    samples = tmp_path / "samples.jsonl"
    codes = [("old", "print(input())\n"), ("new", "print('no')\n"), ("new", "print(input())\n")]
    samples.write_text("".join(json.dumps({"task_id": t, "solution": c}) + "\n" for t, c in codes))
    return problems, samples


def test_samples_outside_the_window_are_left_out_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    problems, samples = _files(tmp_path)
    out = tmp_path / "out.jsonl"
    argv = ["check", str(samples), "--benchmark", "jsonl", "--data", str(problems), "--workers", "1"]
    assert main([*argv, "--after", "2024-01-01", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "2 samples on 1 of 2 problems" in printed.out and "pass@1: 0.5000" in printed.out
    assert "1 samples of 1 tasks outside the date window left out: old" in printed.err
    assert [(r["task_id"], r["sample_index"]) for r in map(json.loads, out.read_text().splitlines())] == [
        ("new", 0),
        ("new", 1),
    ]


def test_no_sample_in_the_window_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    problems, samples = _files(tmp_path)
    argv = ["check", str(samples), "--benchmark", "jsonl", "--data", str(problems)]
    assert main([*argv, "--after", "2024-01-01", "--before", "2024-06-01"]) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"refinelab: error: {samples}: no sample is of a task in the date window\n")
