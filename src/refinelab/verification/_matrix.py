"""Running every program on every test: the pass matrix dual agreement is computed from.

Agreement runs model-written tests, many of which a wrong program loops on, so they get a short CPU
limit of their own (CodeT's 0.1 s by default, :data:`AGREEMENT_SECONDS`), while a problem's own
(visible) tests joined to them keep the run's limit. Every test gets its own verdict: after a timeout
the next test runs in a fresh process. ``check --select dual-agreement`` and the ``codet``,
``verified`` and ``sampling(select=dual-agreement)`` strategies all run their matrices here, in as few
sandbox jobs as the sandbox's batches allow.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from refinelab.problems import Problem, Test
from refinelab.sandbox import Item, Limits, RunResult, Sandbox, Suite

Row = tuple[int, int]
"""(job, program) positions."""
AGREEMENT_SECONDS = 0.1
"""CodeT's time per generated test (wall time there; CPU time here): a program looping on many tests
costs little, and a test that needs more time fails here as it fails in CodeT."""


def agreement_limits(seconds: float = AGREEMENT_SECONDS, base: Limits | None = None) -> Limits:
    """Limits for an agreement matrix: ``seconds`` per generated test, every test's verdict wanted."""
    return replace(base or Limits(), cpu_seconds=seconds, stop_at_failure=False, after_timeout="continue")


@dataclass(frozen=True)
class MatrixJob:
    """Programs and the tests to run each of them on, for one problem."""

    programs: Sequence[str | None]
    """The programs; ``None`` for one that could not be read (it passes nothing)."""
    tests: Sequence[Test]
    """The tests."""
    problem: Problem
    """How the tests run: kind, entry point, setup and prelude."""
    seconds: Sequence[float | None] = ()
    """CPU limit of each test where it is not the matrix's (a problem's own tests joined to generated ones
    keep the run's limit); ``None`` or empty: the matrix's limit."""


async def run_matrix(
    sandbox: Sandbox,
    programs: Sequence[str | None],
    tests: Sequence[Test],
    problem: Problem,
    *,
    limits: Limits | None = None,
) -> list[frozenset[int]]:
    """Which tests each program passes, run in the sandbox.

    Every program runs against all ``tests`` (as the problem's own tests run: same kind, entry point,
    setup and prelude), each test on ``limits``' CPU limit (the sandbox's when None), every test to its
    own verdict: a slow test never costs a program the tests after it. A program given as ``None`` (it
    could not be read) passes nothing.

    Returns:
        For each program, in order, the indices of the tests it passes.
    """
    (passed,) = await run_matrices(sandbox, [MatrixJob(programs, tests, problem)], limits=limits)
    return passed


async def run_matrices(
    sandbox: Sandbox,
    jobs: Sequence[MatrixJob],
    *,
    limits: Limits | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[list[frozenset[int]]]:
    """:func:`run_matrix` for several problems at once, in shared sandbox batches (much faster than one
    call per problem when each has few programs or tests). Identical programs of a job run once.
    ``progress`` is told ``("agreement", done, total)`` as programs finish. Results in job order."""
    limits = agreement_limits((limits or sandbox.limits).cpu_seconds, limits or sandbox.limits)
    first = _first_copies(jobs)
    rows = sorted(set(first.values()))
    passed: dict[Row, set[int]] = {row: set() for row in rows}
    pending: list[tuple[Row, list[int]]] = [(row, list(range(len(jobs[row[0]].tests)))) for row in rows]
    pending = [(row, tests) for row, tests in pending if tests]
    suites: dict[tuple[int, tuple[int, ...]], Suite] = {}
    while pending:
        items = [(jobs[j].programs[i] or "", _suite(jobs[j], j, tests, suites, limits)) for (j, i), tests in pending]
        results = await _run(sandbox, items, limits, progress)
        pending = _record(pending, results, passed)
    return [
        [frozenset(passed.get(first.get((j, i), (j, i)), ())) for i in range(len(job.programs))]
        for j, job in enumerate(jobs)
    ]


def _first_copies(jobs: Sequence[MatrixJob]) -> dict[Row, Row]:
    """Each readable program's row -> the row of its first identical copy in the same job: identical
    programs run once (samples repeat themselves often at low temperature)."""
    first: dict[Row, Row] = {}
    for j, job in enumerate(jobs):
        seen: dict[str, Row] = {}
        for i, program in enumerate(job.programs):
            if program is not None:
                first[(j, i)] = seen.setdefault(program, (j, i))
    return first


async def _run(
    sandbox: Sandbox, items: list[Item], limits: Limits | None, progress: Callable[[str, int, int], None] | None
) -> list[RunResult]:
    """``sandbox.run_items``; with ``progress``, in parts of one sandbox-full each, reported as they end."""
    if progress is None:
        return await sandbox.run_items(items, limits=limits)
    size = max(1, sandbox.size * sandbox.batch_size)
    parts = [items[start : start + size] for start in range(0, len(items), size)]
    done = 0

    async def part(chunk: list[Item]) -> list[RunResult]:
        nonlocal done
        found = await sandbox.run_items(chunk, limits=limits)
        done += len(chunk)
        progress("agreement", done, len(items))
        return found

    finished = await asyncio.gather(*(part(chunk) for chunk in parts))
    return [result for chunk in finished for result in chunk]


def _suite(
    job: MatrixJob, number: int, indices: Sequence[int], cache: dict[tuple[int, tuple[int, ...]], Suite], limits: Limits
) -> Suite:
    """The suite of some of job ``number``'s tests, each with its CPU limit (its own, else ``limits``'); one
    object per distinct test list, so the sandbox sends each suite once per batch however many programs
    share it."""
    found = cache.get((number, tuple(indices)))
    if found is None:
        own: list[float | None] = list(job.seconds) if len(job.seconds) == len(job.tests) else [None] * len(job.tests)
        seconds = tuple(_or(own[t], limits.cpu_seconds) for t in indices)
        # The problem's own way of running tests (kind, entry point, setup, prelude), with these tests.
        found = replace(Suite.visible(job.problem), tests=tuple(job.tests[t] for t in indices), seconds=seconds)
        cache[(number, tuple(indices))] = found
    return found


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


def _record(
    pending: Sequence[tuple[Row, list[int]]], results: Sequence[RunResult], passed: dict[Row, set[int]]
) -> list[tuple[Row, list[int]]]:
    """Note the passes; return what is still to run: each test skipped after a timeout, on its own
    (so a second round settles every test, at the cost of one process start per such test)."""
    again: list[tuple[Row, list[int]]] = []
    for (row, indices), result in zip(pending, results):
        for test, outcome in zip(indices, result.outcomes):
            if outcome.passed:
                passed[row].add(test)
        skipped = [t for t, o in zip(indices, result.outcomes) if o.verdict == "skipped"]
        if len(indices) > 1:
            again.extend((row, [t]) for t in skipped)
    return again
