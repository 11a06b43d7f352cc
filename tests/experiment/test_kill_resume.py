"""kill -9 a running ``refinelab run`` at random moments; running it again must finish with results
identical to an uninterrupted run's, and the server must see no request again whose answer the response
cache held (told by the answers' own ids, which the cache keeps, not by a clock)."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import defaultdict
from contextlib import closing
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
    args += ["--base-url", server.base_url, "--store", str(store), "--cache", str(cache_of(store))]
    return [*args, "--concurrency", "3", "--quiet"]


@pytest.mark.slow
def test_kill_9_at_random_moments_then_resume(tmp_path: Path) -> None:
    data = write_benchmark(tmp_path / "problems.jsonl", n=16)
    with serve(reply) as server:
        server.delay = 0.05
        subprocess.run(command(server, data, tmp_path / "whole.sqlite"), check=True, capture_output=True)
    store, rng = tmp_path / "killed.sqlite", random.Random(7)
    progress: list[int] = []
    cached: set[str] = set()  # the answers the response cache held at any kill (each reply keeps its raw id)
    left: list[int] = []  # answers each killed run left in the cache
    with serve(reply) as server:
        server.delay = 0.05
        for _ in range(KILLS):
            before = len(server.answer_ids)
            process = subprocess.Popen(command(server, data, store), stderr=subprocess.DEVNULL)
            # a random moment after the run has started talking to the model (starting takes seconds on a
            # loaded machine, so a fixed delay could kill every run before its first request)
            _wait_for_an_answer(server, before, process)
            time.sleep(rng.uniform(0.1, 1.5))
            if process.poll() is not None:
                break
            process.send_signal(signal.SIGKILL)
            process.wait()
            progress.append(_stored(store))
            now = _cached_answers(cache_of(store))
            left.append(len(now - cached))
            cached |= now
        finished = subprocess.run(command(server, data, store), capture_output=True, text=True)
        asked: dict[str, list[str]] = defaultdict(list)
        for answer, request in server.answer_ids.items():
            asked[json.dumps(request, sort_keys=True)].append(answer)
    assert finished.returncode == 0, finished.stderr
    print("trajectories stored at each kill:", progress, "replies each killed run left cached:", left)
    assert any(0 < done < 3 * 16 for done in progress), f"no kill landed mid-run: {progress}"
    assert any(left), f"no killed run left a reply in the response cache: {left}"
    assert exported(store) == exported(tmp_path / "whole.sqlite")
    for body, answers in asked.items():
        # a request may come again only if its answer was in flight at a kill: sent, but not yet in the cache
        # (the server answered a dead client, or the client died between reading and writing); no clock
        stored = [answer for answer in answers[:-1] if answer in cached]
        assert not stored, f"{stored} were in the cache at a kill, yet asked for again: {body[-200:]}"
    assert {answers[-1] for answers in asked.values()} <= _cached_answers(cache_of(store))


def cache_of(store: Path) -> Path:
    """The response cache :func:`command` gives ``store``."""
    return store.with_name(f"{store.stem}-responses.sqlite")


def _cached_answers(cache: Path) -> set[str]:
    """The ids of the answers the response cache holds (none where it does not exist yet)."""
    if not cache.exists():
        return set()
    with closing(sqlite3.connect(cache)) as db:
        try:
            rows = db.execute("SELECT reply FROM responses").fetchall()
        except sqlite3.OperationalError:  # killed before the table was made
            return set()
    return {str(json.loads(text)["raw"]["id"]) for (text,) in rows}


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


def _wait_for_an_answer(server: FakeOpenAI, before: int, process: subprocess.Popen[bytes]) -> None:
    """Until the server has answered more than ``before`` requests (or the run ended; at most 120 s)."""
    deadline = time.monotonic() + 120
    while len(server.answer_ids) <= before and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
