"""The pass matrix, run in the real sandbox."""

from __future__ import annotations

import asyncio

from refinelab.problems import AssertTest, Problem, StdioTest
from refinelab.sandbox import FakeSandbox, Limits, WorkerPool
from refinelab.verification import (
    MatrixJob,
    TestAccuracy,
    agreement_limits,
    dual_agreement,
    run_matrices,
    run_matrix,
    test_accuracy,
)
from tests.conftest import with_pool

ABS = Problem("T/1", "def f(x):\n", "function", (), (), entry_point="f")
TESTS = (
    AssertTest("assert f(1) == 1"),
    AssertTest("assert f(-2) == 2"),
    AssertTest("assert f(0) == 0"),
)
PROGRAMS = [
    "def f(x):\n    return abs(x)\n",
    "def f(x):\n    return x\n",
    "def f(x):\n    return x if x > 0 else -x\n",
    None,
    "def f(x:\n",
    "def f(x):\n    if x < 0:\n        while True:\n            pass\n    return x\n",
]


def test_every_program_on_every_test() -> None:
    async def body(pool: WorkerPool) -> list[frozenset[int]]:
        return await run_matrix(pool, PROGRAMS, TESTS, ABS, limits=Limits(cpu_seconds=0.5))

    passed = with_pool(body, workers=2)
    # The looping program times out on test 1 and still gets its verdict on test 2.
    assert passed == [
        frozenset({0, 1, 2}),
        frozenset({0, 2}),
        frozenset({0, 1, 2}),
        frozenset(),
        frozenset(),
        frozenset({0, 2}),
    ]
    found = dual_agreement(passed, score="product")
    assert found.chosen == 0
    assert found.best is not None and found.best.members == (0, 2)


def test_where_codets_own_code_decides_otherwise() -> None:
    """The two ways a matrix differs from CodeT's released code (docs/verification.md, "Known
    differences"), on one hand-built task: a test is timed in CPU seconds, so a program that waits 0.3 s
    on a test (over CodeT's 0.1 s of wall time, which a busy machine also uses up) passes it; and a test
    that raises ``SystemExit`` fails alone, where in CodeT it ends the program's run and the program passes
    nothing. CodeT would rank ``right`` alone first (3 tests x sqrt(1)) and put ``waits`` with ``identity``
    (2 x sqrt(2)); here ``waits`` joins ``right`` and ``exits`` joins ``identity``."""
    waits = "import time\n\ndef f(x):\n    if x < 0:\n        time.sleep(0.3)\n    return abs(x)\n"
    right = PROGRAMS[0]
    exits = "import sys\n\ndef f(x):\n    if x < 0:\n        sys.exit(0)\n    return x\n"
    identity = PROGRAMS[1]

    async def body(pool: WorkerPool) -> list[frozenset[int]]:
        return await run_matrix(pool, [waits, right, exits, identity], TESTS, ABS, limits=agreement_limits())

    passed = with_pool(body, workers=2)
    assert passed == [frozenset({0, 1, 2}), frozenset({0, 1, 2}), frozenset({0, 2}), frozenset({0, 2})]
    found = dual_agreement(passed)
    assert [group.members for group in found.groups] == [(0, 1), (2, 3)]
    assert found.tied == (0, 1)


def test_stdio_programs() -> None:
    problem = Problem("S/1", "double n", "stdio", (), ())
    tests = (StdioTest("3\n", "6\n"), StdioTest("0\n", "0\n"))
    programs = ["print(int(input()) * 2)\n", "print(int(input()) + 3)\n"]

    async def body(pool: WorkerPool) -> list[frozenset[int]]:
        return await run_matrix(pool, programs, tests, problem)

    assert with_pool(body, workers=2) == [frozenset({0, 1}), frozenset({0})]


def test_no_tests_means_nothing_passes() -> None:
    async def body(pool: WorkerPool) -> list[frozenset[int]]:
        return await run_matrix(pool, PROGRAMS[:2], (), ABS)

    assert with_pool(body, workers=1) == [frozenset(), frozenset()]


def test_accuracy_is_the_share_the_reference_passes() -> None:
    problem = Problem("T/2", "def f(x):\n", "function", (), (), entry_point="f", reference=PROGRAMS[0])
    tests = (*TESTS, AssertTest("assert f(-3) == -3"))

    async def body(pool: WorkerPool) -> tuple[TestAccuracy | None, TestAccuracy | None]:
        return await test_accuracy(pool, tests, problem), await test_accuracy(pool, tests, ABS)

    found, without_reference = with_pool(body, workers=1)
    assert found is not None
    assert found.correct == frozenset({0, 1, 2})
    assert found.share == 0.75
    assert found.to_json() == {"total": 4, "correct": 3, "share": 0.75}
    assert without_reference is None


def test_tests_after_several_timeouts_still_get_verdicts() -> None:
    tests = (
        AssertTest("assert f(-1) == 1"),
        AssertTest("assert f(-2) == 2"),
        AssertTest("assert f(3) == 3"),
        AssertTest("assert f(-4) == 4"),
        AssertTest("assert f(0) == 0"),
    )

    async def body(pool: WorkerPool) -> list[frozenset[int]]:
        return await run_matrix(pool, [PROGRAMS[5], PROGRAMS[0]], tests, ABS, limits=Limits(cpu_seconds=0.3))

    assert with_pool(body, workers=2) == [frozenset({2, 4}), frozenset(range(5))]


def test_identical_programs_run_once_and_share_the_verdicts() -> None:
    sandbox = FakeSandbox()
    programs = [PROGRAMS[0], PROGRAMS[1], PROGRAMS[0], None, PROGRAMS[1]]
    passed = asyncio.run(run_matrix(sandbox, programs, TESTS, ABS))
    assert passed == [frozenset({0, 1, 2}), frozenset({0, 2}), frozenset({0, 1, 2}), frozenset(), frozenset({0, 2})]
    assert [code for code, _ in sandbox.runs] == [PROGRAMS[0], PROGRAMS[1]]


def test_progress_is_reported_as_programs_finish() -> None:
    sandbox = FakeSandbox()
    sandbox.batch_size = 1  # one program per part, so each part reports
    seen: list[tuple[str, int, int]] = []
    jobs = [MatrixJob(PROGRAMS[:3], TESTS, ABS), MatrixJob([PROGRAMS[0]], TESTS[:1], ABS)]
    passed = asyncio.run(run_matrices(sandbox, jobs, progress=lambda *event: seen.append(event)))
    assert passed == [[frozenset({0, 1, 2}), frozenset({0, 2}), frozenset({0, 1, 2})], [frozenset({0})]]
    assert seen == [("agreement", done, 4) for done in (1, 2, 3, 4)]
