"""The worker's reading of the result pipe and of printed output, fed by hand: what is past the cap is never
parsed, and each program of a batch gets what it printed."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from refinelab.sandbox._worker import protocol as wire
from refinelab.sandbox._worker import supervise
from refinelab.sandbox._worker.child import program_mark
from refinelab.sandbox._worker.jobs import shortest_seconds
from refinelab.sandbox._worker.protocol import Step
from refinelab.sandbox._worker.supervise import Watch, _over_limit, _take_result_bytes


def line(nonce: str, index: int, value: str) -> bytes:
    return (json.dumps({"n": nonce, "p": 0, "i": index, "s": "value", "v": value}) + "\n").encode()


def test_a_line_cut_by_the_cap_is_never_spliced_with_later_bytes() -> None:
    first, second = line("abc", 0, "a" * 50), line("abc", 1, "b" * 120)
    assert len(second) - 100 < len(first)  # the rest fits where the parsed first line was
    watch = Watch("abc", {"output_bytes": 1000, "result_bytes": len(first) + 60})
    _take_result_bytes(first + second[:100], watch)  # the cap cuts the second line after 60 bytes
    watch.take_results()  # the first line is parsed and leaves the buffer
    _take_result_bytes(second[100:], watch)  # the rest would close the cut line: 40 bytes short
    watch.finish()
    assert (0, 0) in watch.events
    assert (0, 1) not in watch.events
    assert watch.killed == "output_limit"


def test_results_under_the_cap_are_all_read() -> None:
    watch = Watch("abc", {"output_bytes": 1000, "result_bytes": 10_000})
    data = b"".join(line("abc", i, "v" * 100) for i in range(5))
    for start in range(0, len(data), 7):
        _take_result_bytes(data[start : start + 7], watch)
        watch.take_results()
    assert sorted(watch.events) == [(0, i) for i in range(5)]
    assert watch.killed is None


def test_printed_output_is_split_at_program_marks_however_the_pipe_is_read() -> None:
    stream = b"".join(program_mark("abc", p) + f"item {p}\n".encode() for p in (3, 4, 5))
    for size in (1, 2, 7, len(stream)):
        watch = Watch("abc", {"output_bytes": 1000, "result_bytes": 1000})
        for start in range(0, len(stream), size):
            watch.take_output(watch.out, stream[start : start + size])
        watch.take_output(watch.err, program_mark("abc", 4) + b"warning\n")
        watch.finish()
        assert watch.outputs == {3: b"item 3\n", 4: b"item 4\nwarning\n", 5: b"item 5\n"}


def test_a_mark_with_another_nonce_or_no_number_is_output() -> None:
    watch = Watch("abc", {"output_bytes": 1000, "result_bytes": 1000})
    fake = program_mark("xyz", 1) + b"\x00\x01abc:" + b"9" * 40
    watch.take_output(watch.out, program_mark("abc", 0) + fake)
    watch.finish()
    assert watch.outputs == {0: fake}


def test_the_output_cap_counts_each_programs_printing() -> None:
    watch = Watch("abc", {"output_bytes": 10, "result_bytes": 1000})
    watch.take_output(watch.out, program_mark("abc", 0) + b"x" * 8 + program_mark("abc", 1) + b"y" * 8)
    assert watch.killed is None
    watch.take_output(watch.out, b"y" * 3)
    assert watch.killed == "output_limit"


def test_a_step_the_child_reports_with_numbers_that_are_not_finite_is_not_taken() -> None:
    """The program runs in the child and could write to its result pipe: a step numbered or timed NaN or
    infinity is not taken (``int(nan)`` had stopped the worker, and every program of its job with it)."""
    watch = Watch("abc", {"output_bytes": 1000, "result_bytes": 10_000})
    good = {"n": "abc", "p": 0, "i": -1, "s": "ok", "next": [0, 0, 0.5]}
    bad = [{**good, "i": 0, "next": [0, float("nan"), 0.6]}, {**good, "i": 1, "next": [0, 2, float("inf")]}]
    _take_result_bytes(b"".join((json.dumps(m) + "\n").encode() for m in [good, *bad]), watch)
    watch.take_results()
    assert watch.current is None and watch.begin_cpu == 0.5  # the good step began; the others said nothing
    watch.ended(1.5)
    assert watch.program_cpu == {0: 1.0}  # the step that began at 0.5 ended with the child


def test_a_steps_limits_are_looked_at_only_from_the_jobs_shortest_limit_or_50_ms_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Reading /proc costs about what a quick test does, and a test reports on every pipe write: before the
    look, nothing is read; from it, a CPU limit shorter than the look still applies."""
    looked: list[int] = []

    def waits(pid: int) -> dict[str, int]:
        looked.append(pid)
        return {"1": 0}

    monkeypatch.setattr(supervise, "run_queue_waits", waits)
    monkeypatch.setattr(supervise, "cpu_seconds", lambda pid: 10.0)
    now = 1000.0  # the worker's clock, stopped: a pause of this process between two lines changes nothing
    monkeypatch.setattr(supervise, "time", SimpleNamespace(monotonic=lambda: now))
    limits: dict[str, object] = {"output_bytes": 1000, "result_bytes": 1000}
    quick = Watch("abc", limits, seconds=lambda key: 4.0, shortest=4.0)
    assert quick.look == 0.05
    quick.current, quick.begin_wall = Step(0, 0), now
    assert _over_limit(7, quick) is None and looked == []  # a fresh step: nothing read
    quick.begin_wall -= 0.06
    assert _over_limit(7, quick) is None and looked == [7]  # the first look takes the baseline
    assert quick.excused == pytest.approx(0.06)  # and the time before it counts as waited (never against the program)
    quick.begin_wall -= 10.0
    assert _over_limit(7, quick) == "timeout"
    tight = Watch("abc", limits, seconds=lambda key: 0.01, shortest=0.01)
    tight.current, tight.begin_wall = Step(0, 0), now - 0.02
    assert tight.look == 0.01 and _over_limit(7, tight) == "timeout"  # 10 CPU s used, 0.01 s allowed


def test_the_shortest_limit_of_a_job_is_its_own_or_a_tests() -> None:
    tests = [{"k": "call", "e": "f(1)"}, {"k": "call", "e": "f(2)", "l": 0.02}]
    job: dict[str, object] = {
        "limits": {"cpu_seconds": 4.0},
        "programs": ["", ""],
        "suites": [{"tests": tests}],
        "suite_of": [0, 0],
    }
    assert shortest_seconds(job) == 0.02


@pytest.mark.parametrize("extra", [b" ", b"x", b'{"n": "abc"}', b"\xff"])
def test_a_line_that_is_not_one_report_and_nothing_else_is_ignored(extra: bytes) -> None:
    watch = Watch("abc", {"output_bytes": 1000, "result_bytes": 10_000})
    _take_result_bytes(line("abc", 0, "v")[:-1] + extra + b"\n" + line("abc", 1, "w"), watch)
    watch.take_results()
    assert (0, 0) not in watch.events
    assert (0, 1) in watch.events


def test_brackets_in_a_string_are_no_nesting_and_a_report_nested_past_the_harness_is_no_report() -> None:
    watch = Watch("abc", {"output_bytes": 1000, "result_bytes": 10**7})
    nested = json.dumps({"n": "abc", "p": 0, "i": 1, "s": "value", "v": json.loads("[" * 400 + "]" * 400)})
    _take_result_bytes(line("abc", 0, "[{" * 5000) + nested.encode() + b"\n", watch)
    watch.take_results()
    assert watch.events[Step(0, 0)]["v"] == "[{" * 5000
    assert (0, 1) not in watch.events


@pytest.mark.parametrize(
    ("spent", "taken"),
    [(0.35, "sure"), (0.25, "run again"), (0.15, "its value")],
)
def test_a_step_stopped_while_its_report_was_in_the_pipe_is_the_timeout_not_the_next_step(
    monkeypatch: pytest.MonkeyPatch, spent: float, taken: str
) -> None:
    """On a loaded machine the worker can look at the child's CPU after the child reported a step's end and
    began the next, before it read that report: the look counts the next step's CPU as the step's. Seen in
    CI: a test spinning 0.3 s under a 0.2 s limit passed, and the next test (0.01 s) was judged the timeout.
    Now a step that ended past its limit is the timeout (sure past the grace), and one that ended within it
    stands, the next step's timeout not sure (the host runs it again), or that step's own where its report
    comes too and shows it past its limit."""
    monkeypatch.setattr(supervise, "run_queue_waits", lambda pid: {"1": 0})
    monkeypatch.setattr(supervise, "cpu_seconds", lambda pid: 0.4)  # the look: 0.4 s since the step began
    now = [1000.0]
    monkeypatch.setattr(supervise, "time", SimpleNamespace(monotonic=lambda: now[0]))
    limits: dict[str, object] = {"output_bytes": 1000, "result_bytes": 10_000, wire.TIMEOUT_GRACE: 0.5}
    watch = Watch("abc", limits, seconds=lambda key: 0.2, shortest=0.2)
    loaded = {"n": "abc", "p": 0, "i": -1, "s": "ok", "next": [0, 0, 0.0]}
    _take_result_bytes((json.dumps(loaded) + "\n").encode(), watch)
    watch.take_results()
    assert watch.current == Step(0, 0)
    now[0] += 2.0
    watch.killed = _over_limit(1, watch)  # the report below is already in the pipe, not read
    assert watch.killed == "timeout" and watch.sure
    value = {"n": "abc", "p": 0, "i": 0, wire.STATUS: wire.S_VALUE, wire.VALUE: 0.3, "next": [0, 1, spent]}
    _take_result_bytes((json.dumps(value) + "\n").encode(), watch)
    watch.take_results()
    first = watch.events[Step(0, 0)]
    if taken == "its value":
        assert first[wire.STATUS] == wire.S_VALUE and watch.late is None and watch.current == Step(0, 1)
        assert not watch.sure  # the next step, stopped as it began: its timeout is run again
        later = {**value, "i": 1, "next": [0, 2, spent + 0.35]}  # the next step too ended before the stop, past it
        _take_result_bytes((json.dumps(later) + "\n").encode(), watch)
        watch.take_results()
        assert watch.late == Step(0, 1) and watch.events[Step(0, 1)].get(wire.SURE) is True
    else:
        assert first[wire.STATUS] == wire.S_TIMEOUT and watch.late == Step(0, 0) and watch.current is None
        assert first.get(wire.SURE, False) is (taken == "sure")
