"""Running programs against hidden tests so that no reply from the sandbox grows large.

HumanEval+ has expected values of several megabytes, and a correct candidate sends a value that size
back for each such test. A suite whose large expected values add up to more than ``PART_BYTES`` is run
in pieces; a piece carrying more than ``HEAVY_BYTES`` runs as a sandbox job of its own (the pool would
otherwise batch several into one reply); the outcomes are put back together in test order. Suites
without large values (every other benchmark) run exactly as ``WorkerPool.run_items`` runs them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from refinelab._progress import ProgressHook
from refinelab.problems import CallTest, Test
from refinelab.sandbox._outcome import RunResult
from refinelab.sandbox._packed import Packed
from refinelab.sandbox._protocol import Sandbox
from refinelab.sandbox._suite import Suite

PART_BYTES = 2 * 2**20
"""Most expected bytes in one piece of a suite (a single larger test gets a piece of its own)."""
HEAVY_BYTES = 256 * 2**10
"""A piece expecting more than this runs as a job of its own."""

Item = tuple[str, Suite]


def expected_bytes(tests: Sequence[Test]) -> int:
    """Bytes of the large (packed) expected values among ``tests``."""
    return sum(t.expected.size for t in tests if isinstance(t, CallTest) and isinstance(t.expected, Packed))


def split_suite(suite: Suite, part_bytes: int = PART_BYTES) -> list[Suite]:
    """``suite`` in pieces expecting at most ``part_bytes`` each; ``[suite]`` itself when it fits."""
    if expected_bytes(suite.tests) <= part_bytes:
        return [suite]
    pieces: list[list[Test]] = [[]]
    filled = 0
    for test in suite.tests:
        size = expected_bytes([test])
        if pieces[-1] and filled + size > part_bytes:
            pieces.append([])
            filled = 0
        pieces[-1].append(test)
        filled += size
    return [replace(suite, tests=tuple(piece)) for piece in pieces]


async def run_scored(
    pool: Sandbox, items: Sequence[Item], *, isolate: bool = False, progress: ProgressHook | None = None
) -> list[RunResult]:
    """Results of ``items`` in order, as ``pool.run_items`` gives them, with large suites run in pieces
    (see the module docstring); ``progress`` is told as items finish ("scoring", done, total)."""
    parts, owners = _parts(items)
    counter = _Counter(owners, len(items), progress)
    results: list[RunResult | None] = [None] * len(parts)

    async def run(group: list[int]) -> None:
        found = await pool.run_items([parts[i] for i in group], isolate=isolate)
        for i, result in zip(group, found):
            results[i] = result
        counter.finished(group)

    counter.start()
    await asyncio.gather(*(run(group) for group in _groups(parts, pool, progress is not None)))
    done = [r for r in results if r is not None]
    assert len(done) == len(parts), "every part gets a result"
    return [_joined([done[i] for i in owner]) for owner in owners]


def _parts(items: Sequence[Item]) -> tuple[list[Item], list[range]]:
    pieces: dict[int, list[Suite]] = {}
    parts: list[Item] = []
    owners: list[range] = []
    for program, suite in items:
        split = pieces.setdefault(id(suite), split_suite(suite))  # samples of a problem share its pieces
        owners.append(range(len(parts), len(parts) + len(split)))
        parts += [(program, piece) for piece in split]
    return parts, owners


def _groups(parts: list[Item], pool: Sandbox, counted: bool) -> list[list[int]]:
    """Heavy parts one per job; the rest together, in groups that keep every worker's batches full when
    progress is counted (one call otherwise)."""
    heavy = [i for i, (_, suite) in enumerate(parts) if expected_bytes(suite.tests) > HEAVY_BYTES]
    chosen = set(heavy)
    light = [i for i in range(len(parts)) if i not in chosen]
    size = max(pool.size * pool.batch_size, 1) if counted else max(len(light), 1)
    return [[i] for i in heavy] + [light[start : start + size] for start in range(0, len(light), size)]


class _Counter:
    """Counts items whose every part has finished."""

    def __init__(self, owners: list[range], total: int, progress: ProgressHook | None) -> None:
        self.left = {i: len(owner) for i, owner in enumerate(owners)}
        self.owner_of = {part: i for i, owner in enumerate(owners) for part in owner}
        self.total, self.done, self.progress = total, 0, progress

    def start(self) -> None:
        if self.progress is not None:
            self.progress("scoring", 0, self.total)

    def finished(self, parts: list[int]) -> None:
        for part in parts:
            owner = self.owner_of[part]
            self.left[owner] -= 1
            self.done += self.left[owner] == 0
        if self.progress is not None:
            self.progress("scoring", self.done, self.total)


def _joined(results: list[RunResult]) -> RunResult:
    if len(results) == 1:
        return results[0]
    outcomes = tuple(outcome for result in results for outcome in result.outcomes)
    return RunResult(outcomes, results[0].isolation, output=results[-1].output)
