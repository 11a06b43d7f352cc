"""Competitive-programming benchmarks: APPS (codeparrot's upstream JSON Lines, or MapCoder's 150-problem
selection) and CodeContests (DeepMind's Parquet, or rLLM's JSON of 165 test problems)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from refinelab._location import Location
from refinelab.errors import InputError
from refinelab.problems._counting import pyarrow_parquet
from refinelab.problems._io import field, optional, read_records
from refinelab.problems._literal import call_source
from refinelab.problems._model import CallTest, Problem, StdioTest, Test


def load_apps(path: str | Path) -> list[Problem]:
    """APPS problems, in either form (recognised per record).

    Upstream (codeparrot/apps): ``question``, ``input_output`` (JSON: ``inputs``, ``outputs`` and, for
    call-based problems, ``fn_name``), ``solutions`` (JSON list; the first is kept as the reference),
    ``starter_code``, ``difficulty``. Records without usable tests are left out.

    MapCoder's selection: ``description``, ``sample_io`` (visible), ``test_list`` (hidden),
    ``starter_code``; problems with starter code are call-based, each input line one argument (a Python
    literal, or a bare string when it does not parse) and the output list holds the return value.
    """
    source = Path(path)
    found = (_apps_any(record, Location(source, line)) for line, record in read_records(source))
    return [problem for problem in found if problem is not None]


def _apps_any(record: dict[str, object], where: Location) -> Problem | None:
    if "input_output" in record and "question" in record:
        return _apps_upstream(record, where)
    return _apps_problem(record, where)


def _apps_upstream(record: dict[str, object], where: Location) -> Problem | None:
    """A codeparrot/apps record; None when it has no tests this loader can use."""
    cases = _apps_cases(optional(record, "input_output", str, where, ""))
    if cases is None:
        return None
    inputs, outputs, function = cases
    starter = optional(record, "starter_code", str, where, "")
    question = field(record, "question", str, where)
    entry = _method_entry(function, starter) if function else None
    tests = _call_cases(inputs, outputs) if function else _stdio_cases(inputs, outputs)
    return Problem(
        id=str(record.get("problem_id", record.get("id", where.line))),
        prompt=question,
        kind="function" if function else "stdio",
        visible_tests=tuple(_examples(tests, question)),
        hidden_tests=tuple(tests),
        entry_point=entry,
        starter_code=starter.strip("\n"),
        reference=_first_solution(record.get("solutions")),
        metadata={"source": "apps", "difficulty": record.get("difficulty"), "url": record.get("url")},
    )


def _apps_cases(text: str) -> tuple[list[object], list[object], str | None] | None:
    """(inputs, outputs, fn_name) from ``input_output``; None when it is empty or unusable (not JSON, a
    number too long for Python to read, unequal lists)."""
    try:
        data = json.loads(text) if text.strip() else None
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    inputs, outputs, function = data.get("inputs"), data.get("outputs"), data.get("fn_name")
    if not isinstance(inputs, list) or not isinstance(outputs, list) or not inputs or len(inputs) != len(outputs):
        return None
    if function is not None and (not isinstance(function, str) or not all(isinstance(i, list) for i in inputs)):
        return None
    return inputs, outputs, function


def _call_cases(inputs: list[object], outputs: list[object]) -> list[Test]:
    return [CallTest(call_source(_arguments(args)), _unwrapped(out)) for args, out in zip(inputs, outputs)]


def _stdio_cases(inputs: list[object], outputs: list[object]) -> list[Test]:
    return [StdioTest(_joined(given), _joined(out)) for given, out in zip(inputs, outputs)]


def _examples(tests: list[Test], statement: str) -> list[Test]:
    """The tests whose input the statement shows (stdin problems), else the first test."""
    shown: list[Test] = [
        t for t in tests if isinstance(t, StdioTest) and t.stdin.strip() and t.stdin.strip() in statement
    ]
    return shown or tests[:1]


def _method_entry(function: str, starter: str) -> str:
    """``Solution.method`` for a class starter, else the function's name."""
    found = entry_point_from_starter(starter) if starter.strip() else None
    return f"{found.split('.')[0]}.{function}" if found and "." in found else function


def _arguments(args: object) -> list[object]:
    return list(args) if isinstance(args, list) else [args]


def _unwrapped(output: object) -> object:
    """APPS wraps a call's expected value in a one-item list; its grader accepts either."""
    return output[0] if isinstance(output, list) and len(output) == 1 else output


def _joined(value: object) -> str:
    return "\n".join(str(v) for v in value) if isinstance(value, list) else str(value)


def _first_solution(solutions: object) -> str | None:
    if not isinstance(solutions, str) or not solutions.strip():
        return None
    try:
        found = json.loads(solutions)
    except ValueError:
        return None
    return found[0] if isinstance(found, list) and found and isinstance(found[0], str) else None


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
    """CodeContests problems from DeepMind's Parquet (``.parquet``) or rLLM's JSON.

    Parquet (deepmind/code_contests): ids are the problems' names; visible tests are the public ones,
    hidden tests the private and generated ones (the public ones when there are none), as AlphaCode
    judged; the first Python 3 solution is kept as the reference. Needs pyarrow.

    JSON: ``problem`` (statement) and ``tests`` {``input``: [...], ``output``: [...]}; ids are
    ``codecontests/N`` by position (the file carries no names); visible tests are those whose input
    appears in the statement (its examples), else the first test.
    """
    source = Path(path)
    if source.suffix == ".parquet":
        rows = enumerate(_parquet_rows(source))
        return [_parquet_problem(row, Location(source, index + 1), index) for index, row in rows]
    records = enumerate(read_records(source))
    return [_cc_problem(record, Location(source, line), index) for index, (line, record) in records]


_COLUMNS = ("name", "description", "public_tests", "private_tests", "generated_tests", "solutions", "difficulty")
_PYTHON3 = 3
"""CodeContests' language code for Python 3 solutions."""


def _parquet_rows(path: Path) -> list[dict[str, object]]:
    """The rows, reading only the columns used (the file also holds every incorrect solution)."""
    parquet = pyarrow_parquet()
    try:
        names = parquet.read_schema(path).names
        missing = [name for name in ("description", "public_tests") if name not in names]
        if missing:
            raise InputError(path, None, missing[0], "missing (not a CodeContests Parquet file)")
        table = parquet.read_table(path, columns=[c for c in _COLUMNS if c in names])
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - pyarrow raises its own error types for a damaged file
        raise InputError(path, None, None, f"not a readable Parquet file ({exc})") from None
    rows: list[dict[str, object]] = table.to_pylist()
    return rows


def _parquet_problem(row: dict[str, object], where: Location, index: int) -> Problem:
    public = _parquet_tests(row.get("public_tests"), "public_tests", where)
    hidden = _parquet_tests(row.get("private_tests"), "private_tests", where)
    hidden += _parquet_tests(row.get("generated_tests"), "generated_tests", where)
    name = row.get("name")
    return Problem(
        id=name if isinstance(name, str) and name else f"codecontests/{index}",
        prompt=field(row, "description", str, where),
        kind="stdio",
        visible_tests=tuple(public),
        hidden_tests=tuple(hidden or public),
        reference=_python3_solution(row.get("solutions")),
        metadata={"source": "codecontests", "difficulty": row.get("difficulty"), "visible_from": "public tests"},
    )


def _parquet_tests(tests: object, name: str, where: Location) -> list[Test]:
    if tests is None:
        return []
    inputs = tests.get("input") if isinstance(tests, dict) else None
    outputs = tests.get("output") if isinstance(tests, dict) else None
    if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs):
        raise where.error(name, "needs equally long 'input' and 'output' lists")
    return [StdioTest(str(i), str(o)) for i, o in zip(inputs, outputs)]


def _python3_solution(solutions: object) -> str | None:
    if not isinstance(solutions, dict):
        return None
    languages, programs = solutions.get("language") or [], solutions.get("solution") or []
    return next((code for code, language in zip(programs, languages) if language == _PYTHON3), None)


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
