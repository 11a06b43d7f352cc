"""The examples a prompt shows, read as tests: one reader for experiments (the HumanEval loaders) and
``solve``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from refinelab.problems import CallTest, load_humaneval, prompt_examples
from refinelab.solve._task import build_task


def _texts(tests: Sequence[CallTest]) -> list[str]:
    return [f"{t.expr} == {t.expected!r}" for t in tests]


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


def test_examples_written_as_prose_and_as_input_output_blocks() -> None:
    # the forms of HumanEval's 18 prompts whose examples were not read before, and LeetCode's
    prompt = (
        "def f(lst, k=0):\n"
        "    For lst = [1,2,3], k = 2, the sum is 6 so the output should be 14.\n"
        "    For lst = [], the result should be 0\n"
        "    For x = [5] the output should be 1\n"
        "    Example 1:\n        Input: lst = [4, 5], k = 1\n        Output: 9 # 4 + 5\n"
        "    Example 2:\n        Input: [7]\n        Output: 7\n"
        "    Example 3:\n        Input:\n            lst : [1]\n            k : 3\n        Output:\n            (1, 2)\n"
        "    Example 4:\n        Input:\n            lst : [6]\n            bucket : 4\n        Output: 5\n"
        "    Example 5:\n        Input: k = 1, data = [3]\n        Output: 4\n"
        "    f([2])   # returns 'two'\n"
        "    f([3]) # => 'No' (three is odd)\n"
        "    f([4]) -> 19 - 5 - 6 = 8\n"
        "    f([5]) ==> ('five')\n"
    )
    assert _texts(prompt_examples(prompt, "f")) == [
        "f([2]) == 'two'",
        "f([3]) == 'No'",
        "f([4]) == 8",
        "f([1, 2, 3], 2) == 14",
        "f([]) == 0",
        "f([4, 5], 1) == 9",
        "f([7]) == 7",
        "f([1], 3) == (1, 2)",
        "f([6], 4) == 5",
    ]  # x is not a parameter, nor is data, and k is out of place; ('five') is a string to Python and a
    # tuple to its author: all left out


def test_a_doctest_call_that_shows_nothing_returned_none() -> None:
    prompt = 'def longest(xs):\n    """\n    >>> longest([])\n\n    >>> longest(["a"])\n    \'a\'\n    >>> print(longest([]))\n    """\n'
    assert _texts(prompt_examples(prompt, "longest")) == ["longest([]) == None", "longest(['a']) == 'a'"]


def test_answers_and_calls_written_over_several_lines() -> None:
    prompt = (
        "def odd_count(lst):\n"
        '    """\n'
        "    >>> odd_count(['3', '1'])\n"
        '    ["the number 1",\n'
        '     "the number 8"]\n'
        '    """\n\n'
        "def get_row(lst, x):\n"
        "    get_row([\n"
        "      [1,2,3],\n"
        "      [1,2,1]\n"
        "    ], 1) == [(0, 0), (1, 2)]\n"
        "    get_row([], 1) == []\n"
    )
    assert _texts(prompt_examples(prompt, "odd_count")) == ["odd_count(['3', '1']) == ['the number 1', 'the number 8']"]
    assert _texts(prompt_examples(prompt, "get_row")) == [
        "get_row([[1, 2, 3], [1, 2, 1]], 1) == [(0, 0), (1, 2)]",
        "get_row([], 1) == []",
    ]


def test_humaneval_visible_tests_are_what_solve_reads_from_the_same_prompt() -> None:
    """One reader: ``run`` (the loader) and ``solve`` give each HumanEval problem the same examples, except
    where HumanEval's own tests contradict the prompt (the loader's errata, which only it can know)."""
    problems = load_humaneval()
    differ = []
    for problem in problems:
        solve = build_task(problem.prompt, (), (), None, None).tests.tests
        if [t.test for t in solve] != list(problem.visible_tests):
            differ.append(problem.id)
    assert differ == ["HumanEval/47", "HumanEval/116"]
    assert sum(len(p.visible_tests) for p in problems) >= 447
    assert sum(1 for p in problems if p.visible_tests) == 156


def test_humaneval_examples_its_own_tests_contradict_are_corrected() -> None:
    found = {p.id: p.visible_tests for p in load_humaneval()}
    assert CallTest("median([-10, 4, 6, 1000, 10, 20])", 8.0, atol=1e-6) in found["HumanEval/47"]
    assert CallTest("sort_array([1, 5, 2, 3, 4])", [1, 2, 4, 3, 5]) in found["HumanEval/116"]
    assert len(found["HumanEval/116"]) == 2


def test_against_the_published_split_only_the_documented_problems_lack_visible_tests(shared_data: Path) -> None:
    """LLMDebugger's ``given_tests`` cover every problem; the 8 HumanEval prompts with no readable example
    are the ones docs/problems.md explains."""
    split = load_humaneval(shared_data / "benchmarks" / "humaneval-visible-tests.jsonl.gz")
    assert all(p.visible_tests for p in split)
    ours = [p.id for p in load_humaneval() if not p.visible_tests]
    assert ours == [f"HumanEval/{n}" for n in (38, 41, 50, 80, 83, 105, 130, 160)]
    documented = (Path(__file__).parents[2] / "docs" / "problems.md").read_text(encoding="utf-8")
    assert all(problem in documented for problem in ours)


def test_a_prompt_read_twice_gives_the_same_tests_in_a_list_of_its_own() -> None:
    """Loading HumanEval+ reads each prompt twice, the second time from a cache: a caller that changes the
    list it got must not change what the next caller gets."""
    from refinelab.problems._humaneval import docstring_tests

    prompt = 'def add(a, b):\n    """Add.\n    >>> add(1, 2)\n    3\n    """\n'
    first = docstring_tests(prompt, "add", "HumanEval/x")
    first.append(CallTest("add(0, 0)", 0))
    second = docstring_tests(prompt, "add", "HumanEval/x")
    assert second == [CallTest("add(1, 2)", 3)]
    assert second is not first
