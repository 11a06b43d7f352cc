"""Output files that are whole or absent: lines written as they arrive, in order, and nothing left behind
when a run fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from refinelab._files import LinesInOrder
from refinelab.errors import UserError


def test_lines_arriving_in_any_order_are_written_in_order_and_the_file_appears_whole(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    with LinesInOrder(path, 4) as lines:
        lines.put(2, "c")
        lines.put(0, "a")
        assert lines.written == 1  # "a" is out; "c" waits for "b"
        lines.put(3, "d")
        lines.put(1, "b")
        assert lines.written == 4 and not path.exists()  # under its name only once finished
    assert path.read_text() == "a\nb\nc\nd\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_a_failed_run_leaves_no_file_and_no_hidden_one(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text("an earlier run's file\n")
    with pytest.raises(KeyboardInterrupt), LinesInOrder(path, 2) as lines:
        lines.put(0, "a")
        raise KeyboardInterrupt
    assert path.read_text() == "an earlier run's file\n"  # not replaced by half a file
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_lines_missing_at_the_end_are_a_bug_not_a_short_file(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    with pytest.raises(RuntimeError, match="1 of 2 lines"), LinesInOrder(path, 2) as lines:
        lines.put(0, "a")
    assert list(tmp_path.iterdir()) == []


def test_a_path_that_cannot_be_written_is_a_user_error_before_any_line(tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "out.jsonl"
    with pytest.raises(UserError, match=r"missing/out.jsonl: cannot write: No such file"), LinesInOrder(missing, 1):
        pytest.fail("entered")
