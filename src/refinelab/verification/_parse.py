"""Reading tests out of a model's reply: asserts for function problems, input/output blocks for stdio.

A reply is messy: prose around the code, several fenced blocks or none, a ``def check(candidate)``
wrapper, asserts spread over several lines, and a last line cut off by the token limit. Everything
usable becomes a test; everything else is kept as a :class:`Rejected` with the reason, so a trajectory
can show what the model wrote and what was thrown away.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from refinelab.problems import AssertTest, Problem, StdioTest, Test

_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:```|\Z)", re.DOTALL)
_ASSERT_LINE = re.compile(r"^\s*assert\b")
_STDIO_BLOCK = re.compile(r"<input>\n?(.*?)</input>\s*<output>\n?(.*?)(</output>|\Z)", re.DOTALL)
_UNSAFE_NAMES = frozenset({"__import__", "eval", "exec", "compile", "open", "globals", "locals", "breakpoint"})


@dataclass(frozen=True)
class Rejected:
    """A piece of the reply that did not become a test."""

    text: str
    """What the model wrote (one assert, one block, one import line)."""
    reason: str
    """Why it was dropped: ``does not parse``, ``does not call f``, ``duplicate``, ``imports x``..."""


@dataclass(frozen=True)
class GeneratedTests:
    """The tests read from one model reply, and what was dropped from it."""

    tests: tuple[Test, ...]
    """Valid, distinct tests in reply order: :class:`AssertTest` for function problems,
    :class:`StdioTest` for stdio problems."""
    rejected: tuple[Rejected, ...]
    """Everything that looked like a test but was not kept, with the reason."""
    raw: str
    """The reply as the model wrote it."""

    def to_json(self) -> dict[str, object]:
        """A JSON-ready record, for trajectories: each test as its code (or stdin and expected output)."""
        return {
            "tests": [_test_json(test) for test in self.tests],
            "rejected": [{"text": r.text, "reason": r.reason} for r in self.rejected],
            "raw": self.raw,
        }


def _test_json(test: Test) -> dict[str, object]:
    if isinstance(test, AssertTest):
        return {"code": test.code}
    if isinstance(test, StdioTest):
        return {"stdin": test.stdin, "expected": test.expected}
    return {"expr": test.expr, "expected": test.expected, "atol": test.atol}


def parse_tests(reply: str, problem: Problem) -> GeneratedTests:
    """Read the tests in a model's reply to :func:`test_request`.

    Function problems: every ``assert`` (at top level, or inside any function such as
    ``def check(candidate)``, where ``candidate`` is renamed to the entry point) that parses, calls the
    entry point and uses nothing unsafe; imports the problem's prompt does not make are rejected.
    Stdio problems: every ``<input>...</input><output>...</output>`` pair. Duplicates (same normalised
    syntax tree, or same input and output) are dropped and recorded as rejected.
    """
    if problem.kind == "stdio":
        tests, rejected = _stdio_tests(reply)
    else:
        tests, rejected = _function_tests(reply, problem)
    unique, duplicates = _deduplicate(tests)
    return GeneratedTests(tuple(unique), tuple(rejected) + tuple(duplicates), reply)


def test_key(test: Test) -> str:
    """A key equal for tests that mean the same: the syntax tree without layout, or input and output."""
    if isinstance(test, StdioTest):
        return repr((test.stdin.rstrip("\n") + "\n", test.expected.strip()))
    if isinstance(test, AssertTest):
        try:
            return ast.dump(ast.parse(test.code))
        except SyntaxError:
            return test.code
    return repr((test.expr, test.expected, test.atol))


def pooled(batches: Iterable[Sequence[Test]], *, limit: int | None = None) -> tuple[Test, ...]:
    """Tests from several replies, duplicates dropped, in first-seen order.

    Args:
        batches: The tests of each reply (``GeneratedTests.tests``), in sample order.
        limit: Take at most this many tests from each reply (its first ones), as CodeT's
            ``test_case_limit`` (5 in its release) does; ``None`` takes all.
    """
    seen: set[str] = set()
    kept: list[Test] = []
    for batch in batches:
        for test in batch[:limit] if limit is not None else batch:
            key = test_key(test)
            if key not in seen:
                seen.add(key)
                kept.append(test)
    return tuple(kept)


def occurrences(
    batches: Iterable[Sequence[Test]], tests: Sequence[Test], *, limit: int | None = None
) -> tuple[int, ...]:
    """How many times each of ``tests`` occurs across the replies (within each reply's first ``limit``).

    CodeT weighs a test by how many samples produced it; pass these as ``weights`` to
    :func:`~refinelab.verification.dual_agreement` to do the same.
    """
    counts = {test_key(test): 0 for test in tests}
    for batch in batches:
        for test in batch[:limit] if limit is not None else batch:
            key = test_key(test)
            if key in counts:
                counts[key] += 1
    return tuple(counts[test_key(test)] for test in tests)


def _deduplicate(tests: Sequence[Test]) -> tuple[list[Test], list[Rejected]]:
    seen: set[str] = set()
    unique: list[Test] = []
    duplicates: list[Rejected] = []
    for test in tests:
        key = test_key(test)
        if key in seen:
            duplicates.append(Rejected(_text(test), "duplicate"))
        else:
            seen.add(key)
            unique.append(test)
    return unique, duplicates


def _text(test: Test) -> str:
    if isinstance(test, AssertTest):
        return test.code
    if isinstance(test, StdioTest):
        return f"<input>\n{test.stdin}</input>\n<output>\n{test.expected}</output>"
    return test.expr


# --- stdio -------------------------------------------------------------------------------------------


def _stdio_tests(reply: str) -> tuple[list[Test], list[Rejected]]:
    tests: list[Test] = []
    rejected: list[Rejected] = []
    for match in _STDIO_BLOCK.finditer(reply):
        stdin, expected, closed = match.group(1), match.group(2), match.group(3)
        if not closed:
            rejected.append(Rejected(match.group(0), "truncated: no </output>"))
        elif not expected.strip():
            rejected.append(Rejected(match.group(0), "empty expected output"))
        else:
            tests.append(StdioTest(_strip_fence(stdin), _strip_fence(expected)))
    opened = reply.count("<input>")
    if opened > len(tests) + len(rejected):
        rejected.append(Rejected(reply[reply.rfind("<input>") :], "truncated or malformed block"))
    return tests, rejected


def _strip_fence(text: str) -> str:
    """Block content, without a code fence the model may have put inside the tags."""
    lines = [line for line in text.strip("\n").split("\n") if not line.strip().startswith("```")]
    return "\n".join(lines).strip("\n") + "\n"


# --- function problems -------------------------------------------------------------------------------


def _function_tests(reply: str, problem: Problem) -> tuple[list[Test], list[Rejected]]:
    entry = _entry_name(problem)
    allowed = _imported_modules(problem.prompt + "\n" + problem.test_setup)
    found = [item for segment in _segments(reply) for item in _asserts_in(segment)]
    banned = _banned_imports(found, allowed) - {entry, "candidate"}
    tests: list[Test] = []
    rejected: list[Rejected] = []
    for text, reason in found:
        if reason is None and _is_import(text):
            outside = _modules_of(_import_node(text)) - allowed
            if outside:
                rejected.append(Rejected(text, f"imports {', '.join(sorted(outside))}, which the problem does not"))
            continue
        reason = reason or _problem_with(text, entry, banned)
        if reason is None:
            tests.append(AssertTest(_renamed(text, entry)))
        else:
            rejected.append(Rejected(text, reason))
    return tests, rejected


def _is_import(text: str) -> bool:
    return text.startswith(("import ", "from "))


def _import_node(text: str) -> ast.Import | ast.ImportFrom:
    node = ast.parse(text).body[0]
    assert isinstance(node, (ast.Import, ast.ImportFrom))
    return node


def _banned_imports(found: Sequence[tuple[str, str | None]], allowed: frozenset[str]) -> frozenset[str]:
    """Names bound by the reply's imports of modules the problem's own code does not import."""
    banned: set[str] = set()
    for text, reason in found:
        if reason is None and _is_import(text):
            node = _import_node(text)
            if _modules_of(node) - allowed:
                banned |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
    return frozenset(banned)


def _entry_name(problem: Problem) -> str:
    """The name tests call: the entry point, or its method name for ``Class.method``."""
    return (problem.entry_point or "candidate").rsplit(".", 1)[-1]


def _segments(reply: str) -> list[str]:
    """The fenced code blocks (an unclosed last fence runs to the end), else the whole reply."""
    blocks = [match.group(1) for match in _FENCE.finditer(reply)]
    return blocks or [reply]


def _asserts_in(segment: str) -> Iterator[tuple[str, str | None]]:
    """``(statement, None)`` for each assert or import found, ``(text, reason)`` for what could not be read."""
    try:
        module = ast.parse(textwrap.dedent(segment))
    except (SyntaxError, ValueError):
        yield from _asserts_line_by_line(segment)
        return
    for node in module.body:
        yield from _asserts_of_node(node)


def _asserts_of_node(node: ast.stmt) -> Iterator[tuple[str, str | None]]:
    if isinstance(node, (ast.Assert, ast.Import, ast.ImportFrom)):
        yield ast.unparse(node), None
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parameters = [a.arg for a in node.args.args]
        for inner in ast.walk(node):
            if isinstance(inner, ast.Assert):
                yield _with_parameter_renamed(inner, parameters), None
    elif isinstance(node, ast.ClassDef):  # unittest.TestCase: asserts and self.assertX calls in methods
        found = []
        for inner in ast.walk(node):
            converted = inner if isinstance(inner, ast.Assert) else _from_unittest(inner)
            if converted is not None and isinstance(inner, (ast.stmt, ast.expr)):
                found.append(((inner.lineno, inner.col_offset), ast.unparse(converted)))
        for _, text in sorted(found):
            yield text, None


def _from_unittest(node: ast.AST) -> ast.Assert | None:
    """``self.assertEqual(a, b)`` and its kin as the plain assert they check; None for anything else."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "self"
    ):
        return None
    args = node.args
    build = _UNITTEST.get((node.func.attr, len(args)))
    if build is None:
        args = args[:-1]  # a trailing message argument
        build = _UNITTEST.get((node.func.attr, len(args)))
    return ast.fix_missing_locations(ast.Assert(build(*args), None)) if build is not None else None


def _compare(op: ast.cmpop) -> Callable[[ast.expr, ast.expr], ast.expr]:
    return lambda left, right: ast.Compare(left, [op], [right])


_UNITTEST: dict[tuple[str, int], Callable[..., ast.expr]] = {
    ("assertEqual", 2): _compare(ast.Eq()),
    ("assertNotEqual", 2): _compare(ast.NotEq()),
    ("assertIn", 2): _compare(ast.In()),
    ("assertNotIn", 2): _compare(ast.NotIn()),
    ("assertIs", 2): _compare(ast.Is()),
    ("assertTrue", 1): lambda value: value,
    ("assertFalse", 1): lambda value: ast.UnaryOp(ast.Not(), value),
    ("assertIsNone", 1): lambda value: ast.Compare(value, [ast.Is()], [ast.Constant(None)]),
}


def _with_parameter_renamed(node: ast.Assert, parameters: Sequence[str]) -> str:
    """The assert, with a ``check(candidate)``'s single parameter spelled ``candidate``."""
    if len(parameters) == 1 and parameters[0] != "candidate":
        renamed = _Rename(parameters[0], "candidate").visit(ast.parse(ast.unparse(node)))
        return ast.unparse(renamed)
    return ast.unparse(node)


def _asserts_line_by_line(segment: str) -> Iterator[tuple[str, str | None]]:
    """For text that does not parse as a whole: each assert grows line by line until it parses."""
    lines = segment.split("\n")
    starts = [i for i, line in enumerate(lines) if _ASSERT_LINE.match(line)]
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(lines)
        yield _first_parsing_prefix(lines[start:end])


def _first_parsing_prefix(lines: Sequence[str]) -> tuple[str, str | None]:
    for stop in range(1, len(lines) + 1):
        text = textwrap.dedent("\n".join(lines[:stop])).strip()
        try:
            module = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        if len(module.body) == 1 and isinstance(module.body[0], ast.Assert):
            return ast.unparse(module.body[0]), None
    return textwrap.dedent("\n".join(lines)).strip(), "does not parse (truncated?)"


def _problem_with(text: str, entry: str, banned: frozenset[str]) -> str | None:
    """Why an assert cannot be a test, or None when it can."""
    node = ast.parse(text).body[0]
    assert isinstance(node, ast.Assert)
    if isinstance(node.test, ast.Constant):
        return "asserts a constant"
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    unsafe = names & _UNSAFE_NAMES
    if unsafe:
        return f"uses {', '.join(sorted(unsafe))}"
    if names & banned:
        return f"uses {', '.join(sorted(names & banned))}, which the problem does not import"
    if not _calls(node, entry):
        return f"does not call {entry}"
    return None


def _calls(node: ast.AST, entry: str) -> bool:
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if isinstance(func, ast.Name) and func.id in (entry, "candidate"):
            return True
        if isinstance(func, ast.Attribute) and func.attr == entry:
            return True
    return False


def _renamed(text: str, entry: str) -> str:
    """``candidate`` spelled as the entry point (when that is a plain name), for readable tests."""
    if not entry.isidentifier() or entry == "candidate":
        return text
    node = ast.parse(text)
    return ast.unparse(_Rename("candidate", entry).visit(node))


class _Rename(ast.NodeTransformer):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name(self.new, node.ctx) if node.id == self.old else node


def _imported_modules(source: str) -> frozenset[str]:
    """Top-level modules a piece of code imports (read line by line: a prompt need not parse)."""
    modules: set[str] = set()
    for line in source.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("import ", "from ")):
            try:
                node = ast.parse(stripped).body[0]
            except (SyntaxError, ValueError, IndexError):
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                modules |= _modules_of(node)
    return frozenset(modules)


def _modules_of(node: ast.Import | ast.ImportFrom) -> set[str]:
    if isinstance(node, ast.Import):
        return {alias.name.split(".")[0] for alias in node.names}
    return {(node.module or "").split(".")[0]}


test_key.__test__ = False  # type: ignore[attr-defined]  # not a pytest test, despite the name
