"""Tests from a pytest-style file, run without pytest (the sandbox offers only the standard library).

- ``def test_x():`` is one test; ``@pytest.mark.parametrize`` makes one test per case (stacked
  decorators: every combination); ``class TestX:`` with ``def test_y(self)`` methods is one test per
  method (``setup_method`` runs first).
- ``pytest.raises`` (as a context manager or with a callable), ``pytest.approx``, ``pytest.fail`` and
  ``pytest.param`` work: the setup then defines a small ``pytest`` of just those, whose marks do nothing
  (:data:`PYTEST_SHIM`).
- Tests marked ``skip``, ``skipif`` or ``xfail`` are left out: none of them must pass.
- A test that takes any other argument needs a fixture, which cannot be provided: a user error naming
  the line.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Mapping

from refinelab.errors import InputError
from refinelab.problems import AssertTest

PYTEST_SHIM = """
import math as _math
import re as _re
import types as _types


class _Raises:
    def __init__(self, expected, match=None):
        self.expected, self.match, self.value, self.type = expected, match, None, None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None:
            raise AssertionError(f"DID NOT RAISE {self.expected}")
        if not issubclass(kind, self.expected):
            return False
        if self.match is not None and not _re.search(self.match, str(value)):
            raise AssertionError(f"Regex pattern {self.match!r} did not match {str(value)!r}")
        self.value, self.type = value, kind
        return True


def _raises(expected, *args, match=None, **kwargs):
    context = _Raises(expected, match)
    if not args:
        return context
    with context:
        args[0](*args[1:], **kwargs)
    return context


class _Approx:
    def __init__(self, expected, rel=None, abs=None):
        self.expected, self.rel, self.abs = expected, rel, abs

    def _close(self, expected, actual):
        if isinstance(expected, dict):
            return isinstance(actual, dict) and expected.keys() == actual.keys() and all(
                self._close(expected[k], actual[k]) for k in expected
            )
        if isinstance(expected, (list, tuple)):
            return isinstance(actual, (list, tuple)) and len(expected) == len(actual) and all(
                self._close(e, a) for e, a in zip(expected, actual)
            )
        if isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(actual, bool):
            rel = 1e-6 if self.rel is None else self.rel
            return _math.isclose(actual, expected, rel_tol=rel, abs_tol=1e-12 if self.abs is None else self.abs)
        return expected == actual

    def __eq__(self, actual):
        return self._close(self.expected, actual)

    def __repr__(self):
        return f"approx({self.expected!r})"


def _fail(reason=""):
    raise AssertionError(reason)


def _param(*values, **options):
    return values[0] if len(values) == 1 else values


class _Marks:
    def __getattr__(self, name):
        def mark(*args, **kwargs):
            if len(args) == 1 and callable(args[0]) and not kwargs:
                return args[0]
            return lambda function: function

        return mark


pytest = _types.SimpleNamespace(raises=_raises, approx=_Approx, fail=_fail, param=_param, mark=_Marks())
"""
"""The part of pytest that test bodies use, for tests that mention ``pytest``."""

_LEFT_OUT = ("skip", "skipif", "xfail")


Constants = Mapping[str, ast.expr]
"""The file's top-level ``NAME = [...]`` assignments, for ``parametrize("n", CASES)``."""


Made = list[tuple[AssertTest, str]]
"""Tests, each with its text as the user wrote it (the code run has asserts that say what failed)."""


def function_tests(node: ast.FunctionDef, where: str, constants: Constants) -> Made:
    """The tests a top-level ``def test_*`` makes: one, or one per parametrized case."""
    if _marked(node, _LEFT_OUT):
        return []
    run, shown = ast.unparse(_undecorated(node, explain=True)), ast.unparse(_undecorated(node))
    calls = [f"{node.name}({arguments})" for arguments in _cases(node, where, constants)]
    return [(AssertTest(f"{run}\n{call}"), f"{shown}\n{call}") for call in calls]


def class_tests(node: ast.ClassDef, where: str, constants: Constants) -> Made:
    """The tests a ``class Test*`` makes: one per ``test_*`` method (per case when parametrized)."""
    if _marked(node, _LEFT_OUT):
        return []
    run, shown = _class_source(node, explain=True), _class_source(node, explain=False)
    methods = [m for m in node.body if isinstance(m, ast.FunctionDef)]
    set_up = any(m.name == "setup_method" for m in methods)
    tests = []
    for method in methods:
        if not method.name.startswith("test") or _marked(method, _LEFT_OUT):
            continue
        for arguments in _cases(method, where, constants, skip_self=True):
            call = f"{node.name}().{method.name}({arguments})"
            if set_up:
                call = f"instance = {node.name}()\ninstance.setup_method(None)\ninstance.{method.name}({arguments})"
            tests.append((AssertTest(f"{run}\n{call}"), f"{shown}\n{call}"))
    return tests


def _class_source(node: ast.ClassDef, *, explain: bool) -> str:
    plain = ast.parse(ast.unparse(node)).body[0]
    assert isinstance(plain, ast.ClassDef)
    plain.decorator_list = []
    plain.body = [_undecorated(m, explain=explain) if isinstance(m, ast.FunctionDef) else m for m in plain.body]
    return ast.unparse(plain)


def is_test_class(node: ast.stmt) -> bool:
    """A pytest test class: ``class Test...`` without an ``__init__``."""
    if not isinstance(node, ast.ClassDef) or not node.name.startswith("Test"):
        return False
    return not any(isinstance(m, ast.FunctionDef) and m.name == "__init__" for m in node.body)


def undecorated_setup(node: ast.stmt) -> ast.stmt:
    """A setup statement without pytest decorators (``@pytest.fixture``): they need pytest itself."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
        _is_pytest(d) for d in node.decorator_list
    ):
        copy = ast.parse(ast.unparse(node)).body[0]
        assert isinstance(copy, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        copy.decorator_list = [d for d in copy.decorator_list if not _is_pytest(d)]
        return copy
    return node


def _cases(node: ast.FunctionDef, where: str, constants: Constants, *, skip_self: bool = False) -> list[str]:
    """The keyword arguments to call the test with: ``[""]`` for a plain test, one per parametrized case
    (every combination of stacked ``parametrize`` decorators)."""
    names = [a.arg for a in node.args.args][1 if skip_self else 0 :]
    tables = [_parametrize(d, where, constants) for d in node.decorator_list if _mark_name(d) == "parametrize"]
    missing = [name for name in names if all(name not in columns for columns, _ in tables)]
    if missing:
        raise InputError(
            where,
            node.lineno,
            None,
            f"{node.name} takes {', '.join(missing)}: pytest fixtures cannot be provided "
            "(plain test functions, @pytest.mark.parametrize and asserts can)",
        )
    cases = []
    for combination in itertools.product(*(rows for _, rows in tables)):
        pairs = [pair for (columns, _), row in zip(tables, combination) for pair in zip(columns, row)]
        cases.append(", ".join(f"{name}={value}" for name, value in pairs))
    return cases


def _parametrize(decorator: ast.expr, where: str, constants: Constants) -> tuple[list[str], list[list[str]]]:
    """The names and the cases (each a value per name, as source) of ``@pytest.mark.parametrize``."""
    assert isinstance(decorator, ast.Call)
    arguments = list(decorator.args) + [k.value for k in decorator.keywords if k.arg in ("argnames", "argvalues")]
    if len(arguments) < 2:
        raise InputError(where, decorator.lineno, None, "parametrize needs argument names and values")
    try:
        names = ast.literal_eval(arguments[0])
    except ValueError:
        raise InputError(where, decorator.lineno, None, "parametrize's argument names must be a literal") from None
    columns = [n.strip() for n in names.split(",") if n.strip()] if isinstance(names, str) else list(names)
    values = arguments[1]
    if isinstance(values, ast.Name) and values.id in constants:
        values = constants[values.id]
    if not isinstance(values, (ast.List, ast.Tuple)):
        raise InputError(
            where, decorator.lineno, None, "parametrize's cases must be a list (or a NAME = [...] in the file)"
        )
    return columns, [_row(element, len(columns)) for element in values.elts]


def _row(element: ast.expr, width: int) -> list[str]:
    """One case: a value per name. ``pytest.param(1, 2, id=...)`` counts as ``(1, 2)``."""
    if isinstance(element, ast.Call) and ast.unparse(element.func) == "pytest.param":
        items = list(element.args)
    elif width > 1 and isinstance(element, (ast.Tuple, ast.List)):
        items = list(element.elts)
    else:
        items = [element]
    if width == 1 and len(items) == 1:
        return [ast.unparse(items[0])]
    if len(items) == width:
        return [ast.unparse(item) for item in items]
    whole = ast.unparse(element)
    return [f"({whole})[{index}]" for index in range(width)]


def _undecorated(node: ast.FunctionDef, *, explain: bool = False) -> ast.FunctionDef:
    """The test without its pytest decorators; with ``explain``, each bare ``assert`` says what failed."""
    copy = ast.parse(ast.unparse(node)).body[0]
    assert isinstance(copy, ast.FunctionDef)
    copy.decorator_list = [d for d in copy.decorator_list if not _is_pytest(d)]
    if not explain:
        return copy
    for parent in ast.walk(copy):
        for name, value in ast.iter_fields(parent):
            if isinstance(value, list):
                setattr(parent, name, [_explained(item) if isinstance(item, ast.Assert) else item for item in value])
    return copy


def _explained(node: ast.Assert) -> ast.stmt:
    """``assert f(5) == [0, 1]`` as ``assert (_left := f(5)) == [0, 1], "f(5) == [0, 1]: the left side is ..."``
    (pytest rewrites asserts to say as much; a bare AssertionError says nothing)."""
    if node.msg is not None:
        return node
    text = ast.unparse(node.test)
    if not isinstance(node.test, ast.Compare) or len(node.test.ops) != 1:
        return ast.parse(f"assert {text}, {text!r}").body[0]
    left, right = ast.unparse(node.test.left), ast.unparse(node.test.comparators[0])
    operator = text[len(left) : len(text) - len(right)].strip() if text.endswith(right) else None
    if operator is None or not text.startswith(left):
        return ast.parse(f"assert {text}, {text!r}").body[0]
    return ast.parse(
        f"assert (_left := {left}) {operator} {right}, {text!r} + ': the left side is ' + repr(_left)"
    ).body[0]


def _marked(node: ast.FunctionDef | ast.ClassDef, marks: tuple[str, ...]) -> bool:
    return any(_mark_name(d) in marks for d in node.decorator_list)


def _mark_name(decorator: ast.expr) -> str | None:
    """``parametrize`` for ``@pytest.mark.parametrize(...)``, ``skip`` for ``@pytest.mark.skip``."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    text = ast.unparse(target)
    return text.removeprefix("pytest.mark.") if text.startswith("pytest.mark.") else None


def _is_pytest(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return ast.unparse(target).startswith("pytest.")
