"""Scoring on hidden tests: identical programs run once, and when only the verdict is wanted a wrong
program's tests stop at the stage where it failed."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from refinelab.problems import CallTest
from refinelab.sandbox import Limits, RunResult, Suite, WorkerPool
from refinelab.sandbox._judge import DEFERRED
from refinelab.sandbox._outcome import PASSED
from refinelab.sandbox._outcome import TestOutcome as Outcome
from refinelab.sandbox._scoring import FIRST_STAGE, run_scored, split_by_time, stages
from refinelab.sandbox._trace import TRACE_VARIABLE, chain_of
from tests.conftest import with_pool

SUITE = Suite.of([CallTest(f"f({i})", i) for i in range(100)], entry_point="f")
RIGHT = "def f(x):\n    return x\n"
WRONG_AT = "def f(x):\n    return x + (x == {at})\n"


@pytest.fixture
def no_backup_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The processes counted here are the stages' own: a job held up half a second on a loaded machine, with
    the other worker idle, would otherwise get a backup run (``WorkerPool._speculate``) whose processes count
    too (tests/sandbox/test_hostile.py tests those runs)."""
    monkeypatch.setattr("refinelab.sandbox._pool.SPECULATE_AFTER", 1e9)


def score(items: list[tuple[str, Suite]], limits: Limits) -> tuple[list[RunResult], float]:
    async def body(pool: WorkerPool) -> tuple[list[RunResult], float]:
        results = await run_scored(pool, items, isolate=True)
        return results, pool.stats.get("children", 0)

    return with_pool(body, workers=2, limits=limits)


def test_stages_grow_eightfold_and_cover_every_test_once() -> None:
    assert stages(5, True) == [range(5)] and stages(100, False) == [range(100)]
    assert stages(100, True) == [range(0, 8), range(8, 72), range(72, 100)]
    found = stages(5000, True)
    assert [len(r) for r in found] == [8, 64, 512, 4096, 5000 - 4680]
    assert [i for r in found for i in r] == list(range(5000))


@pytest.mark.usefixtures("no_backup_runs")
def test_a_wrong_program_stops_at_the_stage_it_failed_when_only_the_verdict_counts() -> None:
    items = [(WRONG_AT.format(at=3), SUITE), (WRONG_AT.format(at=50), SUITE), (RIGHT, SUITE)]
    (early, later, right), children = score(items, Limits(stop_at_failure=True))
    assert [o.verdict for o in early.outcomes[:FIRST_STAGE]] == ["pass"] * 3 + ["fail"] + ["pass"] * 4
    assert {o.verdict for o in early.outcomes[FIRST_STAGE:]} == {"skipped"}
    assert later.outcomes[50].verdict == "fail" and {o.verdict for o in later.outcomes[72:]} == {"skipped"}
    assert right.passed and len(right.outcomes) == 100
    assert children == 1 + 2 + 3  # a process per stage run (isolated)
    (early_all, _, _), _ = score(items, Limits())
    assert [o.verdict for o in early_all.outcomes].count("fail") == 1 and len(early_all.outcomes) == 100


@pytest.mark.usefixtures("no_backup_runs")
def test_a_suite_without_tests_scores_to_no_outcomes_whether_or_not_only_the_verdict_counts() -> None:
    empty = Suite.of([], entry_point="f")
    for limits in (Limits(stop_at_failure=True), Limits()):
        (result,), children = score([(RIGHT, empty)], limits)
        assert result.outcomes == () and not result.passed and children == 0


@pytest.mark.usefixtures("no_backup_runs")
def test_identical_programs_against_the_same_suite_run_once() -> None:
    items = [(RIGHT, SUITE), (WRONG_AT.format(at=1), SUITE), (RIGHT, SUITE), (RIGHT, SUITE)]
    results, children = score(items, Limits())
    assert [r.passed for r in results] == [True, False, True, True]
    assert results[0] is results[2] is results[3]
    assert children == 2


LOOP = "def f(x):\n    while True:\n        pass\n"


def ran(program: str, job: dict[str, list[str]]) -> bool:
    """Whether a traced job ran ``program`` (its chain is the program's, on some suite)."""
    return any(chain.startswith(chain_of(program)) for chain in job["chains"])


def test_a_programs_timeout_rerun_does_not_hold_back_another_programs_next_stage(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each program goes through its stages on its own: a right program's second stage starts while a
    looping program scored beside it is still in the rerun that confirms its timeout (before, a group's
    next stage waited for the group's every program, reruns included). Read from the job trace."""
    trace = tmp_path / "jobs.jsonl"
    monkeypatch.setenv(TRACE_VARIABLE, str(trace))
    (looping, right), _ = score([(LOOP, SUITE), (RIGHT, SUITE)], Limits(cpu_seconds=0.5, stop_at_failure=True))
    assert looping.outcomes[0].verdict == "timeout" and right.passed
    jobs = [json.loads(line) for line in trace.read_text().splitlines() if "chains" in json.loads(line)]
    loop_jobs = [job for job in jobs if ran(LOOP, job)]
    right_jobs = [job for job in jobs if ran(RIGHT, job)]
    assert len(loop_jobs) == 2 and len(right_jobs) == 3  # the run and its rerun; three stages
    rerun = max(loop_jobs, key=lambda job: job["start"])
    second_stage = sorted(right_jobs, key=lambda job: job["start"])[1]
    assert second_stage["start"] < rerun["end"]


def test_at_the_end_of_a_run_a_long_programs_confirming_rerun_starts_beside_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With a worker idle and nothing waiting, the rerun that would confirm a timeout starts while the first
    run still runs, so a looping program's limit and its rerun overlap; the verdict is the same."""
    trace = tmp_path / "jobs.jsonl"
    monkeypatch.setenv(TRACE_VARIABLE, str(trace))
    (looping,), _ = score([(LOOP, SUITE)], Limits(cpu_seconds=1.0, stop_at_failure=True))
    assert looping.outcomes[0].verdict == "timeout"
    assert looping.outcomes[0].limit_seconds == 1.0
    jobs = [json.loads(line) for line in trace.read_text().splitlines() if "chains" in json.loads(line)]
    first, second = sorted((job for job in jobs if ran(LOOP, job)), key=lambda job: job["start"])
    assert second["start"] < first["end"]


def test_a_slow_stage_is_cut_by_the_references_time_and_scored_the_same() -> None:
    """A stage whose tests took the reference longer than ``PIECE_SECONDS`` runs in pieces (concurrently, on
    as many workers); the pieces cover every test once, in order, and the verdicts are those of one run."""
    slow = replace(SUITE, reference_seconds=tuple([0.2] * 100))
    pieces = split_by_time(slow, 0.5)
    assert [len(piece.tests) for piece in pieces] == [2] * 50
    assert [t for piece in pieces for t in piece.tests] == list(slow.tests)
    assert split_by_time(SUITE, 0.5) == [SUITE]  # no reference times: not cut
    items = [(RIGHT, slow), (WRONG_AT.format(at=3), slow), (WRONG_AT.format(at=50), slow)]
    (right, early, later), _ = score(items, Limits(stop_at_failure=True))
    assert right.passed and [o.verdict for o in right.outcomes] == ["pass"] * 100
    assert not early.passed and early.outcomes[3].verdict == "fail"
    assert not later.passed and later.outcomes[50].verdict == "fail"


SLOW_ERROR_AT = """
def f(x):
    import time
    end = time.process_time() + 0.004
    while time.process_time() < end:
        pass
    if x == {at}:
        raise ValueError("wrong")
    return x
"""
"""About 4 ms of CPU a test, and an error at one of them."""


def test_a_stage_the_program_itself_is_slow_on_is_cut_by_its_own_speed_and_reads_as_one_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A program slower than the reference (here the reference's times are not known at all) gets its next
    stage cut by the CPU its last stage took per test, so one program's long stage does not hold one worker;
    put back together, the stage reads as one run: after the test that stopped the program, every test is
    skipped with the worker's words, whatever the later pieces did."""
    import refinelab.sandbox._scoring as scoring

    suite = Suite.of([CallTest(f"f({i})", i) for i in range(200)], entry_point="f")
    items = [(SLOW_ERROR_AT.format(at=150), suite), (SLOW_ERROR_AT.format(at=-1), suite)]
    limits = Limits(stop_at_failure=True)
    monkeypatch.setattr(scoring, "PIECE_SECONDS", 1e9)
    (whole_error, whole_right), _ = score(items, limits)  # every stage in one job
    trace = tmp_path / "jobs.jsonl"
    monkeypatch.setenv(TRACE_VARIABLE, str(trace))
    monkeypatch.setattr(scoring, "PIECE_SECONDS", 0.02)
    (cut_error, cut_right), _ = score(items, limits)
    assert cut_right.passed and cut_error.outcomes == whole_error.outcomes
    assert [o.verdict for o in cut_error.outcomes[149:152]] == ["pass", "error", "skipped"]
    assert cut_error.outcomes[151].message == "not run: an earlier test failed"
    assert cut_right.outcomes == whole_right.outcomes
    jobs = [json.loads(line) for line in trace.read_text().splitlines() if "chains" in json.loads(line)]
    right_jobs = [job for job in jobs if ran(SLOW_ERROR_AT.format(at=-1), job)]
    assert len(right_jobs) > len(stages(200, True)) + 4  # its later stages in pieces, a job each


SPIN_X_MS = """
def f(x):
    import time
    end = time.process_time() + x / 1000
    while time.process_time() < end:
        pass
    return x
"""
"""``x`` ms of CPU a test: tests of larger ``x`` take it longer, as later HumanEval+ inputs are larger."""


def growing(sizes: list[int], reference_per_x: float) -> Suite:
    """Tests ``f(x)`` for each size, the reference's time on each ``x`` times ``reference_per_x``."""
    suite = Suite.of([CallTest(f"f({x})", x) for x in sizes], entry_point="f")
    return replace(suite, reference_seconds=tuple(x * reference_per_x for x in sizes))


def test_a_programs_pace_foresees_its_next_stage_by_its_own_time_and_by_the_references() -> None:
    from refinelab.sandbox._scoring import LOAD_SECONDS, TEST_SECONDS, Pace

    early, later = growing([1] * 64, 1e-4), growing([20] * 118, 1e-4)
    pace = Pace.of(LOAD_SECONDS + 64 * TEST_SECONDS + 10 * 64 * 1e-4, early)  # ten times the reference's
    assert pace.against_reference == pytest.approx(10)
    assert pace.seconds(later) == pytest.approx(10 * 118 * 20 * 1e-4)  # not its time per test x 118
    assert pace.seconds(later) > 10 * pace.per_test * len(later.tests)
    unknown = Pace.of(0.5, SUITE)  # the reference's times not known: its own time per test
    assert unknown.against_reference == 0 and unknown.seconds(SUITE) == pytest.approx(0.5)
    barely = Pace.of(0.5, growing([1] * 8, 1e-6))  # too little reference time to measure a ratio by
    assert barely.against_reference == 0 and barely.seconds(later) == pytest.approx(0.5 / 8 * 118)
    in_pieces = Pace.of(4 * LOAD_SECONDS + 64 * TEST_SECONDS + 10 * 64 * 1e-4, early, loads=4)
    assert in_pieces.against_reference == pytest.approx(10)  # loaded once per piece: each load left out
    assert Pace.of(float("inf"), early) == Pace() and Pace.of(float("nan"), early).seconds(later) == 0


def test_a_stage_foreseen_by_the_references_times_is_cut_by_each_tests_not_evenly() -> None:
    """Sixty quick tests, then four 64 times slower, for a program at 100 times the reference's time: the stage is
    foreseen at 3.2 s, and cut so that no piece is foreseen past ``PIECE_SECONDS`` but a single slow test (cut
    evenly, in six, its last piece held all four: 2.6 s). By its own time per test alone, it is cut evenly."""
    from refinelab.sandbox import FakeSandbox
    from refinelab.sandbox._scoring import PIECE_SECONDS, Pace, _Counter, _Scorer

    suite = growing([1] * 60 + [64] * 4, 1e-4)
    scorer = _Scorer(FakeSandbox(), Limits(stop_at_failure=True), False, _Counter(1, None))
    pace = Pace(per_test=1e-4, against_reference=100.0)
    pieces = scorer._cut(suite, pace)
    foreseen = [sum(pace.each(piece)) for piece in pieces]
    assert [t for piece in pieces for t in piece.tests] == list(suite.tests)
    assert max(foreseen) < 0.65 and [len(piece.tests) for piece in pieces][-4:] == [1, 1, 1, 1]
    assert all(total <= PIECE_SECONDS for piece, total in zip(pieces, foreseen) if len(piece.tests) > 1)
    own = scorer._cut(suite, Pace(per_test=0.05))  # 3.2 s by its own time per test: six even parts
    assert [len(piece.tests) for piece in own] == [11] * 5 + [9]


GROWING = [1] * 72 + [64] * 16
"""72 small tests, then 16 that take 64 times as long: whatever a test costs the sandbox beyond the
program's own 1 ms a unit (0.2 to 3 ms, by isolation), the third stage is foreseen at 16 times the second
stage by the reference's times (above 1.2 s and 0.26 s at most), and at a quarter of it by the program's
own time per test."""


def test_a_stage_of_larger_tests_is_cut_by_how_much_slower_than_the_reference_the_program_was(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The program's time per test on its second stage foresees little of its third, the reference's times
    (the program runs at 50 times them) foresee more than 1.2 s: the third stage is cut in pieces of 0.4 s
    (the second stage, not); cut, it scores as it does whole."""
    import refinelab.sandbox._scoring as scoring

    suite = growing(GROWING, 2e-5)
    limits = Limits(stop_at_failure=True)
    monkeypatch.setattr(scoring, "PIECE_SECONDS", 1e9)
    (whole,), _ = score([(SPIN_X_MS, suite)], limits)
    trace = tmp_path / "jobs.jsonl"
    monkeypatch.setenv(TRACE_VARIABLE, str(trace))
    monkeypatch.setattr(scoring, "PIECE_SECONDS", 0.4)
    (cut,), _ = score([(SPIN_X_MS, suite)], limits)
    assert cut.passed and cut.outcomes == whole.outcomes
    jobs = [json.loads(line) for line in trace.read_text().splitlines() if "chains" in json.loads(line)]
    assert len(jobs) >= 2 + 3  # two stages whole, the third in three pieces or more


def test_a_stage_a_program_is_foreseen_to_be_slow_on_runs_in_a_job_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two programs scored together share a job for each stage while they are quick; a stage either is
    foreseen to take more than ``ALONE_SECONDS`` (here 0.5 s) on runs alone, so the other does not wait
    behind it: the third stage (above 1.2 s foreseen), not the second (0.26 s at most)."""
    import refinelab.sandbox._scoring as scoring

    monkeypatch.setattr(scoring, "PIECE_SECONDS", 1e9)  # no piece: only whether programs share a job
    monkeypatch.setattr(scoring, "DEFER_SECONDS", 1e9)
    monkeypatch.setattr(scoring, "ALONE_SECONDS", 0.5)
    suite = growing(GROWING, 2e-5)
    other = SPIN_X_MS.replace("return x", "return x + 0")
    trace = tmp_path / "jobs.jsonl"
    monkeypatch.setenv(TRACE_VARIABLE, str(trace))

    async def body(pool: WorkerPool) -> list[RunResult]:
        return await run_scored(pool, [(SPIN_X_MS, suite), (other, suite)], isolate=True)

    results = with_pool(body, workers=1, limits=Limits(stop_at_failure=True))
    assert all(result.passed for result in results)
    jobs = [json.loads(line) for line in trace.read_text().splitlines() if "chains" in json.loads(line)]
    assert [job["programs"] for job in sorted(jobs, key=lambda job: job["start"])] == [2, 2, 1, 1]


def test_pieces_put_back_together_skip_what_the_worker_would_not_have_run() -> None:
    from refinelab.sandbox._outcome import TestOutcome
    from refinelab.sandbox._scoring import AFTER_FAILURE, AFTER_TIMEOUT, _stopped

    passed, failed = TestOutcome("pass"), TestOutcome("fail")
    timeout, error = TestOutcome("timeout"), TestOutcome("error")
    staged = Limits(stop_at_failure=True)
    assert _stopped([passed, failed, passed], staged) == [passed, failed, passed]  # a wrong value: it goes on
    assert _stopped([passed, error, passed, failed], staged) == [passed, error, AFTER_FAILURE, AFTER_FAILURE]
    assert _stopped([timeout, passed], staged) == [timeout, AFTER_TIMEOUT]
    assert _stopped([timeout, passed], replace(staged, after_timeout="continue")) == [timeout, passed]
    assert _stopped([error, passed], Limits()) == [error, passed]  # every outcome wanted: nothing stops it


SPIN_WRONG_AT = SPIN_X_MS.replace("    return x\n", "    return x + (x == {at})\n")


def test_a_stage_nothing_foresaw_is_deferred_after_its_budget_and_run_in_pieces_that_read_as_one_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Quick first stages, then a third stage of 20 ms tests, the reference's times unknown: nothing foresees
    it. Past its budget (from the end of its first test there) the worker defers the rest of the stage,
    which runs in pieces side by side (each deferring in turn if slower than foreseen); the outcomes are those
    of the stage run whole. The quick tests' pace foresees 100 of them well under two pieces' time (2 ms a
    test would be needed) however loaded the machine, so the third stage is sent whole."""
    import refinelab.sandbox._scoring as scoring

    suite = Suite.of([CallTest(f"f({x})", x) for x in [0] * 72 + [20] * 100], entry_point="f")
    right = SPIN_X_MS
    wrong = SPIN_WRONG_AT.replace("{at}", "20) * (__import__('random').random() < 2")  # wrong on every slow test
    items = [(right, suite), (wrong, suite)]
    limits = Limits(stop_at_failure=True)
    monkeypatch.setattr(scoring, "DEFER_SECONDS", 1e9)
    whole, _ = scored_with_jobs(items, limits)
    monkeypatch.setattr(scoring, "DEFER_SECONDS", 0.05)
    monkeypatch.setattr(scoring, "PIECE_SECONDS", 0.1)
    deferred, jobs = scored_with_jobs(items, limits)
    assert deferred[0].passed and [r.outcomes for r in deferred] == [r.outcomes for r in whole]
    assert [o.verdict for o in deferred[1].outcomes[70:74]] == ["pass", "pass", "fail", "fail"]
    right_jobs = [job for job in jobs if job.program == right]
    (stage,) = [job for job in right_jobs if len(job.outcomes) == 100]  # its third stage's one job, which deferred
    ran, left = stage.outcomes.count(PASSED), stage.outcomes.count(DEFERRED)
    assert stage.budget == 0.05 and 1 < ran < 100 and ran + left == 100
    pieces = right_jobs[right_jobs.index(stage) + 1 :]  # not its first two stages' jobs
    assert len(pieces) > 1 and max(job.beside for job in pieces) > 1  # the rest, in pieces side by side


def test_a_deferred_rounds_pieces_are_cut_by_the_reference_times_of_the_tests_that_ran(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A third stage of 20 quick tests, then 12 of 30 ms whose reference times say so (at a tenth of a ms): the
    quick second stage foresees nothing (the reference's times there are 0), so the stage is sent whole and
    defers after two slow tests or so. Those tests ran at many times the reference's time, which foresees each
    slow test left at more than a 20 ms piece: each gets a piece of its own (by the time per test that ran, a
    3 ms average, the ten had gone in one piece, which deferred again). Cut so, the stage reads as run whole.
    (On a loaded machine the quick stages may be cut in pieces too: the round counted is what ran after the
    last job that deferred.)"""
    import refinelab.sandbox._scoring as scoring

    sizes = [0] * 92 + [30] * 12
    suite = growing(sizes, 1e-4)
    limits = Limits(stop_at_failure=True)
    monkeypatch.setattr(scoring, "DEFER_SECONDS", 1e9)
    whole, _ = scored_with_jobs([(SPIN_X_MS, suite)], limits)
    monkeypatch.setattr(scoring, "DEFER_SECONDS", 0.05)
    monkeypatch.setattr(scoring, "PIECE_SECONDS", 0.02)
    (deferred,), jobs = scored_with_jobs([(SPIN_X_MS, suite)], limits)
    assert deferred.passed and deferred.outcomes == whole[0].outcomes
    deferring = [index for index, job in enumerate(jobs) if DEFERRED in job.outcomes]  # one, unless cut
    left = sum(jobs[index].outcomes.count(DEFERRED) for index in deferring)
    assert 0 < left < 12
    slow = [sum(getattr(test, "expected", None) == 30 for test in job.suite.tests) for job in jobs[deferring[-1] + 1 :]]
    assert sum(slow) == left and max(slow) == 1  # the next round: one slow test a piece, none deferred again


def test_a_pace_foresees_each_test_and_cuts_at_most_most_pieces() -> None:
    from refinelab.sandbox._scoring import (
        LOAD_SECONDS,
        MOST_PIECES,
        PIECE_SECONDS,
        TEST_SECONDS,
        Pace,
        _foreseen_pieces,
    )

    suite = growing([1, 64] * 100, 1e-4)
    pace = Pace.measured(1.0 + LOAD_SECONDS + TEST_SECONDS, [1], suite)  # the one test that ran: 1 s of its own
    assert pace.against_reference == pytest.approx(1.0 / 64e-4)  # against the reference's 64e-4 s
    assert pace.each(suite)[:2] == pytest.approx([1.0 / 64 + TEST_SECONDS, 1.0 + TEST_SECONDS])
    pieces = _foreseen_pieces(suite, pace)  # 100 slow tests of a second each: at most MOST_PIECES pieces
    assert 1 < len(pieces) <= MOST_PIECES and [t for piece in pieces for t in piece.tests] == list(suite.tests)
    few = growing([1, 64] * 4, 1e-4)
    assert PIECE_SECONDS < 1.0
    assert [len(piece.tests) for piece in _foreseen_pieces(few, pace)] == [1] * 8  # each slow test alone
    unknown = Suite.of(few.tests, entry_point="f")  # no reference times: the time per test that ran
    assert Pace.measured(0.3, [0, 1, 2], unknown).each(unknown) == pytest.approx([0.1] * 8)


@dataclass(frozen=True)
class Job:
    """One program of a job, as the pool's caller saw it."""

    program: str
    outcomes: list[Outcome]
    """The job's own outcomes, deferred ones included."""
    budget: object
    """The job's ``defer_after``."""
    beside: int
    """How many jobs of the same program had been sent and not answered when this one was sent, itself
    included (more than one: pieces side by side)."""
    suite: Suite
    """The tests it ran."""


def scored_with_jobs(items: list[tuple[str, Suite]], limits: Limits) -> tuple[list[RunResult], list[Job]]:
    """The results, and each program of each job (:class:`Job`), in the order the jobs were answered."""
    jobs: list[Job] = []
    sent: dict[str, int] = {}

    async def body(pool: WorkerPool) -> list[RunResult]:
        run_items = pool.run_items

        async def spied(batch: list[tuple[str, Suite]], **kwargs: object) -> list[RunResult]:
            programs = [program for program, _ in batch]
            beside = {program: sent.setdefault(program, 0) + 1 for program in programs}
            sent.update(beside)
            try:
                found = await run_items(batch, **kwargs)  # type: ignore[arg-type]
            finally:
                for program in programs:
                    sent[program] -= 1
            budget = getattr(kwargs.get("limits"), "defer_after", None)
            ran = zip(batch, found)
            jobs.extend(Job(p, list(result.outcomes), budget, beside[p], suite) for (p, suite), result in ran)
            return found

        pool.run_items = spied  # type: ignore[method-assign,assignment]
        return await run_scored(pool, items, isolate=True)

    return with_pool(body, workers=2, limits=limits), jobs


def test_a_job_defers_a_programs_later_tests_once_it_has_spent_its_budget_having_run_one_at_least() -> None:
    suite = Suite.of([CallTest(f"f({x})", x) for x in [20] * 10], entry_point="f")

    async def body(pool: WorkerPool) -> list[RunResult]:
        return await pool.run_items([(SPIN_X_MS, suite), (SPIN_X_MS, suite)], limits=Limits(defer_after=0.01))

    results = with_pool(body, workers=1)
    for result in results:  # 20 ms a test: the first (its warm-up, if any, does not count) and one more run,
        # then the rest are deferred (and the job goes on with the next program)
        assert [o.verdict for o in result.outcomes] == ["pass"] * 2 + ["skipped"] * 8
        assert set(result.outcomes[2:]) == {DEFERRED}
