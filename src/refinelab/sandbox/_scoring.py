"""Scoring programs on hidden tests: identical programs once, wrong ones cheaply, no reply too large.

* **Identical programs** (the same code against the same suite) run once per call; every copy gets the
  result.
* **Only the verdict** (the limits' ``stop_at_failure``): a program's tests run in stages (the first
  :data:`FIRST_STAGE` tests, then eight times as many, and so on). A program that fails a stage is not
  run on the next ones; its remaining tests are ``skipped``. Expected values never enter the sandbox,
  so a wrong value is only known once the host judges it: stages are how the host stops a wrong
  program early (the worker itself stops a program at an error, a timeout or a crash). Each stage
  loads the program afresh, as evalplus runs its base and plus inputs in separate processes. With
  every outcome wanted, a program's tests run together, as one.
* **Large expected values** (HumanEval+ has values of several megabytes, and a correct candidate sends
  a value that size back for each such test): a suite whose large expected values add up to more than
  ``PART_BYTES`` is run in pieces; a piece carrying more than ``HEAVY_BYTES`` runs as a sandbox job of
  its own (the pool would otherwise batch several into one reply).

Outcomes are put back together in test order. Groups of programs go through their stages concurrently,
so no worker waits for the slowest program of another group.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from refinelab._progress import ProgressHook
from refinelab.problems import CallTest, Test
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._outcome import RunResult, TestOutcome
from refinelab.sandbox._packed import Packed
from refinelab.sandbox._protocol import Sandbox
from refinelab.sandbox._suite import Suite

PART_BYTES = 2 * 2**20
"""Most expected bytes in one piece of a suite (a single larger test gets a piece of its own)."""
HEAVY_BYTES = 256 * 2**10
"""A piece expecting more than this runs as a job of its own."""
FIRST_STAGE = 8
"""Tests in a program's first stage when only the verdict is wanted; each later stage is eight times
the one before (8, 64, 512, ...: a wrong program stops within eight times the tests it needed)."""
GROWTH = 8
SKIPPED = TestOutcome("skipped", "not run: an earlier test failed (only the verdict was asked for)")

Item = tuple[str, Suite]


def expected_bytes(tests: Sequence[Test]) -> int:
    """Bytes of the large (packed) expected values among ``tests``."""
    return sum(t.expected.size for t in tests if isinstance(t, CallTest) and isinstance(t.expected, Packed))


def split_suite(suite: Suite, part_bytes: int = PART_BYTES) -> list[Suite]:
    """``suite`` in pieces expecting at most ``part_bytes`` each; ``[suite]`` itself when it fits."""
    if expected_bytes(suite.tests) <= part_bytes:
        return [suite]
    pieces: list[list[int]] = [[]]
    filled = 0
    for index, test in enumerate(suite.tests):
        size = expected_bytes([test])
        if pieces[-1] and filled + size > part_bytes:
            pieces.append([])
            filled = 0
        pieces[-1].append(index)
        filled += size
    return [suite.subset(piece) for piece in pieces]


def stages(count: int, staged: bool) -> list[range]:
    """The test ranges a program runs in turn: all at once, or growing stages (see :data:`FIRST_STAGE`)."""
    if not staged or count <= FIRST_STAGE:
        return [range(count)]
    found, start, size = [], 0, FIRST_STAGE
    while start < count:
        found.append(range(start, min(count, start + size)))
        start, size = start + size, size * GROWTH
    return found


async def run_scored(
    pool: Sandbox,
    items: Sequence[Item],
    *,
    isolate: bool = False,
    progress: ProgressHook | None = None,
    limits: Limits | None = None,
) -> list[RunResult]:
    """Results of ``items`` in order, as ``pool.run_items`` gives them (see the module docstring for what
    is run once, in stages or in pieces); ``progress`` is told as items finish ("scoring", done, total)."""
    limits = limits or pool.limits
    first: dict[tuple[str, int], int] = {}
    for index, (program, suite) in enumerate(items):
        first.setdefault((program, id(suite)), index)
    unique = sorted(set(first.values()))
    counter = _Counter(len(unique), progress)
    scorer = _Scorer(pool, limits, isolate, counter)
    results: dict[int, RunResult] = {}
    size = max(pool.batch_size, 1)
    groups = [unique[start : start + size] for start in range(0, len(unique), size)]
    counter.start()
    for group, found in zip(groups, await asyncio.gather(*(scorer.score([items[i] for i in g]) for g in groups))):
        results.update(zip(group, found))
    return [results[first[(program, id(suite))]] for program, suite in items]


@dataclass
class _Scorer:
    """Runs groups of programs through their stages (see the module docstring)."""

    pool: Sandbox
    limits: Limits
    isolate: bool
    counter: _Counter
    suites: dict[tuple[int, int, int], Suite] = field(default_factory=dict)
    """Stage suites, one object per (suite, stage): the pool sends a suite once per job however many
    programs share it."""

    async def score(self, items: list[Item]) -> list[RunResult]:
        """Each item's result: its stages in turn, a stage only for programs that passed every earlier one."""
        outcomes: list[list[TestOutcome]] = [[] for _ in items]
        last = [RunResult((), self.pool.isolation) for _ in items]  # each program's latest stage
        plans = [stages(len(suite.tests), self.limits.stop_at_failure) for _, suite in items]
        alive = list(range(len(items)))
        step = 0
        while alive:
            found = await self._run([(items[i][0], self._stage_suite(items[i][1], plans[i][step])) for i in alive])
            running, alive = alive, []
            for i, result in zip(running, found):
                outcomes[i] += result.outcomes
                last[i] = result
                if step + 1 < len(plans[i]) and all(o.passed for o in result.outcomes):
                    alive.append(i)
                    continue
                outcomes[i] += [SKIPPED] * (len(items[i][1].tests) - len(outcomes[i]))
                self.counter.finished()
            step += 1
        return [_with_outcomes(result, o) for o, result in zip(outcomes, last)]

    def _stage_suite(self, suite: Suite, tests: range) -> Suite:
        """The suite of one stage: ``suite`` itself when the stage is all of it."""
        if tests.start == 0 and tests.stop == len(suite.tests):
            return suite
        key = (id(suite), tests.start, tests.stop)
        if key not in self.suites:
            self.suites[key] = suite.subset(list(tests))
        return self.suites[key]

    async def _run(self, items: list[Item]) -> list[RunResult]:
        """One stage of several programs: large suites in pieces, heavy pieces one per job."""
        parts, owners = _parts(items)
        heavy = [i for i, (_, suite) in enumerate(parts) if expected_bytes(suite.tests) > HEAVY_BYTES]
        light = [i for i in range(len(parts)) if i not in set(heavy)]
        groups = [[i] for i in heavy] + ([light] if light else [])
        found = await asyncio.gather(
            *(
                self.pool.run_items([parts[i] for i in group], limits=self.limits, isolate=self.isolate)
                for group in groups
            )
        )
        results: dict[int, RunResult] = {}
        for group, group_results in zip(groups, found):
            results.update(zip(group, group_results))
        return [_joined([results[i] for i in owner]) for owner in owners]


def _parts(items: Sequence[Item]) -> tuple[list[Item], list[range]]:
    pieces: dict[int, list[Suite]] = {}
    parts: list[Item] = []
    owners: list[range] = []
    for program, suite in items:
        split = pieces.setdefault(id(suite), split_suite(suite))  # samples of a problem share its pieces
        owners.append(range(len(parts), len(parts) + len(split)))
        parts += [(program, piece) for piece in split]
    return parts, owners


class _Counter:
    """Counts distinct programs whose scoring has finished."""

    def __init__(self, total: int, progress: ProgressHook | None) -> None:
        self.total, self.done, self.progress = total, 0, progress

    def start(self) -> None:
        if self.progress is not None:
            self.progress("scoring", 0, self.total)

    def finished(self) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress("scoring", self.done, self.total)


def _joined(results: list[RunResult]) -> RunResult:
    if len(results) == 1:
        return results[0]
    return _with_outcomes(results[-1], [outcome for result in results for outcome in result.outcomes])


def _with_outcomes(last: RunResult, outcomes: Sequence[TestOutcome]) -> RunResult:
    """A program's result from its parts or stages: every outcome, and where the last part ran (its
    isolation, and its node on a cluster) with what it printed."""
    return RunResult(tuple(outcomes), last.isolation, output=last.output, node=last.node)
