"""Programs see what the real interpreter (or the benchmark's own grader) would show them, no more."""

from __future__ import annotations

import json

import pytest

from refinelab.problems import CallTest, StdioTest
from refinelab.problems._literal import call_source
from refinelab.problems._livecodebench import PRELUDE
from refinelab.sandbox import RunResult, SandboxWarning, Suite, WorkerPool
from tests.conftest import with_pool

ANNOTATED = "def f(a: List[int]) -> int:\n    return len(a)\n"


def run(code: str, suite: Suite, **options: object) -> RunResult:
    return with_pool(lambda pool: pool.run(code, suite), **options)


def test_annotations_are_evaluated_as_the_interpreter_does() -> None:
    result = run(ANNOTATED, Suite.of([CallTest("f([1, 2])", 2)], entry_point="f"))
    assert result.outcomes[0].verdict == "error"
    assert result.outcomes[0].error_type == "NameError"


def test_the_livecodebench_prelude_offers_what_its_grader_offers() -> None:
    suite = Suite.of([CallTest("f([1, 2])", 2)], entry_point="f", prelude=PRELUDE)
    assert run(ANNOTATED, suite).passed
    stdio = "n = int(input())\nprint(sum(accumulate(range(n))), gcd(12, 18), sys.getrecursionlimit())\n"
    assert run(stdio, Suite.of([StdioTest("4\n", "10 6 50000\n")], kind="stdio", prelude=PRELUDE)).passed


def test_the_prelude_is_not_part_of_the_programs_traceback() -> None:
    suite = Suite.of([CallTest("f(1)", 1)], entry_point="f", prelude=PRELUDE)
    result = run("def f(x):\n    return 1 / 0\n", suite)
    assert result.outcomes[0].error_type == "ZeroDivisionError"
    assert "<prelude>" not in (result.outcomes[0].traceback or "")


WRITES_ITS_CWD = """
import os
def f(i):
    with open(f"out{i}.txt", "w") as handle:
        handle.write(str(i) * 1000)
    for _ in range(20):
        os.listdir(".")
    with open(f"out{i}.txt") as handle:
        return len(handle.read())
"""


@pytest.mark.filterwarnings("ignore::refinelab.sandbox.SandboxWarning")
def test_unsandboxed_workers_each_have_their_own_scratch_directory() -> None:
    suites = [Suite.of([CallTest(f"f({i})", 1000)], entry_point="f") for i in range(1, 9)]

    async def body(pool: WorkerPool) -> list[RunResult]:
        items = [(WRITES_ITS_CWD, suite) for suite in suites for _ in range(12)]
        return await pool.run_items(items, isolate=True)

    with pytest.warns(SandboxWarning):
        results = with_pool(body, workers=2, isolation="none", batch_size=1)
    assert [o.verdict for r in results for o in r.outcomes] == ["pass"] * len(results)


@pytest.mark.filterwarnings("ignore::refinelab.sandbox.SandboxWarning")
@pytest.mark.parametrize("isolation", ["auto", "none"])
def test_every_worker_uses_the_same_string_hash_seed(isolation: str) -> None:
    """Set iteration order decides some answers (ties in ``max(set(s), key=s.count)``)."""
    expected = str(hash_with_seed_zero("brilliant girl")) + "\n"
    suite = Suite.of([StdioTest("", expected)], kind="stdio")

    async def body(pool: WorkerPool) -> list[RunResult]:
        return await pool.run_items([("print(hash('brilliant girl'))", suite)] * 8)

    results = with_pool(body, workers=2, isolation=isolation)
    assert all(r.passed for r in results)


def hash_with_seed_zero(text: str) -> int:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", f"print(hash({text!r}))"],
        env={"PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


RUNS_AS_MAIN = """
import pickle
import sys


class Point:
    def __init__(self, x):
        self.x = x


def main():
    n = int(input())
    again = pickle.loads(pickle.dumps(Point(n)))  # pickle finds Point through sys.modules["__main__"]
    print(again.x, sys.argv, sys.modules["__main__"].main is main)


if __name__ == "__main__":
    main()
"""


@pytest.mark.filterwarnings("ignore::refinelab.sandbox.SandboxWarning")
@pytest.mark.parametrize("isolation", ["auto", "none"])
def test_a_stdio_program_runs_as_main_with_its_own_argv(isolation: str) -> None:
    suite = Suite.of([StdioTest("7\n", "7 ['main.py'] True\n")], kind="stdio")
    result = run(RUNS_AS_MAIN, suite, isolation=isolation, workers=1)
    assert result.outcomes[0].verdict == "pass", result.outcomes[0]


KNOWS_ITS_FILE = """
import os
with open(__file__) as handle:
    own = handle.read()
print(os.path.basename(__file__), os.path.isabs(__file__), os.path.dirname(__file__) == os.getcwd(), __cached__)
print("with open(__file__) as handle" in own)
"""


@pytest.mark.filterwarnings("ignore::refinelab.sandbox.SandboxWarning")
@pytest.mark.parametrize("isolation", ["auto", "none"])
def test_a_stdio_program_has_its_file_as_python_main_py_gives_it(isolation: str) -> None:
    """``python3 main.py`` sets ``__file__`` (absolute since 3.9) to a file holding the program."""
    suite = Suite.of([StdioTest("", "main.py True True None\nTrue\n")], kind="stdio")
    result = run(KNOWS_ITS_FILE, suite, isolation=isolation, workers=1)
    assert result.outcomes[0].verdict == "pass", result.outcomes[0]


CHANGES_ITS_ARGUMENTS = """
def f(xs, table, big, text):
    xs.append(0)
    table["seen"] = True
    return [len(xs), sorted(table), big % 1000, text]
"""


def test_a_call_given_by_its_arguments_runs_as_its_expression_would() -> None:
    args = ([1, 2], {"a": [2.5, float("inf")], "b": None}, 2**70 + 7, "é\n\ud800")
    expected = [3, ["a", "b", "seen"], (2**70 + 7) % 1000, "é\n\ud800"]
    by_args = CallTest("candidate(...)", expected, args=json.dumps(args))
    by_expr = CallTest(call_source(list(args)), expected)
    # The arguments are built afresh for each test: the program's changes do not carry over.
    ran = run(CHANGES_ITS_ARGUMENTS, Suite.of([by_args, by_args, by_expr], entry_point="f"))
    assert [o.verdict for o in ran.outcomes] == ["pass", "pass", "pass"]
    counts = "def f(xs, table):\n    xs.append(0)\n    table['n'] = table.get('n', 0) + 1\n    return [len(xs), table['n']]\n"
    shallow = CallTest("candidate([1], {'m': 1})", [2, 1], args='[[1], {"m": 1}]')  # copied, not read again
    assert run(counts, Suite.of([shallow, shallow, shallow], entry_point="f")).passed
    # The arguments are what runs, not the expression (which only names the test in messages).
    (shown,) = run("def f(x):\n    return x\n", Suite.of([CallTest("f(0)", 5, args="[5]")], entry_point="f")).outcomes
    assert shown.verdict == "pass"
    raising = "def f(x):\n    return 1 // x\n"
    errors = run(raising, Suite.of([CallTest("f(0)", 0, args="[0]"), CallTest("f(0)", 0)], entry_point="f")).outcomes
    assert errors[0].verdict == errors[1].verdict == "error" and errors[0].traceback == errors[1].traceback
    assert errors[0].traceback is not None and "ZeroDivisionError" in errors[0].traceback
    unbound = run("x = 1\n", Suite.of([CallTest("candidate(1)", 1, args="[1]"), CallTest("candidate(1)", 1)]))
    assert [o.message for o in unbound.outcomes] == ["name 'candidate' is not defined"] * 2


def test_values_read_the_arguments_they_are_given() -> None:
    async def body(pool: WorkerPool) -> list[object]:
        setup = "_plain = candidate\ndef candidate(*args):\n    return ['called', _plain(*args)]\n"
        given = ["[[3, 1, 2]]", '[{"k": [1.5]}]']
        return await pool.values(
            "def f(x):\n    return x\n", ["f(0)", "f(1)"], entry_point="f", setup=setup, arguments=given
        )

    # The arguments run, through the candidate the setup made (the expressions only name the inputs).
    assert with_pool(body) == [["called", [3, 1, 2]], ["called", {"k": [1.5]}]]
