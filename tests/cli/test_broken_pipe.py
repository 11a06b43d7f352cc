"""``refinelab run ... 2>&1 | head``: when the reader of the output goes away, the run goes on, is stored
whole and marked complete (it used to stop half done, marked failed, on the first progress line after the
pipe closed); the command then exits as a process killed by SIGPIPE would, without a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from refinelab.store import Store
from refinelab.testing import serve
from tests.experiment.fakes import reply, write_benchmark


def test_a_run_whose_reader_went_away_is_stored_whole_and_complete(tmp_path: Path) -> None:
    data, store = write_benchmark(tmp_path / "b.jsonl", 30), tmp_path / "s.sqlite"
    with serve(reply) as server:
        command = [sys.executable, "-m", "refinelab", "run", "--benchmark", "jsonl", "--data", str(data),
                   "--strategy", "single-pass", "--strategy", "self-refine(max_iters=2)", "--model", "m",
                   "--base-url", server.base_url, "--store", str(store)]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp_path)
        assert process.stdout is not None
        first = process.stdout.readline()  # as `head -1` reads, then goes away
        process.stdout.close()
        code = process.wait(timeout=300)
    assert first.startswith(b"run ")
    assert code == 141
    with Store(store) as opened:
        (listing,) = opened.listing()
    assert (listing.info.status, listing.done, listing.total) == ("complete", 60, 60)
