"""Self-test of a benchmark through the sandbox: every reference solution must pass its hidden tests
and its visible tests, and an empty stub must fail the hidden tests (the bigcodebench "ground-truth pass
rate" idea). A discrepancy means the benchmark data, the loader or the sandbox is wrong, so the check
exits non-zero. A visible test the reference fails would send a refining strategy after a wrong answer."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from refinelab._progress import ProgressHook
from refinelab.problems import Problem
from refinelab.sandbox import RunResult, Sandbox, Suite, run_scored


@dataclass(frozen=True)
class Discrepancy:
    """A reference that did not pass, or a stub that did not fail (also when there is no test to fail)."""

    problem_id: str
    """The problem."""
    which: Literal["reference", "stub", "visible"]
    """What was run: the reference or the stub on the hidden tests, or the reference on the visible tests."""
    detail: str
    """The first test that went against expectation."""


@dataclass(frozen=True)
class SelfTestReport:
    """What the self-test found."""

    problems: int
    """Problems checked."""
    references: int
    """Problems that have a reference solution (and so were checked with it)."""
    discrepancies: tuple[Discrepancy, ...]
    """Everything that went against expectation."""
    without_visible: int = 0
    """Problems with no visible tests (a strategy that runs tests has none of its own to run there)."""
    visible_checked: int = 0
    """Problems with both a reference and visible tests (so the reference was run on those too)."""


def stub_program(problem: Problem) -> str:
    """A program that defines the entry point but does nothing (prints nothing, returns None)."""
    if problem.kind == "stdio":
        return "pass\n"
    if problem.completion_prefix:
        return problem.program("    pass\n")
    entry = problem.entry_point or "solution"
    if "." in entry:
        cls, method = entry.rsplit(".", 1)
        return f"class {cls}:\n    def {method}(self, *args, **kwargs):\n        pass\n"
    return f"def {entry}(*args, **kwargs):\n    pass\n"


async def self_test(problems: Sequence[Problem], pool: Sandbox, progress: ProgressHook | None = None) -> SelfTestReport:
    """Run references (expect pass) and stubs (expect fail) for every problem; ``progress`` is told as
    problems finish ("self-test", done, total)."""
    done = 0
    gate = asyncio.Semaphore(2 * pool.size)  # enough to keep every worker busy; more only holds memory

    async def check(problem: Problem) -> list[Discrepancy]:
        nonlocal done
        async with gate:
            found = await _check(problem, pool)
        done += 1
        if progress is not None:
            progress("self-test", done, len(problems))
        return found

    if progress is not None:
        progress("self-test", 0, len(problems))
    found = await asyncio.gather(*(check(problem) for problem in problems))
    discrepancies = tuple(d for group in found for d in group)
    return SelfTestReport(
        len(problems),
        sum(p.reference is not None for p in problems),
        discrepancies,
        without_visible=sum(not p.visible_tests for p in problems),
        visible_checked=sum(p.reference is not None and bool(p.visible_tests) for p in problems),
    )


async def _check(problem: Problem, pool: Sandbox) -> list[Discrepancy]:
    hidden = Suite.hidden(problem)
    items = [(stub_program(problem), hidden)]
    if problem.reference is not None:
        items.append((problem.reference, hidden))
        if problem.visible_tests:
            items.append((problem.reference, Suite.for_problem(problem, problem.visible_tests)))
    results = await run_scored(pool, items, isolate=True)
    found = []
    if not results[0].outcomes:  # nothing can fail, so the problem cannot tell right from wrong
        found.append(Discrepancy(problem.id, "stub", "the problem has no hidden tests, so an empty stub cannot fail"))
    elif results[0].passed:
        found.append(Discrepancy(problem.id, "stub", "the empty stub passed every hidden test"))
    if len(results) > 1 and not results[1].passed:
        found.append(Discrepancy(problem.id, "reference", _first_failure(results[1])))
    if len(results) > 2 and not results[2].passed:
        found.append(
            Discrepancy(problem.id, "visible", "the reference fails a visible test: " + _first_failure(results[2]))
        )
    return found


def _first_failure(result: RunResult) -> str:
    if not result.outcomes:
        return "the problem has no hidden tests"
    for index, outcome in enumerate(result.outcomes):
        if not outcome.passed:
            return f"test {index}: {outcome.verdict}: {outcome.message or outcome.error_type or ''}".strip()
    return "passed"
