"""Stdin/stdout benchmarks shipped as files: APPS (MapCoder's 150-problem selection) and CodeContests."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from refinelab._location import Location
from refinelab.problems._io import field, optional, read_records
from refinelab.problems._literal import call_source
from refinelab.problems._model import CallTest, Problem, StdioTest, Test


def load_apps(path: str | Path) -> list[Problem]:
    """APPS records: ``description``, ``sample_io`` (visible), ``test_list`` (hidden), ``starter_code``.

    Problems with starter code are call-based: each input line is one argument (a Python literal, or
    a bare string when it does not parse) and the output list holds the return value.
    """
    source = Path(path)
    return [_apps_problem(record, Location(source, line)) for line, record in read_records(source)]


def _apps_problem(record: dict[str, object], where: Location) -> Problem:
    starter = optional(record, "starter_code", str, where, "")
    entry = entry_point_from_starter(starter) if starter.strip() else None
    convert = _apps_call if entry else _apps_stdio
    visible = [convert(item, where) for item in field(record, "sample_io", list, where)]
    hidden = [convert(item, where) for item in field(record, "test_list", list, where)]
    return Problem(
        id=str(record.get("id", record.get("name", where.line))),
        prompt=field(record, "description", str, where),
        kind="function" if entry else "stdio",
        visible_tests=tuple(visible),
        hidden_tests=tuple(hidden),
        entry_point=entry,
        starter_code=starter.strip("\n"),
        metadata={"source": "apps", "difficulty": record.get("difficulty")},
    )


def _io_pair(item: object, where: Location) -> tuple[str, list[object]]:
    if not isinstance(item, dict) or not isinstance(item.get("input"), str) or not isinstance(item.get("output"), list):
        raise where.error("test_list", "each test needs 'input' (string) and 'output' (list)")
    return item["input"], item["output"]


def _apps_stdio(item: object, where: Location) -> Test:
    stdin, outputs = _io_pair(item, where)
    return StdioTest(stdin, "".join(str(o) for o in outputs))


def _apps_call(item: object, where: Location) -> Test:
    stdin, outputs = _io_pair(item, where)
    args = [_argument(line) for line in stdin.split("\n")] if stdin else []
    return CallTest(call_source(args), outputs[0] if len(outputs) == 1 else outputs)


def _argument(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def entry_point_from_starter(starter: str) -> str | None:
    """``name`` for a ``def name(...)`` starter, ``Class.method`` for a class starter (LeetCode)."""
    function = re.search(r"^\s*def\s+(\w+)\s*\(", starter, re.MULTILINE)
    if function is None:
        return None
    cls = re.search(r"^\s*class\s+(\w+)", starter, re.MULTILINE)
    return f"{cls.group(1)}.{function.group(1)}" if cls and cls.start() < function.start() else function.group(1)


def load_codecontests(path: str | Path) -> list[Problem]:
    """CodeContests records: ``problem`` (statement) and ``tests`` {``input``: [...], ``output``: [...]}.

    Ids are ``codecontests/N`` by position in the file (the file carries no names). Visible tests are
    those whose input appears in the statement (its examples), else the first test.
    """
    source = Path(path)
    return [
        _cc_problem(record, Location(source, line), index) for index, (line, record) in enumerate(read_records(source))
    ]


def _cc_problem(record: dict[str, object], where: Location, index: int) -> Problem:
    statement = field(record, "problem", str, where)
    tests = field(record, "tests", dict, where)
    inputs, outputs = tests.get("input"), tests.get("output")
    if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs):
        raise where.error("tests", "needs equally long 'input' and 'output' lists")
    hidden = [StdioTest(str(i), str(o)) for i, o in zip(inputs, outputs)]
    visible = [t for t in hidden if t.stdin.strip() and t.stdin.strip() in statement] or hidden[:1]
    return Problem(
        id=f"codecontests/{index}",
        prompt=statement,
        kind="stdio",
        visible_tests=tuple(visible),
        hidden_tests=tuple(hidden),
        metadata={"source": "codecontests", "visible_from": "statement examples"},
    )
