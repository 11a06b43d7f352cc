"""``bench/_predict.py``: what a traced run would take at W workers, which the benches print beside every
measurement (and which the docs quote), read from a job trace written by hand here; and what
``bench/_measure.py`` measures of a whole command (a peer's serial start among it), on small commands."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from refinelab.sandbox._pool import SPECULATE_AFTER


def _bench_module(name: str) -> Iterator[ModuleType]:
    """``bench/<name>.py`` as a module while a test module runs (its dataclasses look it up by name)."""
    path = Path(__file__).parents[1] / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"bench{name}", path)
    assert spec is not None and spec.loader is not None
    module = sys.modules[f"bench{name}"] = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[f"bench{name}"]


@pytest.fixture(scope="module")
def predict() -> Iterator[ModuleType]:
    yield from _bench_module("_predict")


@pytest.fixture(scope="module")
def measure() -> Iterator[ModuleType]:
    yield from _bench_module("_measure")


def job(start: float, cpu: float, chains: list[str], driver: float, **more: object) -> dict[str, object]:
    record = {"submitted": start, "start": start, "end": start + cpu, "child_cpu": cpu, "worker_cpu": 0.0}
    record["programs"] = len(chains)
    return {**record, "chains": chains, "values": False, "driver_cpu": driver, **more}


def test_a_chain_is_its_longest_path_pieces_side_by_side_and_a_rerun_from_when_the_pool_starts_it(
    predict: ModuleType,
) -> None:
    def run(submitted: float, start: float, cpu: float, overlaps: bool = False) -> object:
        return predict.ChainJob(submitted, start, start + cpu, cpu, overlaps)

    stages = [run(0.0, 0.0, 0.1), run(0.2, 1.0, 10.0)]  # the second stage queued once the first ended
    assert predict.chain_seconds([*stages, run(11.5, 12.0, 8.0)]) == pytest.approx(18.1)  # one after another
    assert predict.chain_seconds([*stages, run(11.5, 12.0, 8.0, True)]) == pytest.approx(10.1)  # within it
    longer = predict.chain_seconds([*stages, run(11.5, 12.0, 12.0, True)])
    assert longer == pytest.approx(0.1 + SPECULATE_AFTER + 12.0)  # it ends after the first run would have
    assert predict.chain_seconds([run(0.0, 3.0, 2.0, True)]) == 2.0  # nothing before it to overlap
    pieces = [run(0.2, 1.0 + i, 0.5 + i / 10) for i in range(8)]  # one stage in eight pieces, queued together
    assert predict.chain_seconds([stages[0], *pieces]) == pytest.approx(0.1 + 1.2)
    after = run(20.0, 20.0, 1.0)  # the next stage waits for every piece
    assert predict.chain_seconds([stages[0], *pieces, after]) == pytest.approx(0.1 + 1.2 + 1.0)


def test_a_trace_predicts_the_largest_of_cpu_over_workers_chain_and_driver_plus_what_is_serial(
    predict: ModuleType, tmp_path: Path
) -> None:
    records = [job(10.0 + i, 4.0, [f"p{i}"], 2.0 + 0.5 * i) for i in range(8)]  # 32 CPU s, chains of 4 s
    records += [job(20.0, 6.0, ["slow"], 6.0), job(27.0, 5.0, ["slow"], 6.5, overlaps=True)]
    records.append({"closed": 40.0, "driver_cpu": 7.5})
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))

    trace = predict.read_trace(path)
    (scoring,) = trace.phases
    assert (scoring.jobs, scoring.programs, scoring.cpu) == (10, 10, pytest.approx(43.0))
    assert scoring.chain == pytest.approx(6.0 + max(0.0, SPECULATE_AFTER + 5.0 - 6.0))
    assert scoring.driver == pytest.approx(4.5) and trace.serial == pytest.approx(2.0 + 1.0)
    assert trace.predicted(2) == pytest.approx(3.0 + 43.0 / 2)  # CPU-bound
    assert trace.predicted(64) == pytest.approx(3.0 + 6.0)  # chain-bound
    assert trace.predicted(64) / trace.floor(64) == pytest.approx(9.0 / (43.0 / 64))
    assert predict.read_trace(path, main_cpu=9.5).serial == pytest.approx(3.0 + 2.0)  # what followed the pool


def test_the_report_says_how_long_the_drivers_loop_was_held_up_where_the_trace_says(
    predict: ModuleType, tmp_path: Path
) -> None:
    records = [job(10.0 + i, 4.0, [f"p{i}"], 2.0 + 0.5 * i) for i in range(4)]
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in [*records, {"closed": 40.0, "driver_cpu": 7.5}]))
    assert predict.read_trace(path).held is None
    assert not any("held up" in line for line in predict.report(predict.read_trace(path), "warm"))
    unheld = predict.read_trace(path).predicted(16)
    held = {"longest": 1.66, "at": 31.0, "cpu": 1.6, "total": 2.5}
    path.write_text(
        "".join(json.dumps(r) + "\n" for r in [*records, {"closed": 40.0, "driver_cpu": 7.5, "loop_held": held}])
    )
    trace = predict.read_trace(path)
    assert trace.held == predict.Held(1.66, pytest.approx(21.0), 1.6, 2.5)  # from the first job's start
    (line,) = [line for line in predict.report(trace, "warm") if "held up" in line]
    assert (
        "2.50 s in all" in line and "at most 1.66 s (1.60 s of its CPU) at +21.0 s from the first job's start" in line
    )
    assert trace.predicted(16) == unheld  # reported beside the prediction, not added to it


def test_the_command_line_reports_a_trace_file_with_the_drivers_whole_cpu(
    predict: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [job(10.0 + i, 4.0, [f"p{i}"], 2.0 + 0.5 * i) for i in range(4)]
    path = tmp_path / "warm.trace"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*records, {"closed": 40.0, "driver_cpu": 7.5}]))
    monkeypatch.setattr(sys, "argv", ["_predict.py", str(path), "--driver-cpu", "9.5"])
    predict.main()
    printed = capsys.readouterr().out.splitlines()
    assert printed == predict.report(predict.read_trace(path, 9.5), "warm.trace")
    assert "driver CPU outside the jobs' phases 8.0 s" in printed[0]  # 2.0 before, 6.0 after the last job


def test_a_chain_waits_for_its_own_last_job_even_in_a_job_another_chain_queued_first(
    predict: ModuleType, tmp_path: Path
) -> None:
    """A batched job's first program may have been queued before this chain's last job ended: the chain's
    own time of queueing says it waited for that job (read as the job's first, the two would overlap)."""
    records = [
        job(0.0, 3.0, ["b"], 1.0, queued={"b": 0.0}),
        job(4.0, 3.0, ["a", "b"], 2.0, submitted=1.0, queued={"a": 1.0, "b": 3.1}),
        {"closed": 8.0, "driver_cpu": 2.5},
    ]
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    (scoring,) = predict.read_trace(path).phases
    assert scoring.chain == pytest.approx(6.0)  # one after the other, not side by side


def test_reference_values_and_scoring_are_one_phase_where_they_overlap_and_two_where_one_waited(
    predict: ModuleType, tmp_path: Path
) -> None:
    """check scores a task's programs as soon as its expected outputs are in: while some are still being
    computed, the two kinds of job share the workers, and a program's chain follows its task's reference."""
    reference = [job(float(i), 2.0, [f"values:{i}"], 1.0 + i, values=True) for i in range(4)]  # ends 2, 3, 4, 5
    scoring = [job(2.5, 3.0, ["p"], 6.0), job(5.5, 1.0, ["p"], 7.0), job(6.0, 0.5, ["q"], 7.5)]
    closed = {"closed": 9.0, "driver_cpu": 8.0}
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in [*reference, *scoring, closed]))
    (both,) = predict.read_trace(path).phases
    assert (both.name, both.jobs, both.cpu) == ("reference+scoring", 7, pytest.approx(12.5))
    assert both.chain == pytest.approx(2.0 + 4.0)  # the longest reference chain, then the longest program's
    assert predict.read_trace(path).scoring() == both

    waited = [job(10.0 + i, 3.0, [f"p{i}"], 6.0 + i) for i in range(2)]  # queued after every reference job ended
    path.write_text("".join(json.dumps(record) + "\n" for record in [*reference, *waited, closed]))
    first, second = predict.read_trace(path).phases
    assert (first.name, first.jobs, first.chain) == ("reference", 4, pytest.approx(2.0))
    assert (second.name, second.jobs, second.chain) == ("scoring", 2, pytest.approx(3.0))


def test_a_peer_is_predicted_its_serial_start_then_its_pool_beside_the_rest_of_its_main_process(
    predict: ModuleType,
) -> None:
    # evalplus, cold: 24 s of expected outputs alone, then 416.5 s of pool CPU beside 9.8 s of its own
    assert predict.peer_prediction(450.5, 33.8, 4, 24.0) == pytest.approx(24.0 + (450.5 - 33.8) / 4)
    assert predict.peer_prediction(450.5, 33.8, 64, 24.0) == pytest.approx(33.8)  # then its own rest is longer
    assert predict.peer_prediction(450.5, 33.8, 4) == pytest.approx((450.5 - 33.8) / 4)
    assert predict.peer_prediction(100.0, 10.0, 4, 50.0) == pytest.approx(10.0 + 90.0 / 4)  # at most all of it


SPIN = "import time\nstart = time.process_time()\nwhile time.process_time() - start < {seconds}:\n    pass\n"


def test_a_command_that_starts_no_process_spent_all_of_its_cpu_alone(measure: ModuleType) -> None:
    found = measure.measure([sys.executable, "-c", SPIN.format(seconds=0.5)])
    assert found.returncode == 0
    assert found.main_cpu > 0
    assert found.serial_cpu == found.main_cpu


def test_what_a_command_spent_alone_stops_at_its_first_other_process(measure: ModuleType, tmp_path: Path) -> None:
    """The CPU counted as spent alone is at most what the command had spent when it started a child (it writes
    that down), however the samples fell: counting all of it would make a peer's pool look serial."""
    record = tmp_path / "at-fork"
    code = (
        SPIN.format(seconds=0.5)
        + "import os, subprocess, sys\n"
        + f"open({str(record)!r}, 'w').write(repr(sum(os.times()[:2])))\n"
        + f"subprocess.run([sys.executable, '-c', {SPIN.format(seconds=0.3)!r}], check=True)\n"
        + SPIN.format(seconds=0.5)
    )
    found = measure.measure([sys.executable, "-c", code])
    assert found.returncode == 0
    at_fork = float(record.read_text())
    assert found.serial_cpu <= at_fork + 0.05  # the kernel's ticks (10 ms), and starting the child
    assert found.main_cpu >= at_fork
    assert found.cpu >= found.main_cpu + 0.25  # the child's CPU is the tree's
