"""MBPP: the full set (974, JSON Lines), the sanitized set (427, one JSON list), or the 500-problem
HumanEval-form file with visible/hidden tests.

The format is recognised per record. Visible test: the first assert; hidden tests: all of them.
"""

from __future__ import annotations

import ast
from pathlib import Path

from refinelab._location import Location
from refinelab.problems._asserts import tests_from_statements
from refinelab.problems._humaneval import check_tests
from refinelab.problems._io import field, optional, read_records
from refinelab.problems._model import AssertTest, Problem, Test


def load_mbpp(path: str | Path, *, sanitized: bool = False) -> list[Problem]:
    """Load MBPP from ``path`` (any of the three forms; ``sanitized`` is accepted for symmetry, the form
    is recognised per record)."""
    del sanitized
    source = Path(path)
    return [_problem(record, Location(source, line)) for line, record in read_records(source)]


def _problem(record: dict[str, object], where: Location) -> Problem:
    if "test_list" in record:
        return _mbpp_record(record, where)
    if "given_tests" in record or "test" in record:
        return _humaneval_form(record, where)
    raise where.error("test_list", "missing (not an MBPP record)")


def _mbpp_record(record: dict[str, object], where: Location) -> Problem:
    number = field(record, "task_id", int, where)
    asserts = [str(item) for item in field(record, "test_list", list, where)]
    if not asserts:
        raise where.error("test_list", "empty")
    text = record.get("text", record.get("prompt"))
    if not isinstance(text, str):
        raise where.error("text", "missing")
    imports = optional(record, "test_imports", list, where, [])
    setup = "\n".join([*map(str, imports), optional(record, "test_setup_code", str, where, "")]).strip()
    tests = [_assert_test(item) for item in asserts]
    return Problem(
        id=str(number),
        prompt=f"{text}\nYour code should pass this test:\n{asserts[0]}\n",
        kind="function",
        visible_tests=(tests[0],),
        hidden_tests=tuple(tests),
        entry_point=_called_function(asserts[0]),
        reference=optional(record, "code", str, where, "") or None,
        test_setup=setup,
        metadata={"source": "mbpp", "aliases": [f"Mbpp/{number}", f"MBPP/{number}"]},
    )


def _assert_test(source: str) -> Test:
    converted = tests_from_statements(source)
    return converted[0] if converted else AssertTest(source)


def _called_function(assertion: str) -> str | None:
    """The first function an assert calls directly: ``assert f(x) == y`` -> ``f``."""
    try:
        tree = ast.parse(assertion)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id not in _WRAPPERS:
            return node.func.id
    return None


_WRAPPERS = {"set", "sorted", "list", "tuple", "abs", "round", "len", "str", "int", "float", "frozenset", "isclose"}


def _humaneval_form(record: dict[str, object], where: Location) -> Problem:
    task_id = field(record, "task_id", str, where)
    hidden, setup = check_tests(_without_check_call(field(record, "test", str, where)))
    given = [str(item) for item in optional(record, "given_tests", list, where, [])]
    visible = [t for item in given for t in (tests_from_statements(item) or [AssertTest(item)])]
    number = task_id.rsplit("/", 1)[-1]
    return Problem(
        id=task_id,
        prompt=field(record, "prompt", str, where),
        kind="function",
        visible_tests=tuple(visible),
        hidden_tests=tuple(hidden),
        entry_point=field(record, "entry_point", str, where),
        reference=optional(record, "canonical_solution", str, where, "") or None,
        test_setup=setup,
        metadata={"source": "mbpp", "aliases": [number, f"Mbpp/{number}", f"MBPP/{number}"]},
    )


def _without_check_call(test: str) -> str:
    """Drop module-level ``check(...)`` calls: the sandbox runs the tests itself."""
    kept = [line for line in test.splitlines() if not line.startswith("check(")]
    return "\n".join(kept) + "\n"
