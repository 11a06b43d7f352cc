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
* **Slow stages**: a stage whose tests took the reference solution more than ``PIECE_SECONDS`` runs in
  pieces of about that much, concurrently, each loading the program afresh (as a stage does). So does a
  stage the program itself would take longer on than that, judged by the CPU its own last stage took per
  test and by how many times the reference's time that was (a program many times slower than the
  reference: its next stage of 512 tests had held one worker for 16 CPU s while the others idled at the
  end of a run); and a stage it would take more than ``ALONE_SECONDS`` on runs in a job of its own. Put
  back together, a stage cut in pieces reads as the stage run whole: after the first test that stopped
  the program (an error, a timeout, a crash) the rest are ``skipped``, as the worker reports them,
  whatever the other pieces did.
* **Large expected values** (HumanEval+ has values of several megabytes, and a correct candidate sends
  a value that size back for each such test): a suite whose large expected values add up to more than
  ``PART_BYTES`` is run in pieces; a suite carrying more than ``HEAVY_BYTES``, and every piece of a suite
  cut in pieces, runs as a sandbox job of its own (the pool would otherwise batch several into one reply,
  or put the pieces of a slow stage back together).

Outcomes are put back together in test order. Every program goes through its stages on its own: its
next stage waits for nothing but its own last one, so no program waits for another's timeout or rerun;
the pool puts the programs waiting at any moment together in jobs (``_queue.py``).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter

from refinelab._progress import ProgressHook
from refinelab.problems import CallTest, Test
from refinelab.sandbox._judge import DEFERRED
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._outcome import RunResult, TestOutcome
from refinelab.sandbox._packed import Packed
from refinelab.sandbox._protocol import Sandbox
from refinelab.sandbox._queue import Meter, Placement, current_placement, placed
from refinelab.sandbox._suite import Suite
from refinelab.sandbox._trace import chain_of
from refinelab.sandbox._worker import protocol as wire
from refinelab.sandbox._worker.jobs import SKIPPED_AFTER_FAILURE, SKIPPED_AFTER_TIMEOUT

PART_BYTES = 2 * 2**20
"""Most expected bytes in one piece of a suite (a single larger test gets a piece of its own)."""
HEAVY_BYTES = 256 * 2**10
"""A piece expecting more than this runs as a job of its own."""
PIECE_SECONDS = 0.5
"""Most reference CPU seconds in one piece of a stage (HumanEval+ and MBPP+ know the reference's time on
each test): a stage that takes a right program longer is cut, and its pieces run at once on as many
workers, so no one program's stage holds a worker for long while others idle."""
MOST_PIECES = 64
"""At most this many pieces of one stage cut by the program's own speed."""
ALONE_SECONDS = 0.1
"""A stage the program is expected to take longer on runs in a job of its own, not batched with other
programs' (whose stages would otherwise wait behind it, one chain for all of them)."""
LOAD_SECONDS = 0.002
"""About what loading a program in a fresh process costs, beyond its tests (1 to 2 ms a program in a
job, measured in a HumanEval+ trace): left out of its speed against the reference, once per job it ran in."""
TEST_SECONDS = 2e-5
"""About what the sandbox spends on a test beyond the program's own work (20 to 30 us a test in a
HumanEval+ trace): left out too, so that a program as fast as the reference is not taken for a slower one."""
MEASURED_REFERENCE = 2e-5
"""Reference CPU seconds a stage needs before a program's time on it says how much slower the program is
(below it, loading the program and running the tests is most of what was measured). HumanEval/96's second
stage takes its reference 0.09 to 0.13 ms, its third 19 to 26 ms, as the calibration scales them; one
program took 34 ms on the second, then 12 s on the third."""
DEFER_SECONDS = 1.0
"""CPU seconds a program may spend in one job of a stage before the worker defers its later tests (its
pace is known by then), which then run in pieces of about ``PIECE_SECONDS`` side by side: a stage nothing
foresaw (two HumanEval/96 programs took 0.02 s on their second stage, then 12 to 16 s on their third, where
that run's reference times said nothing) no longer holds one worker while the others idle."""
FORGED = TestOutcome("crashed", "deferred before any test ran (a report the program itself forged)")
"""What the tests of a piece get when its first test was deferred, which the worker never does: only the
program could write such a report."""
FIRST_STAGE = 8
"""Tests in a program's first stage when only the verdict is wanted; each later stage is eight times
the one before (8, 64, 512, ...: a wrong program stops within eight times the tests it needed)."""
GROWTH = 8
SKIPPED = TestOutcome("skipped", "not run: an earlier test failed (only the verdict was asked for)")
AFTER_TIMEOUT = TestOutcome("skipped", str(SKIPPED_AFTER_TIMEOUT[wire.MESSAGE]))
AFTER_FAILURE = TestOutcome("skipped", str(SKIPPED_AFTER_FAILURE[wire.MESSAGE]))
"""What the worker reports for the tests of a program it stopped (``_worker/jobs.py``)."""

Item = tuple[str, Suite]
_VERDICT = attrgetter("verdict")


def expected_bytes(tests: Sequence[Test]) -> int:
    """Bytes of the large (packed) expected values among ``tests``."""
    return sum(t.expected.size for t in tests if isinstance(t, CallTest) and isinstance(t.expected, Packed))


def split_suite(suite: Suite, part_bytes: int = PART_BYTES) -> list[Suite]:
    """``suite`` in pieces expecting at most ``part_bytes`` each; ``[suite]`` itself when it fits."""
    if suite.packed_bytes <= part_bytes:
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


def split_by_time(suite: Suite, seconds: float = PIECE_SECONDS) -> list[Suite]:
    """``suite`` in pieces whose reference times add up to at most ``seconds`` each (a single slower test
    gets a piece of its own); ``[suite]`` itself when it fits or its reference times are not known."""
    if _reference_seconds(suite) <= seconds:  # 0 where the times are not known
        return [suite]
    return split_by(suite, suite.reference_seconds, seconds)


def split_by(suite: Suite, spent: Sequence[float], seconds: float) -> list[Suite]:
    """``suite`` in pieces of consecutive tests whose ``spent`` (seconds, one per test) add up to at most
    ``seconds`` each (a single slower test gets a piece of its own); ``[suite]`` itself when it is one."""
    pieces: list[list[int]] = [[]]
    filled = 0.0
    for index, cost in enumerate(spent):
        if pieces[-1] and filled + cost > seconds:
            pieces.append([])
            filled = 0.0
        pieces[-1].append(index)
        filled += cost
    return [suite] if len(pieces) == 1 else [suite.subset(piece) for piece in pieces]


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
    items: Sequence[tuple[str, Suite | asyncio.Future[Suite]]],
    *,
    isolate: bool = False,
    progress: ProgressHook | None = None,
    limits: Limits | None = None,
    on_result: Callable[[int, RunResult], None] | None = None,
) -> list[RunResult]:
    """Results of ``items`` in order, as ``pool.run_items`` gives them (see the module docstring for what
    is run once, in stages or in pieces); ``progress`` is told as items finish ("scoring", done, total),
    and ``on_result`` is given each item's index and result as soon as it has one. An item's suite may be a
    future (its problem still loading: see ``_loading.py``): its program runs once the suite is there, while
    the others go on."""
    limits = limits or pool.limits
    if limits.stop_at_failure and limits.defer_after is None:
        limits = replace(limits, defer_after=DEFER_SECONDS)
    sharing: dict[tuple[str, int], list[int]] = {}
    for index, (program, suite) in enumerate(items):
        sharing.setdefault((program, id(suite)), []).append(index)
    counter = _Counter(len(sharing), progress)
    scorer = _Scorer(pool, limits, isolate, counter)
    results: list[RunResult | None] = [None] * len(items)

    async def score(indices: list[int]) -> None:
        program, suite = items[indices[0]]
        result = await scorer.score(program, suite if isinstance(suite, Suite) else await suite)
        for index in indices:
            results[index] = result
            if on_result is not None:
                on_result(index, result)

    counter.start()
    await asyncio.gather(*(score(indices) for indices in sharing.values()))
    found = [result for result in results if result is not None]
    if len(found) != len(items):
        raise RuntimeError(f"{len(items) - len(found)} items were never scored")  # a scorer's bug
    return found


@dataclass
class _Scorer:
    """Runs each program through its stages, on its own: a program's next stage waits only for its own
    last one (and that one's timeout rerun), never for other programs (see the module docstring)."""

    pool: Sandbox
    limits: Limits
    isolate: bool
    counter: _Counter
    suites: dict[tuple[int, int, int], Suite] = field(default_factory=dict)
    """Stage suites, one object per (suite, stage): the pool sends a suite once per job however many
    programs share it."""
    pieces: dict[int, tuple[Suite, list[Suite]]] = field(default_factory=dict)
    """Each stage suite's pieces (samples of a problem share them), the suite kept alive beside them."""
    cuts: dict[tuple[int, int], tuple[Suite, list[Suite]]] = field(default_factory=dict)
    """A piece cut in as many parts (for a slow program), the piece kept alive beside them."""

    async def score(self, program: str, suite: Suite) -> RunResult:
        """The program's result: its stages in turn, each only after it passed every earlier one; later
        stages go ahead of fresh work in the pool (a chain already started ends first), alone or cut in
        pieces where the program's pace on its last stage says the stage would hold a worker long."""
        outcomes: list[TestOutcome] = []
        last = RunResult((), self.pool.isolation)
        chain = f"{chain_of(program)}@{id(suite):x}"
        pace = Pace()
        for step, tests in enumerate(stages(len(suite.tests), self.limits.stop_at_failure)):
            stage, meter = self._stage_suite(suite, tests), Meter()
            pieces = self._pieces(stage, pace)
            alone = pace.seconds(stage) > ALONE_SECONDS
            with placed(Placement(urgent=step > 0, alone=alone, chain=chain, meter=meter)):
                last = await self._run(program, stage, pieces)
                last = await self._deferred(program, stage, last, meter, len(pieces))
            pace = Pace.of(meter.cpu, stage, loads=len(pieces))
            outcomes += last.outcomes
            if last.pass_count != len(last.outcomes):  # counted at C speed: a stage has up to 512 outcomes
                break
        outcomes += [SKIPPED] * (len(suite.tests) - len(outcomes))
        self.counter.finished()
        return _with_outcomes(last, outcomes)

    def _stage_suite(self, suite: Suite, tests: range) -> Suite:
        """The suite of one stage: ``suite`` itself when the stage is all of it."""
        if tests.start == 0 and tests.stop == len(suite.tests):
            return suite
        key = (id(suite), tests.start, tests.stop)
        if key not in self.suites:
            self.suites[key] = suite.subset(tests)
        return self.suites[key]

    def _pieces(self, suite: Suite, pace: Pace) -> list[Suite]:
        """The pieces a stage runs in: a large or slow suite in pieces (slow for the reference, or for this
        program at the ``pace`` its last stage showed); ``[suite]`` when it runs whole."""
        kept = self.pieces.get(id(suite))
        if kept is None:
            kept = self.pieces[id(suite)] = (suite, [q for piece in split_suite(suite) for q in split_by_time(piece)])
        return [cut for piece in kept[1] for cut in self._cut(piece, pace)]

    async def _run(self, program: str, suite: Suite, pieces: list[Suite]) -> RunResult:
        """One stage of a program, whole or in ``pieces``, each piece in a job of its own."""
        if len(pieces) == 1 and suite.packed_bytes <= HEAVY_BYTES:
            (result,) = await self.pool.run_items([(program, suite)], limits=self.limits, isolate=self.isolate)
            return result
        found = await asyncio.gather(*(self._piece(program, piece) for piece in pieces))
        return _joined(list(found), self.limits)

    async def _deferred(self, program: str, stage: Suite, result: RunResult, meter: Meter, loads: int) -> RunResult:
        """``result`` with the tests its jobs deferred (the program spent ``DEFER_SECONDS`` in one) run in
        pieces of about ``PIECE_SECONDS`` at the pace of the tests it ran last (``meter``, at least the budget,
        which a cluster does not meter, over the ``loads`` jobs that ran them: per test and against the
        reference's times, see :class:`Pace`), side by side, round after round (a piece slower than that pace
        defers in turn: later tests are often larger); put back together as the stage run whole reads."""
        outcomes = list(result.outcomes)
        cpu, ran = meter.cpu, list(range(len(outcomes)))
        while waiting := _deferred_at(outcomes):
            left = set(waiting)
            pace = Pace.measured(max(cpu, DEFER_SECONDS), [i for i in ran if i not in left], stage, loads=loads)
            rest = stage.subset(waiting)
            # As in the stage run whole: a timeout after a test that already failed is not run again.
            wrong = not all(outcome.passed for outcome in outcomes[: waiting[0]])
            limits = replace(self.limits, timeout_reruns=0) if wrong else self.limits
            before = meter.cpu
            pieces = [piece for part in split_suite(rest) for piece in _foreseen_pieces(part, pace)]
            found = await asyncio.gather(*(self._piece(program, piece, limits) for piece in pieces))
            again = [outcome for part in found for outcome in _headway(part.outcomes)]
            for index, outcome in zip(waiting, again):
                outcomes[index] = outcome
            cpu, ran, loads = meter.cpu - before, waiting, len(pieces)
            result = _with_outcomes(found[-1], _stopped(outcomes, self.limits))
        return result

    def _cut(self, piece: Suite, pace: Pace) -> list[Suite]:
        """``piece`` in parts the program is foreseen to take about ``PIECE_SECONDS`` on each: by each test's
        foreseen time where the reference's times foresee it (:func:`_foreseen_pieces`), else in as many even
        parts (shared by every program cut into as many)."""
        foreseen = pace.seconds(piece)
        wanted = foreseen / PIECE_SECONDS
        count = min(len(piece.tests), int(wanted) if wanted < MOST_PIECES else MOST_PIECES)
        if count <= 1:
            return [piece]
        if pace.against_reference * _reference_seconds(piece) >= foreseen:
            return _foreseen_pieces(piece, pace)
        key = (id(piece), count)
        if key not in self.cuts:
            size = -(-len(piece.tests) // count)
            indices = range(len(piece.tests))
            self.cuts[key] = (piece, [piece.subset(list(indices[i : i + size])) for i in indices[::size]])
        return self.cuts[key][1]

    async def _piece(self, program: str, piece: Suite, limits: Limits | None = None) -> RunResult:
        """One piece of a stage cut in pieces, in a job of its own: pieces are cut so that they run at
        once on several workers (or so that a heavy reply comes alone), not to be put together again."""
        current = current_placement()
        with placed(Placement(urgent=current.urgent, alone=True, chain=current.chain, meter=current.meter)):
            (result,) = await self.pool.run_items(
                [(program, piece)], limits=limits or self.limits, isolate=self.isolate
            )
        return result


@dataclass(frozen=True)
class Pace:
    """How fast a program went on its last stage, to foresee its next: CPU seconds a test, and how many
    times the reference's time it took (where the reference's time on each test is known)."""

    per_test: float = 0.0
    against_reference: float = 0.0

    @classmethod
    def of(cls, cpu: float, stage: Suite, *, loads: int = 1) -> Pace:
        """The pace of a program that took ``cpu`` seconds on ``stage``, loaded ``loads`` times (once per
        piece)."""
        return cls._made(cpu, len(stage.tests), _reference_seconds(stage), loads)

    @classmethod
    def measured(cls, cpu: float, tests: Sequence[int], stage: Suite, *, loads: int = 1) -> Pace:
        """The pace of a program that took ``cpu`` seconds on the ``tests`` of ``stage`` (their indices), loaded
        ``loads`` times."""
        times = stage.reference_seconds
        reference = sum(map(times.__getitem__, tests)) if len(times) == len(stage.tests) else 0.0
        return cls._made(cpu, len(tests), reference, loads)

    @classmethod
    def _made(cls, cpu: float, tests: int, reference: float, loads: int) -> Pace:
        """The pace of ``cpu`` seconds on ``tests`` tests that took the reference ``reference`` seconds (0:
        not known); a pace that would not be finite is no pace."""
        per_test = cpu / max(tests, 1)  # a suite without tests is one empty stage
        own = max(cpu - loads * LOAD_SECONDS - tests * TEST_SECONDS, 0.0)
        ratio = own / reference if reference >= MEASURED_REFERENCE else 0.0
        return cls(per_test, ratio) if math.isfinite(per_test) and math.isfinite(ratio) else cls()

    def seconds(self, suite: Suite) -> float:
        """CPU seconds the program is expected to take on ``suite``: the more of its own time per test, and
        the reference's time there times how much slower than the reference it was (later tests are often
        larger: a HumanEval/96 program took 0.1 s on its first 72 tests, then 13 s on the next 118)."""
        return max(self.per_test * len(suite.tests), self.against_reference * _reference_seconds(suite))

    def each(self, suite: Suite) -> list[float]:
        """CPU seconds the program is foreseen to take on each of ``suite``'s tests: the reference's time on it
        times how much slower the program was (and what the sandbox spends on a test), where that is known;
        else its own time per test."""
        times = suite.reference_seconds
        if self.against_reference > 0 and len(times) == len(suite.tests):
            return [self.against_reference * spent + TEST_SECONDS for spent in times]
        return [self.per_test] * len(suite.tests)


def _foreseen_pieces(suite: Suite, pace: Pace) -> list[Suite]:
    """``suite`` in pieces the program is foreseen to take about ``PIECE_SECONDS`` on, test by test (see
    :meth:`Pace.each`): HumanEval/96's slow tests are one in two or three, and pieces of as many tests each had
    taken 0 to 1.7 s. At most ``MOST_PIECES`` of them: any two pieces in a row are foreseen to take more than
    the most one may, which is therefore at least twice the whole over that many."""
    spent = pace.each(suite)
    return split_by(suite, spent, max(PIECE_SECONDS, 2 * sum(spent) / MOST_PIECES))


def _reference_seconds(suite: Suite) -> float:
    """The reference's CPU seconds on ``suite``'s tests (0 where they are not known)."""
    times = suite.reference_seconds
    return sum(times) if len(times) == len(suite.tests) else 0.0


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


def _joined(results: list[RunResult], limits: Limits) -> RunResult:
    """A stage's result from its pieces, as the stage run whole reads (see the module docstring)."""
    if len(results) == 1:
        return results[0]
    outcomes = [outcome for result in results for outcome in result.outcomes]
    return _with_outcomes(results[-1], _stopped(outcomes, limits))


def _stopped(outcomes: list[TestOutcome], limits: Limits) -> list[TestOutcome]:
    """With ``stop_at_failure``, every outcome after the first that stops a program ``skipped``, with the
    worker's words (it runs no test of a program after an error, a crash or, unless told to go on, a
    timeout)."""
    if not limits.stop_at_failure:
        return outcomes
    for index, outcome in enumerate(outcomes):
        if outcome.verdict in ("pass", "fail", "skipped"):
            continue
        if outcome.verdict == "timeout" and limits.after_timeout != "skip":
            continue
        skipped = AFTER_TIMEOUT if outcome.verdict == "timeout" else AFTER_FAILURE
        return [*outcomes[: index + 1], *[skipped] * (len(outcomes) - index - 1)]
    return outcomes


def _headway(outcomes: Sequence[TestOutcome]) -> Sequence[TestOutcome]:
    """A piece's outcomes, or every one ``FORGED`` where its first test was deferred: a child runs a
    program's first test whatever its budget, so only the program could have written that (and every round
    then runs at least one test of each piece: the rounds end)."""
    return [FORGED] * len(outcomes) if outcomes and _deferred(outcomes[0]) else outcomes


def _with_outcomes(last: RunResult, outcomes: Sequence[TestOutcome]) -> RunResult:
    """A program's result from its parts or stages: every outcome, and where the last part ran (its
    isolation, and its node on a cluster) with what it printed."""
    return RunResult(tuple(outcomes), last.isolation, output=last.output, node=last.node)


def _deferred_at(outcomes: Sequence[TestOutcome]) -> list[int]:
    """Where tests were deferred (none unless a test was skipped, which is seen at C speed: nearly every
    stage has no skip)."""
    if "skipped" not in map(_VERDICT, outcomes):
        return []
    return [index for index, outcome in enumerate(outcomes) if _deferred(outcome)]


def _deferred(outcome: TestOutcome) -> bool:
    """Whether a test was deferred (its verdict first: a check asks this of every outcome of every stage)."""
    return outcome.verdict == "skipped" and outcome == DEFERRED
