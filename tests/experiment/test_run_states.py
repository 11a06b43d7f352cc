"""Run states: a run stopped by an error, SIGTERM or ``kill -9`` does not stay ``running``; ``report``
picks the newest run with results; ``report --list`` says how far each run got."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.store import MIGRATIONS, ProcessId, RunHeader, RunProblem, Store, Unit
from refinelab.testing import FakeOpenAI, serve
from tests.experiment.fakes import reply, write_benchmark
from tests.experiment.test_kill_resume import _stored, command
from tests.store.test_store import CONFIG, PROBLEM, open_run, passed, trajectory
from tests.store.test_store import attempt as stored_attempt


def _set_owner(path: Path, run_id: str, pid: int, started: str | None, host: str | None = None) -> None:
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE runs SET pid = ?, pid_started = ?, host = COALESCE(?, host) WHERE id = ?",
            (pid, started, host, run_id),
        )


def test_a_running_run_whose_process_is_gone_reads_as_interrupted(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        open_run(store)
        assert store.run("r1").status == "running"  # this process holds it
        assert store.run("r1").process == ProcessId.current()
    child = subprocess.Popen(["true"])
    child.wait()
    _set_owner(path, "r1", child.pid, None)
    with Store(path) as store:
        info = store.run("r1")
        assert info.status == "interrupted" and f"its process ({child.pid} on" in (info.note or "")
    _set_owner(path, "r1", os.getpid(), "not-my-start-time")  # the PID was reused by another program
    with Store(path) as store:
        assert store.run("r1").status == "interrupted"
    _set_owner(path, "r1", child.pid, None, host="another-machine")  # cannot tell: shown as it was stored
    with Store(path) as store:
        assert store.run("r1").status == "running"


def test_finish_records_why_a_run_stopped(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        open_run(store)
        store.finish_run("r1", "failed", "EndpointError: cannot reach the server")
        info = store.run("r1")
        assert (info.status, info.note) == ("failed", "EndpointError: cannot reach the server")
        assert info.finished is not None
        open_run(store)  # a resume: running again, the old note cleared
        assert (store.run("r1").status, store.run("r1").note, store.run("r1").finished) == ("running", None, None)


def test_the_default_run_is_the_newest_with_results_and_the_listing_counts_units(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite") as store:
        open_run(store)
        store.save("r1", Unit(CONFIG.key, "jsonl/p", 0), trajectory(stored_attempt(0, "pass")), [passed(True)])
        time.sleep(0.01)
        store.open_run("r2", {"name": "empty", "repeats": 2}, RunHeader(versions={}, isolation="none", limits={}))
        store.add_configurations("r2", [CONFIG.stored()])
        store.add_problems("r2", [RunProblem("jsonl/p", PROBLEM), RunProblem("jsonl/q", PROBLEM)])
        store.finish_run("r2", "failed", "UserError: bad key")
        assert store.run().id == "r1" and store.run("r2").id == "r2"
        listing = {found.info.id: (found.configurations, found.done, found.total) for found in store.listing()}
        assert listing == {"r1": (1, 1, 1), "r2": (1, 0, 4)}  # r2: 1 configuration x 2 problems x 2 repeats


def test_a_store_written_before_process_tracking_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied REAL NOT NULL)")
        for name, script in MIGRATIONS[:2]:
            for statement in filter(str.strip, script.split(";")):
                db.execute(statement)
            db.execute("INSERT INTO migrations VALUES (?, 0)", (name,))
        db.execute("INSERT INTO runs VALUES ('old', 'old', 1.0, '{}', '{}', 'none', '{}', 'running', NULL)")
    with Store(path) as store:
        assert "m003_run_process" in store.applied
        info = store.run("old")
        assert (info.status, info.process) == ("running", None)  # nothing recorded: nothing to check


def test_an_error_marks_the_run_failed_and_report_skips_runs_without_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, store = write_benchmark(tmp_path / "problems.jsonl", n=2), tmp_path / "s.sqlite"
    args = ["run", "--benchmark", "jsonl", "--data", str(data), "--strategy", "single-pass", "--model", "m"]
    with serve(reply) as server:
        assert main([*args, "--base-url", server.base_url, "--store", str(store), "--quiet", "--name", "good"], {}) == 0
    time.sleep(0.01)
    unreachable = ["--base-url", "http://127.0.0.1:9/v1", "--store", str(store), "--quiet", "--name", "bad"]
    unreachable += ["--cache", str(tmp_path / "empty-cache.sqlite")]  # the shared cache would answer everything
    assert main([*args, *unreachable], {}) == 2
    capsys.readouterr()
    assert main(["report", "--store", str(store)], {}) == 0
    assert re.match(r"run good-\w+ \(complete\)", capsys.readouterr().out)
    assert main(["report", "--list", "--store", str(store)], {}) == 0
    header, good, bad = capsys.readouterr().out.splitlines()
    assert header.split() == ["run", "started", "status", "configurations", "units", "done", "name"]
    assert re.fullmatch(r"good-\w+\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+complete\s+1\s+2/2\s+good", good)
    assert re.fullmatch(r"bad-\w+\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+failed\s+1\s+0/2\s+bad", bad)
    assert main(["report", bad.split()[0], "--store", str(store)], {}) == 0
    assert "(failed: EndpointError: cannot reach http://127.0.0.1:9/v1" in capsys.readouterr().out


def _start(server: FakeOpenAI, data: Path, store: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(command(server, data, store), stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while _stored(store) == 0 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    return process


def _listed_status(store: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "refinelab", "report", "--list", "--store", str(store)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[1].split()[3]


@pytest.mark.slow
def test_sigterm_is_handled_like_ctrl_c(tmp_path: Path) -> None:
    data, store = write_benchmark(tmp_path / "problems.jsonl", n=16), tmp_path / "s.sqlite"
    with serve(reply) as server:
        server.delay = 0.05
        process = _start(server, data, store)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
        assert process.returncode == 143, err
        assert "terminated (SIGTERM); finished trajectories are stored: run the same command to resume" in err
        assert 0 < _stored(store) < 3 * 16 and _listed_status(store) == "interrupted"
        with Store(store) as opened:
            assert opened.run().note == "stopped by a signal (Ctrl-C or SIGTERM)"
        finished = subprocess.run(command(server, data, store), capture_output=True, text=True)
    assert finished.returncode == 0 and _stored(store) == 3 * 16 and _listed_status(store) == "complete"


@pytest.mark.slow
def test_a_run_killed_with_minus_9_is_listed_as_interrupted(tmp_path: Path) -> None:
    data, store = write_benchmark(tmp_path / "problems.jsonl", n=16), tmp_path / "s.sqlite"
    with serve(reply) as server:
        server.delay = 0.05
        process = _start(server, data, store)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
    assert 0 < _stored(store) < 3 * 16 and _listed_status(store) == "interrupted"
    done = subprocess.run(
        [sys.executable, "-m", "refinelab", "report", "--store", str(store)], capture_output=True, text=True
    )
    assert done.returncode == 0 and f"(interrupted: its process ({process.pid} on" in done.stdout


def test_a_quiet_run_with_failures_left_says_so_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --quiet builds no report, only reads the failures: an open one still makes the exit status 1.
    data, store = write_benchmark(tmp_path / "problems.jsonl", n=2), tmp_path / "s.sqlite"
    args = ["run", "--benchmark", "jsonl", "--data", str(data), "--strategy", "single-pass", "--model", "m"]
    args += ["--store", str(store), "--cache", str(tmp_path / "c.sqlite"), "--quiet", "--concurrency", "1"]
    with serve(reply) as server:
        server.faults.extend(["429"] * 6)  # the first call's every attempt: retries exhausted
        assert main([*args, "--base-url", server.base_url], {}) == 1
        assert "1 trajectories hit infrastructure failures; run the same command to retry" in capsys.readouterr().err
        assert main([*args, "--base-url", server.base_url], {}) == 0
    assert "infrastructure" not in capsys.readouterr().err
