from __future__ import annotations

from refinelab.problems import AssertTest, CallTest
from refinelab.problems import tests_from_check as from_check
from refinelab.problems import tests_from_statements as from_statements
from refinelab.problems._asserts import without_check_function
from refinelab.problems._literal import call_source, to_source


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
