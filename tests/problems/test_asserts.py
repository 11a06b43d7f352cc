from __future__ import annotations

import json

import pytest

from refinelab.problems import AssertTest, CallTest
from refinelab.problems import tests_from_check as from_check
from refinelab.problems import tests_from_statements as from_statements
from refinelab.problems._asserts import without_check_function
from refinelab.problems._literal import call_source, call_source_of_json, to_source


def test_plain_value_asserts_become_call_tests() -> None:
    tests = from_statements("assert f(1) == [1, (2,)]\nassert 'x' == g('y')\nassert True")
    assert tests == [CallTest("f(1)", [1, (2,)]), CallTest("g('y')", "x")]


def test_tolerance_asserts() -> None:
    assert from_statements("assert abs(f(2) - 1.5) < 1e-6") == [CallTest("f(2)", 1.5, atol=1e-6)]
    assert from_statements("assert abs(0.5 - f(2)) <= 0.01") == [CallTest("f(2)", 0.5, atol=0.01)]


def test_other_asserts_stay_as_code() -> None:
    assert from_statements("assert math.isclose(f(1), 2)") == [AssertTest("assert math.isclose(f(1), 2)")]
    assert from_statements("x = 1\nassert f(x) == 1") is None


def test_check_functions() -> None:
    source = (
        "import math\n\ndef check(candidate):\n    assert candidate(1) == 2\n    assert candidate(2) == 3\n\ncheck(f)\n"
    )
    assert from_check(source) == [CallTest("candidate(1)", 2), CallTest("candidate(2)", 3)]
    assert without_check_function(source) == "import math\n"
    looping = "def check(candidate):\n    for i in range(3):\n        assert candidate(i) == i\n"
    assert from_check(looping) is None


def test_argument_sources_survive_any_value() -> None:
    big = 10**5000
    assert eval(to_source(big)) == big
    assert eval(to_source([float("inf"), (1,), {2: {3}}])) == [float("inf"), (1,), {2: {3}}]
    assert call_source([1, "a"]) == "candidate(1, 'a')"


@pytest.mark.parametrize(
    "args",
    [
        [1, -2, 2**53 + 1, 10**2990, 10**3010, -(10**3020)],  # the last two: written in hex (10,000 bits and more)
        [1.5, -0.0, 1e300, 5e-324, float("inf"), float("-inf"), float("nan")],
        ['it\'s "quoted"', "NaN", "Infinity", "0" * 3001, "é\n\t\\", ""],
        [[], {}, {"a": [1, {"b": None}]}, [[True, False], [None]], [[1.25, 2], "x"]],
        [[10**3010, 1], {"k": float("nan")}],
        [{"k": [float("nan")]}],
    ],
)
def test_the_call_written_from_json_is_the_call_written_value_by_value(args: list[object]) -> None:
    text = json.dumps(args)
    assert call_source_of_json(args, text) == call_source(args)
    assert eval(call_source_of_json(args, text), {"candidate": lambda *a: list(a)}) == args or "nan" in text.lower()
