"""Turning assert-based test code into tests as data.

``assert EXPR == LITERAL`` becomes a :class:`CallTest` (judged on the host, where the candidate cannot
see or fake the expected value); ``assert abs(EXPR - LITERAL) < TOL`` becomes one with a tolerance.
Anything else stays an :class:`AssertTest`, run as written.
"""

from __future__ import annotations

import ast

from refinelab.problems._model import AssertTest, CallTest, Test


def literal(node: ast.expr) -> tuple[bool, object]:
    """``(True, value)`` if the expression is a Python literal, else ``(False, None)``."""
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def test_from_assert(statement: ast.Assert) -> Test | None:
    """The test an assert statement expresses; None for an assert of a constant (a no-op)."""
    test = statement.test
    if isinstance(test, ast.Constant):
        return None
    converted = _equality(test) or _tolerance(test)
    return converted if converted is not None else AssertTest(ast.unparse(statement))


def _equality(test: ast.expr) -> CallTest | None:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    left, right = test.left, test.comparators[0]
    for expr, other in ((left, right), (right, left)):
        is_literal, value = literal(other)
        if is_literal and not literal(expr)[0]:
            return CallTest(ast.unparse(expr), value)
    return None


def _tolerance(test: ast.expr) -> CallTest | None:
    """``abs(EXPR - LITERAL) < TOL`` (or ``<=``, or the operands swapped inside ``abs``)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Lt, ast.LtE))):
        return None
    call, (bound,) = test.left, test.comparators
    ok, tolerance = literal(bound)
    if not (ok and isinstance(tolerance, (int, float)) and _is_abs_of_difference(call)):
        return None
    assert isinstance(call, ast.Call) and isinstance(call.args[0], ast.BinOp)
    difference = call.args[0]
    for expr, other in ((difference.left, difference.right), (difference.right, difference.left)):
        is_literal, value = literal(other)
        if is_literal and isinstance(value, (int, float)) and not literal(expr)[0]:
            return CallTest(ast.unparse(expr), value, atol=float(tolerance))
    return None


def _is_abs_of_difference(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "abs"
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.BinOp)
        and isinstance(node.args[0].op, ast.Sub)
    )


def tests_from_statements(source: str) -> list[Test] | None:
    """Tests from code made only of assert statements; None if it holds anything else."""
    try:
        module = ast.parse(source)
    except SyntaxError:
        return None
    if not all(isinstance(s, ast.Assert) for s in module.body):
        return None
    return [t for s in module.body if isinstance(s, ast.Assert) and (t := test_from_assert(s)) is not None]


def as_value_test(test: Test) -> Test:
    """``assert f(1) == 2`` as the value test ``f(1) == 2`` (judged outside the candidate, so a failure
    says what it returned); any other test as it is."""
    if isinstance(test, AssertTest):
        converted = tests_from_statements(test.code)
        if converted is not None and len(converted) == 1:
            return converted[0]
    return test


def tests_from_check(test_source: str) -> list[Test] | None:
    """Tests from a human-eval style ``def check(candidate): assert ...`` whose body is only asserts.

    Returns None when the body does more (loops, helpers), so the caller keeps the whole check.
    """
    try:
        module = ast.parse(test_source)
    except SyntaxError:
        return None
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == "check":
            body = [s for s in node.body if not _is_docstring(s)]
            if body and all(isinstance(s, ast.Assert) for s in body):
                return [t for s in body if isinstance(s, ast.Assert) and (t := test_from_assert(s)) is not None]
            return None
    return None


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def without_check_function(test_source: str) -> str:
    """The test source minus ``def check`` (and calls to it): what converted tests still need (imports,
    helpers). Keeping ``check`` would shadow a candidate whose entry point is itself called ``check``."""
    try:
        module = ast.parse(test_source)
    except SyntaxError:
        return test_source
    kept = [node for node in module.body if not _defines_or_calls_check(node)]
    return ast.unparse(ast.Module(body=kept, type_ignores=[])) + "\n" if kept else ""


def _defines_or_calls_check(node: ast.stmt) -> bool:
    if isinstance(node, ast.FunctionDef):
        return node.name == "check"
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "check"
    )
