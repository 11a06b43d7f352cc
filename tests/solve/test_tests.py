"""Reading the tests a user gives and the examples a prompt shows."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from refinelab.errors import InputError, UserError
from refinelab.problems import AssertTest, CallTest, StdioTest, Test, prompt_examples
from refinelab.sandbox import Suite
from refinelab.solve import parse_given_tests, parse_io_pair, read_io_file
from refinelab.solve._task import build_task
from refinelab.solve._tests import GivenTest, describe
from refinelab.testing import FakeSandbox

HUMANEVAL_STYLE = '''
def median(l: list):
    """Return median of elements in the list l.
    >>> median([3, 1, 2, 4, 5])
    3
    >>> median([-10, 4, 6, 1000, 10, 20])
    15.0
    """
'''


def _texts(tests: Sequence[GivenTest | Test]) -> list[str]:
    return [t.text if isinstance(t, GivenTest) else describe(t) for t in tests]


def test_an_example_in_a_one_line_docstring_of_the_signature() -> None:
    task = build_task("Add two integers.", (), (), None, 'def add(a: int, b: int) -> int:\n    """add(2, 3) == 5"""\n')
    assert _texts(task.tests.tests) == ["add(2, 3) == 5"]


def test_examples_of_a_misnamed_function_and_of_a_method() -> None:
    prompt = (
        'def numerical_letter_grade(grades):\n    """Example:\n    grade_equation([4.0, 3]) ==> ["A+", "B"]\n    """\n'
    )
    assert _texts(prompt_examples(prompt, "numerical_letter_grade")) == [
        "numerical_letter_grade([4.0, 3]) == ['A+', 'B']"
    ]
    statement = "Return the indices.\nExample 1:\nInput: nums = [2,7,11,15], target = 9\nOutput: [0,1]\n"
    signature = "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        "
    task = build_task(statement, (), (), None, signature)
    assert task.problem.entry_point == "Solution.twoSum"
    assert _texts(task.tests.tests) == ["Solution().twoSum([2, 7, 11, 15], 9) == [0, 1]"]


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
    assert parse_given_tests("fib(1) == [0]", "--test").tests[0].test == CallTest("fib(1)", [0])
    source = (
        "import math\nimport pytest\nfrom solution import fib\n\n"
        "def helper():\n    return math.floor(1.5)\n\n"
        "assert fib(2) == [0, 1]\n\n"
        "def test_len():\n    assert len(fib(5)) == 5\n"
    )
    found = parse_given_tests(source, "t.py")
    assert found.setup == "import math\ndef helper():\n    return math.floor(1.5)"
    assert found.tests[0].test == CallTest("fib(2)", [0, 1])
    assert found.tests[1].text == "def test_len():\n    assert len(fib(5)) == 5\ntest_len()"
    assert isinstance(found.tests[1].test, AssertTest) and "the left side is" in found.tests[1].test.code
    with pytest.raises(InputError, match=r"t\.py:2: not Python"):
        parse_given_tests("x = 1\nassert (\n", "t.py")
    with pytest.raises(InputError, match="no tests found"):
        parse_given_tests("x = 1\n", "t.py")


PYTEST_FILE = """
import pytest
from solution import fib

CASES = [(3, [0, 1, 1]), pytest.param(4, [0, 1, 1, 2], id="four")]


@pytest.fixture
def unused():
    return 1


@pytest.mark.parametrize("n, expected", CASES)
@pytest.mark.parametrize("scale", [1])
def test_cases(n, expected, scale):
    assert fib(n * scale) == expected


@pytest.mark.parametrize("n", [0, 2])
def test_length(n):
    assert len(fib(n)) == n


class TestFib:
    def setup_method(self, method):
        self.five = fib(5)

    def test_five(self):
        assert self.five == [0, 1, 1, 2, 3]


def test_raises_and_approx():
    assert sum(fib(3)) / 2 == pytest.approx(1.0)
    with pytest.raises(TypeError, match="str"):
        fib("x")


@pytest.mark.skip(reason="not yet")
def test_skipped():
    assert False


@pytest.mark.xfail
def test_known_bug():
    assert fib(-1) == "?"
"""

FIB = "def fib(n):\n    out, a, b = [], 0, 1\n    for _ in range(n):\n        out.append(a)\n        a, b = b, a + b\n    return out\n"


def test_a_pytest_file_runs_without_pytest() -> None:
    found = parse_given_tests(PYTEST_FILE, "test_fib.py")
    assert [t.text.splitlines()[-1] for t in found.tests] == [
        "test_cases(n=3, expected=[0, 1, 1], scale=1)",
        "test_cases(n=4, expected=[0, 1, 1, 2], scale=1)",
        "test_length(n=0)",
        "test_length(n=2)",
        "instance.test_five()",
        "test_raises_and_approx()",
    ]  # skip and xfail are left out
    suite = Suite.of([t.test for t in found.tests], entry_point="fib", setup=found.setup)
    assert asyncio.run(FakeSandbox().run(FIB, suite)).passed
    wrong = asyncio.run(FakeSandbox().run(FIB.replace("return out", "return out[:3]"), suite))
    assert [o.passed for o in wrong.outcomes] == [True, False, True, True, False, True]
    assert wrong.outcomes[1].message == "fib(n * scale) == expected: the left side is [0, 1, 1]"


def test_a_pytest_fixture_is_a_user_error_naming_the_line() -> None:
    with pytest.raises(InputError, match=r"t\.py:4: test_files takes tmp_path: pytest fixtures cannot be provided"):
        parse_given_tests("import pytest\n\n\ndef test_files(tmp_path):\n    assert tmp_path\n", "t.py")
    with pytest.raises(InputError, match=r"t\.py:1: parametrize's cases must be a list"):
        parse_given_tests("@pytest.mark.parametrize('n', make())\ndef test_n(n):\n    assert n\n", "t.py")


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


def test_an_mbpp_prompt_names_its_function_in_the_assert_it_shows() -> None:
    prompt = (
        "Write a function to find the minimum cost path.\nYour code should pass this test:\n"
        "assert min_cost([[1, 2], [4, 8]], 1, 1) == 9\n"
    )
    task = build_task(prompt, (), (), None, None)
    assert task.problem.entry_point == "min_cost"
    assert [(t.text, t.origin) for t in task.tests.tests] == [("min_cost([[1, 2], [4, 8]], 1, 1) == 9", "docstring")]
    assert build_task("Write f.\nassert (f(1)\n", (), (), None, None).problem.entry_point is None
