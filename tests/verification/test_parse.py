"""Reading generated tests out of messy model replies."""

from __future__ import annotations

import pytest

from refinelab.problems import AssertTest, Problem, StdioTest
from refinelab.verification import GeneratedTests, parse_tests, pooled, test_request
from refinelab.verification._parse import occurrences

PROMPT = 'import math\n\n\ndef add(a: int, b: int) -> int:\n    """Return a + b.\n    >>> add(1, 2)\n    3\n    """\n'
FUNCTION = Problem("T/0", PROMPT, "function", (), (), entry_point="add")
STDIO = Problem("S/0", "Read n and print 2n.", "stdio", (), ())


def codes(found: GeneratedTests) -> list[str]:
    return [t.code for t in found.tests if isinstance(t, AssertTest)]


def reasons(found: GeneratedTests) -> list[str]:
    return [r.reason for r in found.rejected]


def test_several_asserts_in_prose_without_fences() -> None:
    reply = "Sure! Here are some tests:\nassert add(1, 2) == 3\nThis checks a basic case.\nassert add(-1, 1) == 0\nThat's all."
    assert codes(parse_tests(reply, FUNCTION)) == ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"]


def test_check_function_is_unwrapped_and_candidate_renamed() -> None:
    reply = "```python\ndef check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(0, 0) == 0\n\ncheck(add)\n```"
    assert codes(parse_tests(reply, FUNCTION)) == ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]


def test_check_with_another_parameter_name() -> None:
    reply = "```python\ndef check(fn):\n    assert fn(2, 2) == 4\n```"
    assert codes(parse_tests(reply, FUNCTION)) == ["assert add(2, 2) == 4"]


def test_assert_over_several_lines_is_one_test() -> None:
    reply = "```python\nassert add(\n    10,\n    20,\n) == 30\nassert add(1, 1) == 2\n```"
    assert codes(parse_tests(reply, FUNCTION)) == ["assert add(10, 20) == 30", "assert add(1, 1) == 2"]


def test_truncated_last_line_is_dropped_and_recorded() -> None:
    reply = "```python\nassert add(1, 2) == 3\nassert add(4, 5) == 9\nassert add(100, [1, 2"
    found = parse_tests(reply, FUNCTION)
    assert codes(found) == ["assert add(1, 2) == 3", "assert add(4, 5) == 9"]
    assert [(r.text, r.reason) for r in found.rejected] == [("assert add(100, [1, 2", "does not parse (truncated?)")]


def test_multi_line_assert_in_text_that_does_not_parse() -> None:
    reply = "Tests:\nassert add(\n  3, 4) == 7\nand more:\nassert add(0, 1) == 1"
    assert codes(parse_tests(reply, FUNCTION)) == ["assert add(3, 4) == 7", "assert add(0, 1) == 1"]


def test_duplicates_by_syntax_tree_are_dropped() -> None:
    reply = "```python\nassert add(1,2)==3\nassert add(1, 2) == 3  # again\nassert add( 1 , 2 ) == (3)\n```"
    found = parse_tests(reply, FUNCTION)
    assert codes(found) == ["assert add(1, 2) == 3"]
    assert reasons(found) == ["duplicate", "duplicate"]


def test_asserts_not_calling_the_entry_point_are_rejected() -> None:
    found = parse_tests("```python\nassert 1 + 1 == 2\nassert sub(1, 2) == -1\nassert True\n```", FUNCTION)
    assert found.tests == ()
    assert reasons(found) == ["does not call add", "does not call add", "asserts a constant"]


def test_imports_beyond_the_problems_are_rejected_with_what_uses_them() -> None:
    reply = "```python\nimport math\nimport numpy as np\nassert add(1, 1) == math.floor(2.5)\nassert np.sum(add(1, 1)) == 2\n```"
    found = parse_tests(reply, FUNCTION)
    assert codes(found) == ["assert add(1, 1) == math.floor(2.5)"]
    assert reasons(found) == [
        "imports numpy, which the problem does not",
        "uses np, which the problem does not import",
    ]


def test_unsafe_names_are_rejected() -> None:
    found = parse_tests("assert add(1, 1) == eval('2')\nassert __import__('os') and add(1, 1)", FUNCTION)
    assert found.tests == ()
    assert reasons(found) == ["uses eval", "uses __import__"]


def test_several_fenced_blocks_and_raw_kept() -> None:
    reply = "First:\n```python\nassert add(1, 2) == 3\n```\nSecond:\n```\nassert add(2, 3) == 5\n```\n"
    found = parse_tests(reply, FUNCTION)
    assert codes(found) == ["assert add(1, 2) == 3", "assert add(2, 3) == 5"]
    assert found.raw == reply


def test_method_entry_point_calls_are_recognised() -> None:
    problem = Problem(
        "L/1",
        "class Solution:\n    def twoSum(self, nums, target): ...",
        "function",
        (),
        (),
        entry_point="Solution.twoSum",
    )
    found = parse_tests("assert Solution().twoSum([2, 7], 9) == [0, 1]\nassert twoSum([1], 1) == []", problem)
    assert codes(found) == ["assert Solution().twoSum([2, 7], 9) == [0, 1]", "assert twoSum([1], 1) == []"]


def test_stdio_blocks() -> None:
    reply = (
        "Test 1:\n<input>\n3\n</input>\n<output>\n6\n</output>\n"
        "Test 2:\n<input>\n```\n4\n```\n</input>\n<output>\n8\n</output>\n"
        "<input>\n3\n</input>\n<output>\n6\n</output>\n"
        "<input>\n5\n</input>\n<output>\n1"
    )
    found = parse_tests(reply, STDIO)
    assert found.tests == (StdioTest("3\n", "6\n"), StdioTest("4\n", "8\n"))
    assert reasons(found) == ["truncated: no </output>", "duplicate"]


def test_pooled_keeps_first_seen_order_and_limit_per_reply() -> None:
    a = parse_tests("assert add(1, 1) == 2\nassert add(2, 2) == 4\nassert add(3, 3) == 6", FUNCTION).tests
    b = parse_tests("assert add(2,2) == 4\nassert add(5, 5) == 10", FUNCTION).tests
    assert [t.code for t in pooled([a, b]) if isinstance(t, AssertTest)] == [
        "assert add(1, 1) == 2",
        "assert add(2, 2) == 4",
        "assert add(3, 3) == 6",
        "assert add(5, 5) == 10",
    ]
    limited = pooled([a, b], limit=1)
    assert [t.code for t in limited if isinstance(t, AssertTest)] == ["assert add(1, 1) == 2", "assert add(2, 2) == 4"]
    assert occurrences([a, b], pooled([a, b])) == (1, 2, 1, 1)


def test_request_shows_the_signature_and_names_the_entry_point() -> None:
    messages = test_request(FUNCTION, count=7)
    assert [m.role for m in messages] == ["system", "user"]
    assert "def add(a: int, b: int) -> int:" in messages[1].content
    assert "Write 7 distinct tests" in messages[1].content
    assert "assert add(" in messages[1].content
    stdio = test_request(STDIO)[1].content
    assert "<input>" in stdio and "Write 10 distinct tests" in stdio
    with pytest.raises(ValueError, match="count"):
        test_request(FUNCTION, count=0)


def test_a_reply_in_the_requested_format_round_trips() -> None:
    reply = "```python\nassert add(1, 2) == 3\nassert add(-5, 5) == 0\n```"
    assert len(parse_tests(reply, FUNCTION).tests) == 2


def test_generated_tests_as_json() -> None:
    found = parse_tests("assert add(1, 2) == 3\nassert add(1,", FUNCTION)
    assert found.to_json() == {
        "tests": [{"code": "assert add(1, 2) == 3"}],
        "rejected": [{"text": "assert add(1,", "reason": "does not parse (truncated?)"}],
        "raw": "assert add(1, 2) == 3\nassert add(1,",
    }
    assert parse_tests("<input>\n1\n</input><output>\n2\n</output>", STDIO).to_json()["tests"] == [
        {"stdin": "1\n", "expected": "2\n"}
    ]


def test_importing_the_entry_point_from_a_solution_module_is_dropped_not_the_asserts() -> None:
    reply = "```python\nfrom solution import add\n\nassert add(1, 2) == 3\n```"
    found = parse_tests(reply, FUNCTION)
    assert codes(found) == ["assert add(1, 2) == 3"]
    assert reasons(found) == ["imports solution, which the problem does not"]


def test_unittest_classes_become_plain_asserts() -> None:
    reply = (
        "```python\nimport unittest\n\nclass TestAdd(unittest.TestCase):\n"
        "    def test_basic(self):\n        self.assertEqual(add(1, 2), 3)\n        self.assertTrue(add(1, 1) == 2, 'msg')\n"
        "    def test_more(self):\n        self.assertFalse(add(0, 0))\n        assert add(2, 2) == 4\n"
        "        self.assertRaises(TypeError, add, 'a', 1)\n\nunittest.main()\n```"
    )
    found = parse_tests(reply, FUNCTION)
    assert codes(found) == [
        "assert add(1, 2) == 3",
        "assert add(1, 1) == 2",
        "assert not add(0, 0)",
        "assert add(2, 2) == 4",
    ]
    assert reasons(found) == ["imports unittest, which the problem does not"]
