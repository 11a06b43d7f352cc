"""Reading the tests a user gives and the examples a prompt shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from refinelab.errors import InputError, UserError
from refinelab.problems import AssertTest, CallTest, StdioTest
from refinelab.solve import parse_io_pair, parse_tests, read_io_file
from refinelab.solve._task import build_task
from refinelab.solve._tests import prompt_examples

HUMANEVAL_STYLE = '''
def median(l: list):
    """Return median of elements in the list l.
    >>> median([3, 1, 2, 4, 5])
    3
    >>> median([-10, 4, 6, 1000, 10, 20])
    15.0
    """
'''


def _texts(tests: object) -> list[str]:
    return [t.text for t in tests]  # type: ignore[attr-defined]


def test_doctest_and_arrow_examples() -> None:
    prompt = (
        "def eat(a, b):\n"
        '    """Examples:\n'
        "    * eat(5, 6) -> [11, 4]\n"
        "    For eat(1, 1) == [2, 0]\n"
        "    eat(0, 0) returns true\n"
        "    >>> round(eat(2, 2)[0], 1)\n"
        "    4\n"
        "    eat(x, 1) -> 3\n"
        '    """\n'
    )
    assert _texts(prompt_examples(prompt, "eat")) == [
        "round(eat(2, 2)[0], 1) == 4",
        "eat(5, 6) == [11, 4]",
        "eat(1, 1) == [2, 0]",
        "eat(0, 0) == True",
    ]


def test_a_recurrence_is_not_an_example() -> None:
    prompt = "def tri(n):\n    tri(1) = 3\n    tri(n) = 1 + n / 2, if n is even.\n    tri(3) == [1, 3, 2, 8]\n"
    assert _texts(prompt_examples(prompt, "tri")) == ["tri(3) == [1, 3, 2, 8]"]
    assert _texts(prompt_examples('def solve(s):\n    solve("ab") = "AB"\n', "solve")) == ["solve('ab') == 'AB'"]


def test_a_given_test_overrides_a_wrong_docstring_example() -> None:
    task = build_task(HUMANEVAL_STYLE, ["median([-10, 4, 6, 1000, 10, 20]) == 8.0"], (), None, None)
    assert [(t.text, t.origin) for t in task.tests.tests] == [
        ("median([-10, 4, 6, 1000, 10, 20]) == 8.0", "given"),
        ("median([3, 1, 2, 4, 5]) == 3", "docstring"),
    ]
    assert task.problem.entry_point == "median" and task.problem.kind == "function"
    floats = [t.test for t in build_task(HUMANEVAL_STYLE, (), (), None, None).tests.tests]
    assert floats[1] == CallTest("median([-10, 4, 6, 1000, 10, 20])", 15.0, atol=1e-6)


def test_assertions_and_pytest_style_files(tmp_path: Path) -> None:
    assert parse_tests("fib(1) == [0]", "--test").tests[0].test == CallTest("fib(1)", [0])
    source = (
        "import math\nimport pytest\nfrom solution import fib\n\n"
        "def helper():\n    return math.floor(1.5)\n\n"
        "assert fib(2) == [0, 1]\n\n"
        "def test_len():\n    assert len(fib(5)) == 5\n"
    )
    found = parse_tests(source, "t.py")
    assert found.setup == "import math\ndef helper():\n    return math.floor(1.5)"
    assert found.tests[0].test == CallTest("fib(2)", [0, 1])
    assert found.tests[1].test == AssertTest("def test_len():\n    assert len(fib(5)) == 5\ntest_len()")
    with pytest.raises(InputError, match=r"t\.py:2: not Python"):
        parse_tests("x = 1\nassert (\n", "t.py")
    with pytest.raises(InputError, match="no tests found"):
        parse_tests("x = 1\n", "t.py")


def test_io_pairs_and_files(tmp_path: Path) -> None:
    assert parse_io_pair("3\\n1 2 3=>6", "--io") == StdioTest("3\n1 2 3\n", "6")
    with pytest.raises(UserError, match="expected INPUT=>OUTPUT"):
        parse_io_pair("3 6", "--io")
    jsonl = tmp_path / "pairs.jsonl"
    jsonl.write_text('{"input": "1 2", "output": "3"}\n{"input": "2 2\\n", "output": "4"}\n')
    assert read_io_file(jsonl) == [StdioTest("1 2\n", "3"), StdioTest("2 2\n", "4")]
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"input": "1 2", "output": "3"}\n{"input": 5}\n')
    with pytest.raises(InputError, match=r"broken.jsonl:2: field 'input'"):
        read_io_file(broken)


@pytest.mark.parametrize(
    ("prompt", "tests", "io", "kind"),
    [
        ("Return the square.\ndef square(x):", [], [], "function"),
        ("Print the sum of the numbers on standard input.", [], [], "stdio"),
        ("Sum two numbers.", [], [("1 2", "3")], "stdio"),
        ("Sum two numbers.", ["add(1, 2) == 3"], [], "function"),
        ("Return the first n Fibonacci numbers.", [], [], "function"),
    ],
)
def test_kind_detection(prompt: str, tests: list[str], io: list[tuple[str, str]], kind: str) -> None:
    assert build_task(prompt, tests, io, None, None).problem.kind == kind


def test_entry_point_from_the_tests_when_the_prompt_has_no_signature() -> None:
    task = build_task("Add two numbers.", ["add(1, 2) == 3"], (), None, None)
    assert task.problem.entry_point == "add"
    assert "The program must pass these tests:\nassert add(1, 2) == 3" in task.problem.prompt
