"""refinelab's own JSON Lines format for a user's problems (documented in docs/problems.md).

One object per line::

    {"id": "add", "kind": "function", "prompt": "Write add(a, b).", "entry_point": "add",
     "visible_tests": [{"call": "add(1, 2)", "expected": 3}],
     "hidden_tests": [{"assert": "assert add(2, 2) == 4"},
                      {"call": "add(0.1, 0.2)", "expected": 0.3, "atol": 1e-9}]}
    {"id": "echo", "kind": "stdio", "prompt": "Print the input.",
     "hidden_tests": [{"stdin": "hi\\n", "stdout": "hi\\n"}]}

A call test may give ``expected_repr`` (a Python literal, for tuples and sets) instead of ``expected``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from refinelab._location import Location
from refinelab.errors import InputError
from refinelab.problems._io import field, optional, read_jsonl
from refinelab.problems._model import AssertTest, CallTest, Problem, StdioTest, Test

_KNOWN = {
    "id",
    "kind",
    "prompt",
    "entry_point",
    "starter_code",
    "reference",
    "test_setup",
    "visible_tests",
    "hidden_tests",
    "metadata",
}


def load_jsonl(path: str | Path) -> list[Problem]:
    """Load problems in refinelab's JSON Lines format."""
    source = Path(path)
    problems = [_problem(record, Location(source, line)) for line, record in read_jsonl(source)]
    seen: set[str] = set()
    for problem in problems:
        if problem.id in seen:
            raise InputError(source, None, "id", f"duplicate id {problem.id!r}")
        seen.add(problem.id)
    return problems


def _problem(record: dict[str, object], where: Location) -> Problem:
    unknown = sorted(set(record) - _KNOWN)
    if unknown:
        raise where.error(unknown[0], "unknown field")
    kind = field(record, "kind", str, where)
    if kind not in ("function", "stdio"):
        raise where.error("kind", f"must be 'function' or 'stdio', not {kind!r}")
    hidden = _tests(field(record, "hidden_tests", list, where), "hidden_tests", where)
    if not hidden:
        raise where.error("hidden_tests", "empty: a problem needs at least one hidden test")
    return Problem(
        id=field(record, "id", str, where),
        prompt=field(record, "prompt", str, where),
        kind="function" if kind == "function" else "stdio",
        visible_tests=tuple(_tests(optional(record, "visible_tests", list, where, []), "visible_tests", where)),
        hidden_tests=tuple(hidden),
        entry_point=optional(record, "entry_point", str, where, "") or None,
        starter_code=optional(record, "starter_code", str, where, ""),
        reference=optional(record, "reference", str, where, "") or None,
        test_setup=optional(record, "test_setup", str, where, ""),
        metadata=optional(record, "metadata", dict, where, {}),
    )


def _tests(items: list[object], name: str, where: Location) -> list[Test]:
    return [_test(item, f"{name}[{index}]", where) for index, item in enumerate(items)]


def _test(item: object, name: str, where: Location) -> Test:
    if not isinstance(item, dict):
        raise where.error(name, "a test must be an object")
    if "assert" in item:
        return AssertTest(_string(item, "assert", name, where))
    if "stdin" in item:
        return StdioTest(_string(item, "stdin", name, where), _string(item, "stdout", name, where))
    if "call" in item:
        return CallTest(_string(item, "call", name, where), _expected(item, name, where), _atol(item, name, where))
    raise where.error(name, "unknown test type: needs 'assert', 'call' or 'stdin'")


def _string(item: dict[str, object], key: str, name: str, where: Location) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise where.error(f"{name}.{key}", "missing or not a string")
    return value


def _expected(item: dict[str, object], name: str, where: Location) -> object:
    if "expected" in item:
        return item["expected"]
    text = _string(item, "expected_repr", name, where)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise where.error(f"{name}.expected_repr", "not a Python literal") from None


def _atol(item: dict[str, object], name: str, where: Location) -> float | None:
    value = item.get("atol")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise where.error(f"{name}.atol", "must be a non-negative number")
    return float(value)
