"""kill -9 a running ``refinelab run`` at random moments; running it again must finish with results
identical to an uninterrupted run's, and the server must see no answered request again."""

from __future__ import annotations

import itertools
import json
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from refinelab.testing import FakeOpenAI, serve
from tests.experiment.fakes import reply, write_benchmark
from tests.experiment.test_runner import exported

KILLS = 6
STRATEGIES = ["single-pass", "self-refine(max_iters=2)", "exec-refine"]  # temperature 0: every body is distinct


def command(server: FakeOpenAI, data: Path, store: Path) -> list[str]:
    args = [sys.executable, "-m", "refinelab", "run", "--benchmark", "jsonl", "--data", str(data), "--model", "fake"]
    for strategy in STRATEGIES:
        args += ["--strategy", strategy]
    # each store its own response cache: the cache does not key on the server's address, so a cache shared
    # with another run in the folder would answer every request
    cache = store.with_name(f"{store.stem}-responses.sqlite")
    args += ["--base-url", server.base_url, "--store", str(store), "--cache", str(cache)]
    return [*args, "--concurrency", "3", "--quiet"]


class Timed:
    """The fake model, noting when each request body was answered."""

    def __init__(self) -> None:
        self.answered: dict[str, list[float]] = {}
        self.lock = threading.Lock()

    def count(self) -> int:
        """Requests answered so far."""
        with self.lock:
            return sum(len(times) for times in self.answered.values())

    def __call__(self, body: dict[str, object]) -> str:
        with self.lock:
            self.answered.setdefault(json.dumps(body, sort_keys=True), []).append(time.monotonic())
        return reply(body)


@pytest.mark.slow
def test_kill_9_at_random_moments_then_resume(tmp_path: Path) -> None:
    data = write_benchmark(tmp_path / "problems.jsonl", n=16)
    with serve(reply) as server:
        server.delay = 0.05
        subprocess.run(command(server, data, tmp_path / "whole.sqlite"), check=True, capture_output=True)
    timed, kills, progress, rng = Timed(), [], [], random.Random(7)
    with serve(timed) as server:
        server.delay = 0.05
        for _ in range(KILLS):
            before = timed.count()
            process = subprocess.Popen(command(server, data, tmp_path / "killed.sqlite"), stderr=subprocess.DEVNULL)
            # a random moment after the run has started talking to the model (starting takes seconds on a
            # loaded machine, so a fixed delay could kill every run before its first request)
            _wait_for_a_request(timed, before, process)
            time.sleep(rng.uniform(0.1, 1.5))
            if process.poll() is not None:
                break
            process.send_signal(signal.SIGKILL)
            process.wait()
            kills.append(time.monotonic())
            progress.append(_stored(tmp_path / "killed.sqlite"))
        finished = subprocess.run(command(server, data, tmp_path / "killed.sqlite"), capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    print("trajectories stored at each kill:", progress)
    assert any(0 < done < 3 * 16 for done in progress), f"no kill landed mid-run: {progress}"
    assert exported(tmp_path / "killed.sqlite") == exported(tmp_path / "whole.sqlite")
    for body, times in timed.answered.items():
        # a request may come twice only if it was in flight at a kill: sent, but its answer not yet in
        # the cache (the server answers a dead client, or the client died between reading and writing)
        for first, second in itertools.pairwise(times):
            in_flight = any(abs(kill - first) < 0.5 and kill < second for kill in kills)
            assert in_flight, f"answered at {first:.3f} and again at {second:.3f}; kills at {kills}: {body[-200:]}"


def _stored(path: Path) -> int:
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM trajectories").fetchone()[0])
        except sqlite3.OperationalError:  # killed before the schema was written
            return 0


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_the_run_resumes(tmp_path: Path) -> None:
    data, store = write_benchmark(tmp_path / "problems.jsonl", n=16), tmp_path / "s.sqlite"
    released = threading.Event()

    def held(body: dict[str, object]) -> str:
        if _stored(store) > 0:  # the event: a trajectory is stored; the run waits from then on (it cannot end
            released.wait(120)  # before the interrupt however slow this test is to send it)
        return reply(body)

    with serve(held) as server:
        process = subprocess.Popen(command(server, data, store), stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 300
            while _stored(store) == 0 and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=300)
        finally:
            released.set()
            if process.poll() is None:
                process.kill()
        assert process.returncode == 130 and "run the same command to resume" in err, err
        stored = _stored(store)
        assert 0 < stored < 3 * 16
        with sqlite3.connect(store) as db:
            assert db.execute("SELECT status FROM runs").fetchone()[0] == "interrupted"
        finished = subprocess.run(command(server, data, store), capture_output=True, text=True)
    assert finished.returncode == 0 and _stored(store) == 3 * 16


def _wait_for_a_request(timed: Timed, before: int, process: subprocess.Popen[bytes]) -> None:
    """Until the server has answered a request after ``before`` (or the run ended; at most 120 s)."""
    deadline = time.monotonic() + 120
    while timed.count() <= before and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
