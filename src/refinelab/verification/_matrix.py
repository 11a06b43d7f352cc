"""Running every program on every test: the pass matrix dual agreement is computed from."""

from __future__ import annotations

from collections.abc import Sequence

from refinelab.problems import Problem, Test
from refinelab.sandbox import Limits, RunResult, Suite, WorkerPool


async def run_matrix(
    sandbox: WorkerPool,
    programs: Sequence[str | None],
    tests: Sequence[Test],
    problem: Problem,
    *,
    limits: Limits | None = None,
) -> list[frozenset[int]]:
    """Which tests each program passes, run in the sandbox.

    Every program runs against all ``tests`` (as the problem's own tests run: same kind, entry point,
    setup and prelude). The sandbox skips the tests after one that times out; those are run again, from
    the first skipped one, until every test has a verdict, so a slow test never costs a program the
    tests after it. A program given as ``None`` (it could not be read) passes nothing.

    Returns:
        For each program, in order, the indices of the tests it passes.
    """
    passed: list[set[int]] = [set() for _ in programs]
    pending = {i: list(range(len(tests))) for i, program in enumerate(programs) if program is not None and tests}
    while pending:
        order = sorted(pending)
        items = [(programs[i] or "", _suite(problem, [tests[t] for t in pending[i]])) for i in order]
        results = await sandbox.run_items(items, limits=limits)
        pending = _record(order, pending, results, passed)
    return [frozenset(p) for p in passed]


def _suite(problem: Problem, tests: Sequence[Test]) -> Suite:
    return Suite.of(
        tests, kind=problem.kind, entry_point=problem.entry_point, setup=problem.test_setup, prelude=problem.prelude
    )


def _record(
    order: Sequence[int], pending: dict[int, list[int]], results: Sequence[RunResult], passed: list[set[int]]
) -> dict[int, list[int]]:
    """Note the passes; return, per program, the tests still to run (those skipped after a timeout)."""
    again: dict[int, list[int]] = {}
    for program, result in zip(order, results):
        indices = pending[program]
        for test, outcome in zip(indices, result.outcomes):
            if outcome.passed:
                passed[program].add(test)
        skipped = [t for t, o in zip(indices, result.outcomes) if o.verdict == "skipped"]
        if skipped and len(skipped) < len(indices):
            again[program] = skipped
    return again
