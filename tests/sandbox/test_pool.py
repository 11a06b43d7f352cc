"""Sandbox behaviour: verdicts, limits, stdin, batching, isolation level."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from fractions import Fraction

import pytest

from refinelab.problems import AssertTest, CallTest, StdioTest, Test
from refinelab.sandbox import Item, Limits, RunResult, SandboxWarning, Suite, WorkerPool
from tests.conftest import with_pool
from tests.sandbox.processes import outliving, processes_with

ADD = "def add(a, b):\n    return a + b\n"


def run(code: str, tests: Sequence[Test], limits: Limits | None = None, **suite: object) -> RunResult:
    return with_pool(lambda pool: pool.run(code, Suite.of(tests, **suite), limits=limits))  # type: ignore[arg-type]


def verdicts(result: RunResult) -> list[str]:
    return [o.verdict for o in result.outcomes]


def test_call_tests_pass_and_fail_with_expected_and_actual() -> None:
    result = run(ADD, [CallTest("add(1, 2)", 3), CallTest("candidate(2, 2)", 5)], kind="function", entry_point="add")
    assert verdicts(result) == ["pass", "fail"]
    failure = result.outcomes[1]
    assert (failure.expected, failure.actual) == ("5", "4")
    assert "candidate(2, 2)" in failure.message
    assert not result.passed and result.pass_count == 1


def test_assert_tests_and_setup_code() -> None:
    tests = [AssertTest("assert add(1, 1) == TWO"), AssertTest("assert add(1, 1) == 3")]
    result = run(ADD, tests, kind="function", entry_point="add", setup="TWO = 2")
    assert verdicts(result) == ["pass", "error"]
    assert result.outcomes[1].error_type == "AssertionError"


def test_errors_carry_the_type_and_a_traceback_of_the_candidate_only() -> None:
    code = "def f(x):\n    return helper(x)\n\ndef helper(x):\n    return 1 / x\n"
    result = run(code, [CallTest("f(0)", 1)], kind="function", entry_point="f")
    outcome = result.outcomes[0]
    assert outcome.verdict == "error" and outcome.error_type == "ZeroDivisionError"
    assert outcome.traceback is not None
    assert 'File "<candidate>", line 5, in helper' in outcome.traceback
    assert "_worker" not in outcome.traceback


def test_a_program_that_does_not_load_fails_every_test() -> None:
    result = run("def f(:\n", [CallTest("f()", 1), CallTest("f()", 2)], kind="function", entry_point="f")
    assert verdicts(result) == ["error", "error"]
    assert result.outcomes[0].error_type == "SyntaxError"


def test_missing_entry_point_is_an_error_not_a_crash() -> None:
    result = run("def g():\n    return 1\n", [CallTest("candidate()", 1)], kind="function", entry_point="f")
    assert verdicts(result) == ["error"]
    assert result.outcomes[0].error_type == "NameError"


def test_class_method_entry_points() -> None:
    code = "class Solution:\n    def twice(self, x):\n        return 2 * x\n"
    result = run(code, [CallTest("candidate(4)", 8)], kind="function", entry_point="Solution.twice")
    assert result.passed


def test_timeout_is_judged_per_test_and_later_tests_are_skipped() -> None:
    code = "def f(x):\n    while x:\n        pass\n    return x\n"
    tests = [CallTest("f(0)", 0), CallTest("f(1)", 1), CallTest("f(0)", 0)]
    result = run(code, tests, kind="function", entry_point="f", limits=Limits(cpu_seconds=0.3))
    assert verdicts(result) == ["pass", "timeout", "skipped"]


def test_sleeping_is_caught_by_the_wall_clock_backstop() -> None:
    code = "import time\ndef f():\n    time.sleep(30)\n"
    result = run(
        code, [CallTest("f()", None)], kind="function", entry_point="f", limits=Limits(cpu_seconds=0.2, wall_factor=2)
    )
    assert verdicts(result) == ["timeout"]


def test_a_crash_on_one_test_does_not_lose_the_others() -> None:
    code = "import os\ndef f(x):\n    if x == 1:\n        os._exit(3)\n    return x\n"
    tests = [CallTest("f(0)", 0), CallTest("f(1)", 1), CallTest("f(2)", 2)]
    result = run(code, tests, kind="function", entry_point="f")
    assert verdicts(result) == ["pass", "crashed", "pass"]


def test_memory_limit() -> None:
    code = "def f():\n    return len(bytearray(512 * 1024 * 1024))\n"
    limits = Limits(memory_bytes=128 * 1024 * 1024)
    result = run(code, [CallTest("f()", 512 * 1024 * 1024)], kind="function", entry_point="f", limits=limits)
    assert verdicts(result) == ["memory"]


def test_output_limit() -> None:
    code = "def f():\n    for _ in range(100000):\n        print('x' * 100)\n    return 1\n"
    limits = Limits(output_bytes=64 * 1024)
    result = run(code, [CallTest("f()", 1)], kind="function", entry_point="f", limits=limits)
    assert verdicts(result) == ["output_limit"]


def test_a_stdio_program_with_a_large_correct_answer_passes() -> None:
    """A 5 MB answer (CodeContests and LiveCodeBench have such) is judged, not cut at ``output_bytes``."""
    count = 700_000
    expected = "\n".join(map(str, range(count))) + "\n"
    assert len(expected) > 4 * Limits().output_bytes
    code = "n = int(input())\nprint('\\n'.join(map(str, range(n))))\n"
    result = run(code, [StdioTest(f"{count}\n", expected)], kind="stdio")
    assert verdicts(result) == ["pass"]


def test_a_stdio_program_over_its_answer_cap_or_flooding_stderr_hits_the_output_limit() -> None:
    limits = Limits(output_bytes=64 * 1024, stdio_output_bytes=1024 * 1024)
    flood_stdout = "import sys\nfor _ in range(20_000):\n    sys.stdout.write('x' * 100)\n"
    flood_stderr = "import sys\nfor _ in range(2_000):\n    sys.stderr.write('x' * 100)\nprint(1)\n"
    fits = "import sys\nfor _ in range(2_000):\n    sys.stdout.write('x' * 100)\n"  # 200 kB: over output_bytes
    tests = [StdioTest("", "x" * 200_000)]
    assert [verdicts(run(code, tests, kind="stdio", limits=limits)) for code in (flood_stdout, flood_stderr, fits)] == [
        ["output_limit"],
        ["output_limit"],
        ["pass"],
    ]


@pytest.mark.parametrize(
    "program",
    [
        "import sys\ndata = sys.stdin.buffer.read().split()\nprint(sum(map(int, data)))\n",
        "import sys\ntotal = 0\nfor line in sys.stdin:\n    total += sum(map(int, line.split()))\nprint(total)\n",
        "print(sum(map(int, open(0).read().split())))\n",
        "n = int(input())\nprint(n + sum(map(int, input().split())))\n",
    ],
)
def test_stdin_is_a_real_file_descriptor(program: str) -> None:
    result = run(program, [StdioTest("1\n2 3\n", "6\n"), StdioTest("10\n0\n", "10")], kind="stdio")
    assert result.passed, result.outcomes


def test_stdio_judging_and_exit_status() -> None:
    tests = [StdioTest("", "hello\n")]
    assert run("print('hello')\nimport sys\nsys.exit(0)\n", tests, kind="stdio").passed
    assert run("print('hello ')\nexit()\n", tests, kind="stdio").passed
    failed = run("print('bye')\n", tests, kind="stdio").outcomes[0]
    assert (failed.verdict, failed.actual) == ("fail", "bye\n")
    assert verdicts(run("print('hello')\nraise SystemExit(2)\n", tests, kind="stdio")) == ["error"]


def test_batched_programs_do_not_see_each_others_changes() -> None:
    programs = [
        "import builtins, math\nbuiltins.len = lambda x: 7\nmath.pi = 3\ndef f():\n    return len([1])\n",
        "import math\ndef f():\n    return len([1]), math.pi > 3.1\n",
        "import os\nos.environ['X'] = '1'\nos.chdir('/')\ndef f():\n    return 1\n",
        "import os\ndef f():\n    return os.environ.get('X'), os.getcwd() != '/'\n",
    ]
    suite = Suite.of([CallTest("f()", None)], entry_point="f")
    results = with_pool(lambda pool: pool.run_items([(p, suite) for p in programs]))
    values = [r.outcomes[0].actual for r in results]
    assert values[1] == "(1, True)"
    assert values[3] == "(None, True)"


def test_a_program_that_leaves_a_thread_running_gets_the_next_program_a_fresh_process() -> None:
    programs = [
        "import threading, time\nthreading.Thread(target=time.sleep, args=(20,), daemon=True).start()\n"
        "print('first')\ndef f():\n    return 1\n",
        "import threading\nprint('second')\ndef f():\n    return threading.active_count()\n",
    ]
    suite = Suite.of([CallTest("f()", 1)], entry_point="f")
    results = with_pool(lambda pool: pool.run_items([(p, suite) for p in programs]))
    assert [(r.passed, r.output) for r in results] == [(True, "first\n"), (True, "second\n")]


def test_results_keep_item_order_across_interleaved_batches() -> None:
    """Every item is told apart by its result: function programs return their own index, pass or fail
    by index, and have 1 to 4 tests by index; stdio programs (run in batches of their own) are mixed
    in. A result given to the wrong item shows (a pass on every item would not: shuffled passes look
    the same)."""
    items: list[Item] = []
    for i in range(40):
        if i % 8 == 7:
            items.append((f"print({i})\n", Suite.of([StdioTest("", f"{i if i % 16 == 7 else -1}\n")], kind="stdio")))
        else:
            test = CallTest("f()", i if i % 3 == 0 else -1)
            items.append((f"def f():\n    return {i}\n", Suite.of([test] * (1 + i % 4), entry_point="f")))
    results = with_pool(lambda pool: pool.run_items(items), batch_size=3)
    stdio_verdict = ["pass" if i % 16 == 7 else "fail" for i in range(40)]
    expected = [stdio_verdict[i] if i % 8 == 7 else "pass" if i % 3 == 0 else "fail" for i in range(40)]
    assert [r.outcomes[0].verdict for r in results] == expected
    assert [len(r.outcomes) for r in results] == [1 if i % 8 == 7 else 1 + i % 4 for i in range(40)]
    failed = [i for i in range(40) if expected[i] == "fail"]
    assert [(results[i].outcomes[0].actual or "").strip() for i in failed] == [str(i) for i in failed]


def test_each_batched_program_gets_its_own_printed_output() -> None:
    suite = Suite.of([CallTest("f()", 0)], entry_point="f")
    items = [(f"print('item {i}')\ndef f():\n    return 0\n", suite) for i in range(24)]
    results = with_pool(lambda pool: pool.run_items(items), workers=1, batch_size=24)
    assert [r.output for r in results] == [f"item {i}\n" for i in range(24)]


def test_isolation_level_is_recorded_in_every_result() -> None:
    result = run(ADD, [CallTest("add(1, 2)", 3)], kind="function", entry_point="add")
    assert result.isolation == ("bwrap-uid" if os.geteuid() == 0 else "bwrap")  # root: private uids


def test_unsandboxed_mode_warns_loudly_and_says_so_in_results() -> None:
    with pytest.warns(SandboxWarning, match="UNSANDBOXED"):
        result = with_pool(
            lambda pool: pool.run(ADD, Suite.of([CallTest("add(1, 2)", 3)], entry_point="add")), isolation="none"
        )
    assert result.isolation == "none" and result.passed


def test_values_of_a_trusted_program() -> None:
    values = with_pool(
        lambda pool: pool.values("def f(x):\n    return [x, (x,)]\n", ["f(1)", "f(1/0)"], entry_point="f")
    )
    assert values[0] == [1, (1,)]
    assert getattr(values[1], "verdict", None) == "error"


def test_values_as_the_worker_encoded_them_for_a_row_of_values_and_a_row_with_a_failure() -> None:
    """What the host stores of a reference's values, not decoded: a tuple, a set, an integer past 2**53 and a
    dict as ``codec.encode`` writes them, whether every test returned a value (the row crosses as text) or not."""
    from refinelab.sandbox._worker.codec import encode

    program = "def f(x):\n    return [x, (x,), {x}, 2**60 + x, {'k': x}] if x else 1 / x\n"
    expected = encode([1, (1,), {1}, 2**60 + 1, {"k": 1}])

    async def body(pool: WorkerPool) -> tuple[list[object], list[object]]:
        every = await pool.values(program, ["f(1)", "f(2)"], entry_point="f", encoded=True)
        failing = await pool.values(program, ["f(1)", "f(0)"], entry_point="f", encoded=True)
        return every, failing

    every, failing = with_pool(body)
    assert every[0] == expected and every[1] == encode([2, (2,), {2}, 2**60 + 2, {"k": 2}])
    assert failing[0] == expected and getattr(failing[1], "verdict", None) == "error"


def test_no_tests_means_no_pass() -> None:
    result = run(ADD, [], kind="function", entry_point="add")
    assert result.outcomes == () and not result.passed


def test_allowed_packages_are_importable_and_others_are_not() -> None:
    code = "def f():\n    import numpy\n    return int(numpy.arange(4).sum())\n"
    tests = [CallTest("f()", 6)]
    assert run(code, tests, kind="function", entry_point="f").outcomes[0].error_type == "ModuleNotFoundError"
    allowed = with_pool(lambda pool: pool.run(code, Suite.of(tests, entry_point="f")), packages=["numpy"])
    assert allowed.passed, allowed.outcomes


RETURNS = """
import numpy as np
from decimal import Decimal
from fractions import Fraction


def f(kind):
    return {
        "int64": lambda: np.int64(3), "bool_": lambda: np.bool_(True), "float64": lambda: np.float64(0.5),
        "decimal": lambda: Decimal("0.5"), "fraction": lambda: Fraction(1, 3), "generator": lambda: (x for x in [1, 2]),
        "keys": lambda: {1: 2, 3: 4}.keys(),
    }[kind]()
"""


def test_numpy_scalars_decimals_fractions_and_iterables_are_judged_as_the_interpreter_judges_them() -> None:
    calls = [("int64", 3), ("bool_", True), ("float64", 0.5), ("decimal", 0.5), ("fraction", Fraction(1, 3))]
    asserts = [
        "assert candidate('int64') == 3 and candidate('bool_') == True",
        "assert list(candidate('generator')) == [1, 2] and candidate('generator') != [1, 2]",
        "assert candidate('keys') == {1, 3} and list(candidate('keys')) == [1, 3]",
        "assert candidate('decimal') == Decimal('0.5') and candidate('fraction') == Fraction(2, 6)",
    ]
    tests = [CallTest(f"f({kind!r})", value) for kind, value in calls] + [AssertTest(a) for a in asserts]
    suite = Suite.of(tests, entry_point="f", setup="from decimal import Decimal\nfrom fractions import Fraction")
    result = with_pool(lambda pool: pool.run(RETURNS, suite), packages=["numpy"])
    assert verdicts(result) == ["pass"] * len(tests), result.outcomes


def test_scaled_limits_follow_the_reference_time() -> None:
    assert Limits().scaled(0.1).cpu_seconds == 1.0
    assert Limits().scaled(2.0).cpu_seconds == 8.0
    assert Limits(cpu_seconds=2).wall_seconds == 7.0


def test_worker_pool_defaults_to_the_number_of_cores() -> None:
    import os

    assert WorkerPool().size == len(os.sched_getaffinity(0))


def test_a_pool_that_was_never_started_or_is_closed_says_so_instead_of_waiting_for_ever() -> None:
    suite = Suite.of([CallTest("f(2)", 4)], entry_point="f")

    async def main() -> None:
        pool = WorkerPool(workers=1)
        with pytest.raises(RuntimeError, match="not running"):
            await asyncio.wait_for(pool.run(SQUARE, suite), timeout=600)  # a bound: the failure was a hang
        async with pool:
            assert (await pool.run(SQUARE, suite)).passed
        with pytest.raises(RuntimeError, match="not running"):
            await asyncio.wait_for(pool.run(SQUARE, suite), timeout=600)

    asyncio.run(main())


SQUARE = "def f(x):\n    return x * x\n"


def test_each_program_of_a_batch_is_metered_for_what_it_used_not_an_even_share() -> None:
    """Programs batched in one job run in turn in one child; the worker measures each program's steps, so
    the slow one's meter holds its CPU and the quick ones' nearly nothing (an even share had hidden a
    program a hundred times slower than the rest behind them: ``_scoring.Pace``)."""
    from refinelab.sandbox._queue import Meter, Placement

    suite = Suite.of([CallTest("f(1)", 1), CallTest("f(2)", 2)], entry_point="f")
    quick = "def f(x):\n    return x\n"
    spin = "def f(x):\n    import time\n    end = time.process_time() + 0.15\n    while time.process_time() < end:\n"
    codes = [quick, spin + "        pass\n    return x\n", quick + "\n"]

    async def body(pool: WorkerPool) -> tuple[list[float], float]:
        meters = [Meter() for _ in codes]
        limits = pool.limits
        units = [  # queued in one turn of the loop: one job for all three (a single worker)
            pool._submit(code, suite.inputs(limits), limits, False, Placement(meter=meter))
            for code, meter in zip(codes, meters)
        ]
        await asyncio.gather(*(unit.done for unit in units))
        return [meter.cpu for meter in meters], pool.stats["child_cpu"]

    (first, slow, last), job = with_pool(body, workers=1)
    assert slow >= 0.3 and first < 0.05 and last < 0.05  # two tests of 0.15 CPU s each
    assert first + slow + last == pytest.approx(job, abs=0.05)  # the job's CPU, all of it metered


def test_what_a_worker_says_each_program_used_is_taken_only_as_numbers_within_the_jobs_cpu() -> None:
    from refinelab.sandbox._pool import _program_cpu

    assert _program_cpu([0.25, 0.5], 2, 1.0) == [0.25, 0.5]
    assert _program_cpu(["0.5", float("nan"), -1.0, float("inf"), True, 0.5], 6, 1.0) == [0, 0, 0, 0, 0, 0.5]
    assert _program_cpu([3.0, 1.0], 2, 2.0) == pytest.approx([4 / 3, 2 / 3])  # each at most the job, then scaled
    assert _program_cpu([0.5], 2, 1.0) == [0.0, 0.0] and _program_cpu(None, 1, 1.0) == [0.0]
    assert _program_cpu([1.7e308], 1, 2.0) == [2.0] and _program_cpu([1.7e308] * 2, 2, 2.0) == [1.0, 1.0]
    assert _program_cpu([0.5], 1, float("nan")) == [0.0]
    from refinelab.sandbox._queue import Meter

    meter = Meter()
    for seconds in (0.25, float("inf"), float("nan"), 0.5):
        meter.add(seconds)
    assert meter.cpu == 0.75  # what is not a number of seconds is not counted


def test_an_unsandboxed_worker_told_to_stop_ends_its_running_program_first() -> None:
    """``none`` has no namespace and no subreaper: a busy worker the host stops (closing the pool on
    Ctrl-C or SIGTERM) used to die alone, and its running program, re-parented to init, ran on to its CPU
    limit. The worker now kills the job's process group first."""
    marker = f"{700 + os.getpid() % 97}.25"
    code = f"import subprocess, time\ndef f(x):\n    subprocess.Popen(['sleep', '{marker}'])\n    time.sleep(60)\n"

    async def body() -> list[int]:
        async with WorkerPool(workers=1, isolation="none", limits=Limits(cpu_seconds=30)) as pool:
            job = asyncio.ensure_future(pool.run(code, Suite.of([CallTest("f(0)", None)], entry_point="f")))
            while not processes_with(marker):  # the event: the program is running
                assert not job.done(), job.result()
                await asyncio.sleep(0.05)
            worker = pool._all[0].process
            assert worker is not None
            worker.terminate()
            await worker.wait()
            await job
        return outliving(marker, grace=10.0)

    with pytest.warns(SandboxWarning, match="UNSANDBOXED"):
        survivors = asyncio.run(body())
    assert survivors == [], "the program outlived its terminated worker"


def test_an_unsandboxed_program_sees_sigterm_as_any_program_does() -> None:
    """The unsandboxed worker's own SIGTERM handler (end its jobs, then exit) is not the program's: a
    program that reads its SIGTERM disposition sees the default, as it does under bubblewrap."""
    code = "import signal\ndef f(x):\n    return signal.getsignal(signal.SIGTERM) == signal.SIG_DFL\n"
    with pytest.warns(SandboxWarning, match="UNSANDBOXED"):
        result = with_pool(
            lambda pool: pool.run(code, Suite.of([CallTest("f(0)", True)], entry_point="f")), isolation="none"
        )
    assert result.passed, result.outcomes
