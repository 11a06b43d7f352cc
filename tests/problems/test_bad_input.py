"""Bad input: one located error (file, line, field), never a traceback or a half-loaded benchmark."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path

import pytest

from refinelab.errors import InputError, UserError
from refinelab.problems import load_benchmark, load_jsonl, load_livecodebench, load_mbpp


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


GOOD = json.dumps({"id": "a", "kind": "function", "prompt": "p", "hidden_tests": [{"call": "f()", "expected": 1}]})


def test_malformed_json_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "p.jsonl", [GOOD, "{not json"])
    with pytest.raises(InputError) as error:
        load_jsonl(path)
    assert (error.value.line, error.value.field) == (2, None)
    assert str(error.value).startswith(f"{path}:2: malformed JSON")
    path = write(tmp_path / "q.jsonl", [GOOD, '{"id": "a'])
    with pytest.raises(InputError) as error:
        load_jsonl(path)
    assert str(error.value) == f"{path}:2: malformed JSON (Unterminated string starting at column 8)"  # not "at at"


def test_missing_field(tmp_path: Path) -> None:
    path = write(
        tmp_path / "p.jsonl", [json.dumps({"id": "a", "kind": "stdio", "hidden_tests": [{"stdin": "", "stdout": ""}]})]
    )
    with pytest.raises(InputError, match=r"p.jsonl:1: field 'prompt': missing"):
        load_jsonl(path)


def test_unknown_test_type(tmp_path: Path) -> None:
    record = {"id": "a", "kind": "stdio", "prompt": "p", "hidden_tests": [{"input": "1"}]}
    with pytest.raises(InputError, match=r"field 'hidden_tests\[0\]': unknown test type"):
        load_jsonl(write(tmp_path / "p.jsonl", [json.dumps(record)]))


def test_unknown_field_and_wrong_type(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="field 'hidden': unknown field"):
        load_jsonl(write(tmp_path / "p.jsonl", [json.dumps({"id": "a", "hidden": []})]))
    record = {"id": 3, "kind": "stdio", "prompt": "p", "hidden_tests": [{"stdin": "", "stdout": ""}]}
    with pytest.raises(InputError, match="field 'id': expected str, got int"):
        load_jsonl(write(tmp_path / "q.jsonl", [json.dumps(record)]))


def test_duplicate_ids(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="duplicate id 'a'"):
        load_jsonl(write(tmp_path / "p.jsonl", [GOOD, GOOD]))


def test_livecodebench_unknown_test_type_and_missing_field(tmp_path: Path) -> None:
    record = {
        "question_id": "q",
        "question_content": "c",
        "public_tests": [{"input": "", "output": "", "testtype": "x"}],
    }
    with pytest.raises(InputError, match=r"l.jsonl:1: field 'public_tests': unknown test type 'x'"):
        load_livecodebench(write(tmp_path / "l.jsonl", [json.dumps(record)]))
    del record["question_id"]
    record["public_tests"] = []
    with pytest.raises(InputError, match="field 'question_id': missing"):
        load_livecodebench(write(tmp_path / "m.jsonl", [json.dumps(record)]))


def test_mbpp_record_without_tests(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="field 'test_list': missing"):
        load_mbpp(write(tmp_path / "m.jsonl", [json.dumps({"task_id": 1, "text": "t"})]))


def test_missing_file_and_corrupt_gzip(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file"):
        load_jsonl(tmp_path / "absent.jsonl")
    broken = tmp_path / "b.jsonl.gz"
    broken.write_bytes(gzip.compress(GOOD.encode())[:20])
    with pytest.raises(InputError, match="corrupt gzip"):
        load_jsonl(broken)


def test_the_generic_format_round_trip(tmp_path: Path) -> None:
    records = [
        {
            "id": "add",
            "kind": "function",
            "prompt": "Write add.",
            "entry_point": "add",
            "visible_tests": [{"call": "add(1, 2)", "expected": 3}],
            "hidden_tests": [
                {"assert": "assert add(2, 2) == 4"},
                {"call": "add(1, 2)", "expected_repr": "(3)", "atol": 0},
            ],
        },
        {"id": "echo", "kind": "stdio", "prompt": "Echo.", "hidden_tests": [{"stdin": "hi\n", "stdout": "hi\n"}]},
    ]
    problems = load_jsonl(write(tmp_path / "p.jsonl", [json.dumps(r) for r in records]))
    assert [p.id for p in problems] == ["add", "echo"]
    assert problems[0].hidden_tests[1].expected == 3  # type: ignore[union-attr]
    assert problems[1].kind == "stdio"


@pytest.mark.parametrize("name", ["jsonl", "mbpp", "livecodebench", "apps", "codecontests", "humaneval"])
def test_an_empty_benchmark_file_is_a_user_error(tmp_path: Path, name: str) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(UserError, match=f"^{empty}: no {name} problems in the file$"):
        asyncio.run(load_benchmark(name, empty))


def test_a_byte_order_mark_is_not_part_of_the_first_record(tmp_path: Path) -> None:
    """Windows tools (PowerShell's ``Out-File -Encoding utf8``, Notepad) start UTF-8 files with a BOM; RFC
    8259 lets a reader ignore it, and the records are the same as without it, in either file form."""
    lines = tmp_path / "p.jsonl"
    lines.write_bytes(b"\xef\xbb\xbf" + GOOD.encode() + b"\r\n")
    assert [p.id for p in load_jsonl(lines)] == ["a"]
    listed = tmp_path / "m.json"
    mbpp = {"task_id": 11, "text": "t", "test_list": ["assert f(1) == 1"]}
    listed.write_bytes(gzip.compress(b"\xef\xbb\xbf" + json.dumps([mbpp]).encode()))
    assert [p.id for p in load_mbpp(listed)] == ["11"]
