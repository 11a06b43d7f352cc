"""The tests a user gives ``solve``: assertions, files of asserts or pytest-style test functions, and
stdin/stdout pairs (the examples written in the prompt itself are read by
:func:`refinelab.problems.prompt_examples`).

Each becomes a test as data (:mod:`refinelab.problems`) with where it came from, so the result can say
which of the user's tests the code passes and which tests were generated.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from refinelab._files import json_problem
from refinelab.errors import InputError, UserError
from refinelab.problems import CallTest, StdioTest, Test, tests_from_statements
from refinelab.solve._pytest_style import (
    PYTEST_SHIM,
    Constants,
    class_tests,
    function_tests,
    is_test_class,
    undecorated_setup,
)

TestOrigin = Literal["given", "docstring", "io", "generated"]
"""Where a test came from: the user's assertions or test file, the prompt's examples, the user's
stdin/stdout pairs, or the model (when the user gave none)."""


@dataclass(frozen=True)
class GivenTest:
    """One test of a solve and where it came from."""

    test: Test
    """The test as data."""
    origin: TestOrigin
    """given, docstring, io or generated."""
    shown: str | None = None
    """The test as the user wrote it, when the code run differs (a pytest-style test whose asserts were
    made to say what failed)."""

    @property
    def text(self) -> str:
        """The test as a person would write it."""
        return self.shown if self.shown is not None else describe(self.test)


@dataclass(frozen=True)
class TestSet:
    """Tests and the code they need (imports and helpers of a test file)."""

    tests: tuple[GivenTest, ...] = ()
    """The tests, in the order given."""
    setup: str = ""
    """Code run after the candidate and before the tests."""

    def plus(self, other: TestSet) -> TestSet:
        """Both sets, without repeating a test."""
        seen = {t.text for t in self.tests}
        extra = tuple(t for t in other.tests if t.text not in seen)
        setup = "\n".join(part for part in (self.setup, other.setup) if part)
        return TestSet(self.tests + extra, setup)


def describe(test: Test) -> str:
    """``fib(1) == [0]``, the assert's code, or ``'1 2\\n' => '3'``."""
    if isinstance(test, CallTest):
        return f"{test.expr} == {test.expected!r}"
    if isinstance(test, StdioTest):
        return f"{test.stdin!r} => {test.expected!r}"
    return test.code


def parse_given_tests(source: str, where: str, origin: TestOrigin = "given") -> TestSet:
    """Tests from Python: one expression (``fib(1) == [0]``), assert lines, or a pytest-style file
    (:mod:`._pytest_style`: test functions, parametrized cases, test classes) with its imports and
    helpers. ``where`` names the source in errors (a flag or a file)."""
    text = source.strip()
    if _is_expression(text):
        text = f"assert {text}"
    try:
        module = ast.parse(text)
    except SyntaxError as exc:
        raise InputError(where, exc.lineno, None, f"not Python: {exc.msg}") from None
    constants = {
        node.targets[0].id: node.value
        for node in module.body
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
    }
    tests: list[GivenTest] = []
    setup: list[str] = []
    for node in module.body:
        found = _node_tests(node, where, constants)
        if found is None:
            setup.extend(_setup_lines(undecorated_setup(node)))
        tests.extend(GivenTest(test, origin, shown) for test, shown in found or ())
    if not tests:
        raise InputError(where, None, None, "no tests found: write assertions like 'f(1) == 2' or def test_...()")
    if any(_mentions_pytest(code) for code in [*setup, *(describe(t.test) for t in tests)]):
        setup.insert(0, PYTEST_SHIM.strip())
    return TestSet(tuple(tests), "\n".join(setup))


def _is_expression(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return True


def _node_tests(node: ast.stmt, where: str, constants: Constants) -> Sequence[tuple[Test, str | None]] | None:
    """The tests a top-level statement holds, each with how to show it when that is not its code; None
    when the statement is setup code."""
    if isinstance(node, ast.Assert):
        return [(test, None) for test in tests_from_statements(ast.unparse(node)) or []]
    if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
        return function_tests(node, where, constants)
    if is_test_class(node):
        assert isinstance(node, ast.ClassDef)
        return class_tests(node, where, constants)
    return None


def _mentions_pytest(code: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Name) and n.id == "pytest" for n in ast.walk(tree))


def _setup_lines(node: ast.stmt) -> list[str]:
    """Setup code to keep: everything but imports of modules outside the standard library (``from
    solution import fib``, ``import pytest``), which the candidate itself replaces."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        names = [node.module or ""] if node.level == 0 else [""]
    else:
        return [ast.unparse(node)]
    return [ast.unparse(node)] if all(n.split(".")[0] in sys.stdlib_module_names for n in names) else []


def parse_io_pair(text: str, where: str) -> StdioTest:
    """``INPUT=>OUTPUT`` with ``\\n`` and ``\\t`` escapes: a stdin/stdout test."""
    stdin, arrow, expected = text.partition("=>")
    if not arrow:
        raise UserError(f"{where} {text!r}: expected INPUT=>OUTPUT, e.g. '1 2=>3' (\\n for a new line)")
    stdin = _unescape(stdin)
    return StdioTest(stdin if stdin.endswith("\n") else stdin + "\n", _unescape(expected))


def _unescape(text: str) -> str:
    return re.sub(r"\\([nt\\])", lambda m: {"n": "\n", "t": "\t", "\\": "\\"}[m.group(1)], text)


def read_io_file(path: Path) -> list[StdioTest]:
    """Pairs from a file: JSON (a list, or JSON lines) of ``{"input": ..., "output": ...}``, or one
    ``INPUT=>OUTPUT`` per line."""
    text = read_text(path)
    if text.lstrip().startswith(("{", "[")):
        return [_json_pair(record, path, line) for line, record in _json_records(text, path)]
    pairs = [
        parse_io_pair(line, f"{path}:{number}")
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip()
    ]
    if not pairs:
        raise InputError(path, None, None, "no INPUT=>OUTPUT pairs")
    return pairs


def _json_records(text: str, path: Path) -> list[tuple[int | None, object]]:
    if text.lstrip().startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(path, exc.lineno, None, f"malformed JSON ({json_problem(exc)})") from None
        return [(None, record) for record in records] if isinstance(records, list) else [(None, records)]
    found: list[tuple[int | None, object]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                found.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise InputError(path, number, None, f"malformed JSON ({json_problem(exc)})") from None
    return found


def _json_pair(record: object, path: Path, line: int | None) -> StdioTest:
    if not isinstance(record, dict):
        raise InputError(path, line, None, "expected an object with 'input' and 'output'")
    for name in ("input", "output"):
        if not isinstance(record.get(name), str):
            raise InputError(path, line, name, "missing or not a string")
    stdin = str(record["input"])
    return StdioTest(stdin if stdin.endswith("\n") or not stdin else stdin + "\n", str(record["output"]))


def read_text(path: Path) -> str:
    """A file's text, or a one-line user error."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read: {exc}") from None


def called_names(tests: Sequence[GivenTest]) -> list[str]:
    """Functions the tests call that are not builtins, in order of first use (to find the entry point)."""
    names: list[str] = []
    for given in tests:
        code = given.test.expr if isinstance(given.test, CallTest) else getattr(given.test, "code", "")
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                name = node.func.id
                if not hasattr(builtins, name) and name not in defined and name not in names:
                    names.append(name)
    return names


_FENCED = re.compile(r"```[ \t]*[\w+-]*[^\n]*\n(.*?)```", re.DOTALL)


def completed_body(prompt: str, entry_point: str | None, reply: str) -> str | None:
    """The whole program when ``reply`` is only the body of the prompt's function (as completion models
    and some benchmark outputs write it): the prompt followed by the body; ``None`` when the reply is
    anything else (a whole program, prose, tests)."""
    if entry_point is None or re.search(rf"\b(def|class)\s+{re.escape(entry_point)}\b", reply):
        return None
    if not re.search(rf"^\s*def\s+{re.escape(entry_point)}\b", prompt, re.MULTILINE):
        return None
    blocks = _FENCED.findall(reply)
    body = blocks[0] if blocks else reply
    first = next((line for line in body.splitlines() if line.strip()), "")
    if not first.startswith((" ", "\t")):
        return None  # a body is indented under the prompt's ``def``
    program = prompt.rstrip() + "\n" + body.rstrip() + "\n"
    try:
        ast.parse(program)
    except SyntaxError:
        return None
    return program
