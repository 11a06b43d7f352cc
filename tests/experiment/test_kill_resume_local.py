"""kill -9 a ``refinelab run`` on a real local model (Gemma 3 270M, in-process llama.cpp, requests decoded
together) at random moments; running it again must finish with results identical to an uninterrupted run's
(greedy and seeded samples, decoded beside other sequences than before), and no prompt whose reply was
stored before a kill may be generated again (its stored reply, with the id of that generation, must be the
one the finished run used)."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.experiment.fakes import write_benchmark
from tests.experiment.test_runner import exported

STRATEGIES = [
    "single-pass(max_tokens=12)",
    "exec-refine(max_tokens=12, max_iters=2)",
    "sampling(n=3, max_tokens=12, temperature=0.8, seed=3)",  # samples decoded together, each cached when done
]


def command(data: Path, store: Path) -> list[str]:
    args = [sys.executable, "-m", "refinelab", "run", "--benchmark", "jsonl", "--data", str(data)]
    args += ["--model", "local:gemma-3-270m"]
    for strategy in STRATEGIES:
        args += ["--strategy", strategy]
    cache = store.with_name(f"{store.stem}-responses.sqlite")
    return [*args, "--store", str(store), "--cache", str(cache), "--concurrency", "2", "--quiet"]


def generations(store: Path) -> dict[str, str]:
    """Cache key -> the id the local backend gave the generation stored for it."""
    cache = store.with_name(f"{store.stem}-responses.sqlite")
    if not cache.exists():
        return {}
    with sqlite3.connect(cache) as db:
        try:
            rows = db.execute("SELECT key, reply FROM responses").fetchall()
        except sqlite3.OperationalError:  # killed before the table was made
            return {}
    return {key: str(json.loads(reply)["raw"]["id"]) for key, reply in rows}


@pytest.mark.slow
def test_kill_9_a_local_run_then_resume_generates_nothing_twice(
    local_model_env: dict[str, str], tmp_path: Path
) -> None:
    data = write_benchmark(tmp_path / "problems.jsonl", n=4)
    whole = subprocess.run(
        command(data, tmp_path / "whole.sqlite"), env=local_model_env, capture_output=True, text=True
    )
    assert whole.returncode == 0, whole.stderr
    killed, snapshots, rng = tmp_path / "killed.sqlite", [], random.Random(19)
    for _ in range(3):
        before = len(generations(killed))
        process = subprocess.Popen(command(data, killed), env=local_model_env, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        while len(generations(killed)) == before and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)  # killed only once it has generated something, at a random moment after
        time.sleep(rng.uniform(0.2, 3.0))
        if process.poll() is not None:
            break
        process.send_signal(signal.SIGKILL)
        process.wait()
        snapshots.append(generations(killed))
    finished = subprocess.run(command(data, killed), env=local_model_env, capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    assert snapshots and 0 < len(snapshots[0]) < len(generations(killed)), "no kill landed mid-run"
    assert exported(killed) == exported(tmp_path / "whole.sqlite")
    final = generations(killed)
    for snapshot in snapshots:
        regenerated = [key for key, generation in snapshot.items() if final[key] != generation]
        assert not regenerated, f"{len(regenerated)} stored prompts were generated again after a kill"
