"""Reading a samples file in the shapes real tools write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from refinelab.check import read_samples
from refinelab.errors import InputError
from refinelab.problems import Problem, StdioTest

PROBLEMS = [
    Problem(question, "Echo the line.", "stdio", (), (StdioTest("hi\n", "hi\n"),))
    for question in ("abc357_a", "1873_A")
]


def test_livecodebench_records_as_its_runner_writes_them(tmp_path: Path) -> None:
    """LiveCodeBench writes one JSON list of ``{"question_id", "code_list": [programs], ...}``: each
    program is a whole-program sample of that question, numbered on across records."""
    records = [
        {"question_id": "abc357_a", "code_list": ["print(input())\n", "print('no')\n"], "graded_list": [True, False]},
        {"question_id": "1873_A", "code_list": ["print(1)\n"]},
        {"question_id": "abc357_a", "code_list": ["print(2)\n"]},
    ]
    path = tmp_path / "o1-mini.json"
    path.write_text(json.dumps(records, indent=4))
    samples = read_samples(path, PROBLEMS)
    found = [(s.task_id, s.index, s.program, s.given_as) for s in samples]
    assert found == [
        ("abc357_a", 0, "print(input())\n", "solution"),
        ("abc357_a", 1, "print('no')\n", "solution"),
        ("1873_A", 0, "print(1)\n", "solution"),
        ("abc357_a", 2, "print(2)\n", "solution"),
    ]


@pytest.mark.parametrize(
    ("record", "where"),
    [
        (
            {"question_id": "abc357_a", "code_list": "print(1)"},
            "field 'code_list': must be a list of programs, not a string",
        ),
        ({"question_id": "abc357_a", "code_list": ["x", None]}, "field 'code_list[1]': must be a string"),
        ({"question_id": "zzz_a", "code_list": ["x"]}, "field 'question_id': unknown task 'zzz_a'"),
    ],
)
def test_a_bad_livecodebench_record_is_named(tmp_path: Path, record: dict[str, object], where: str) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps({"question_id": "1873_A", "code_list": []}) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(InputError, match=rf"^{path}:2: {where.replace('[', '.').replace(']', '.')}"):
        read_samples(path, PROBLEMS)
