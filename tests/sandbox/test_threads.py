"""Programs that start threads, exit early or register exit functions end as the interpreter ends them.

Hostile-code rule: every program here is bounded (one or a few threads, a fixed recursion depth, a
CPU-bound loop the limits stop).
"""

from __future__ import annotations

from refinelab.problems import AssertTest, CallTest, StdioTest
from refinelab.sandbox import Limits, RunResult, Suite, WorkerPool
from tests.conftest import with_pool

SHORT = Limits(cpu_seconds=0.5, wall_factor=4.0)


def run_stdio(code: str, stdin: str, expected: str, limits: Limits | None = None) -> RunResult:
    suite = Suite.of([StdioTest(stdin, expected)], kind="stdio")
    return with_pool(lambda pool: pool.run(code, suite, limits=limits))


def verdict(result: RunResult) -> str:
    return result.outcomes[0].verdict


LATE_PRINT = """
import threading, time

def main():
    time.sleep(0.2)
    print(int(input()) * 2)

threading.Thread(target=main).start()
"""

DEEP_RECURSION = """
import sys, threading
sys.setrecursionlimit(1 << 25)
threading.stack_size(256 * 1024 * 1024)

def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)

def main():
    print(depth(int(input())))

threading.Thread(target=main).start()
"""


def test_a_thread_that_prints_after_the_main_thread_returned_is_judged_on_its_output() -> None:
    assert verdict(run_stdio(LATE_PRINT, "21\n", "42\n")) == "pass"


def test_deep_recursion_in_a_thread_with_a_large_stack_fits_the_memory_limit() -> None:
    assert verdict(run_stdio(DEEP_RECURSION, "300000\n", "300000\n")) == "pass"


def test_a_thread_that_never_ends_is_a_timeout_not_a_verdict_on_partial_output() -> None:
    code = (
        "import threading\nprint(1, flush=True)\nthreading.Thread(target=lambda: [0 for _ in iter(int, 1)]).start()\n"
    )
    assert verdict(run_stdio(code, "", "1\n", limits=SHORT)) == "timeout"


def test_a_sleeping_thread_that_never_ends_is_stopped_by_the_wall_backstop() -> None:
    code = "import threading, time\nprint(1, flush=True)\nthreading.Thread(target=time.sleep, args=(60,)).start()\n"
    assert verdict(run_stdio(code, "", "1\n", limits=SHORT)) == "timeout"


def test_daemon_threads_are_not_waited_for() -> None:
    code = "import threading, time\nthreading.Thread(target=time.sleep, args=(60,), daemon=True).start()\nprint(7)\n"
    assert verdict(run_stdio(code, "", "7\n", limits=SHORT)) == "pass"


def test_exit_functions_run_and_their_output_counts() -> None:
    code = "import atexit, io, sys\nout = io.StringIO()\natexit.register(lambda: sys.__stdout__.write(out.getvalue()))\nout.write('5\\n')\n"
    assert verdict(run_stdio(code, "", "5\n")) == "pass"


def test_a_program_that_ends_itself_with_os_exit_zero_is_judged_on_its_output() -> None:
    code = "import os, sys\nprint(int(input()) + 1)\nsys.stdout.flush()\nos._exit(0)\n"
    assert verdict(run_stdio(code, "1\n", "2\n")) == "pass"
    assert verdict(run_stdio(code, "1\n", "3\n")) == "fail"


def test_os_exit_with_a_failure_status_is_not_a_pass() -> None:
    code = "import os, sys\nprint(2)\nsys.stdout.flush()\nos._exit(3)\n"
    assert verdict(run_stdio(code, "", "2\n")) == "crashed"


WORKER_THREAD_FUNCTION = """
import threading

RESULTS = []

def double(x):
    worker = threading.Thread(target=lambda: RESULTS.append(2 * x))
    worker.start()
    worker.join()
    return RESULTS.pop()

threading.Thread(target=lambda: RESULTS.clear()).start()
"""


def test_function_programs_whose_threads_finish_share_one_child() -> None:
    suite = Suite.of([CallTest("double(2)", 4), CallTest("double(5)", 10)], kind="function", entry_point="double")

    async def body(pool: WorkerPool) -> tuple[list[RunResult], float]:
        results = await pool.run_many([WORKER_THREAD_FUNCTION] * 3, suite)
        return results, pool.stats["children"]

    results, children = with_pool(body, workers=1)
    assert [r.passed for r in results] == [True, True, True]
    assert children == 1


def test_a_function_program_whose_thread_never_ends_times_out_its_last_test_only() -> None:
    stuck = "import threading\n\ndef f(x):\n    return x\n\nthreading.Thread(target=lambda: [0 for _ in iter(int, 1)]).start()\n"
    fine = "def f(x):\n    return x\n"
    suite = Suite.of([AssertTest("assert f(1) == 1"), AssertTest("assert f(2) == 2")], kind="function", entry_point="f")

    async def body(pool: WorkerPool) -> list[RunResult]:
        return await pool.run_many([stuck, fine], suite, limits=SHORT)

    first, second = with_pool(body, workers=1)
    assert [o.verdict for o in first.outcomes] == ["pass", "timeout"]
    assert second.passed


def test_a_value_over_the_result_cap_is_an_output_limit_and_the_next_test_runs_afresh() -> None:
    # a list: a long string would cross as its digest (codec.digested), well under any cap
    tests = [CallTest("f(1)", [7]), CallTest("f(100_000)", [7] * 100_000), CallTest("f(1)", [7])]
    suite = Suite.of(tests, kind="function", entry_point="f")
    result = with_pool(
        lambda pool: pool.run("def f(n):\n    return [7] * n\n", suite, limits=Limits(result_bytes=50_000))
    )
    assert [o.verdict for o in result.outcomes] == ["pass", "output_limit", "pass"]
