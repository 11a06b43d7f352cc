"""Every benchmark by name, end to end, against the stand-in hub serving the shared data in the upstream
layout (see tests/problems/standin.py): downloaded into an empty cache, self-tested, then read again
with the server stopped; a corrupted file refused; a killed download leaving nothing; a run recording
what it read, and another run id for other bytes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.experiment import ExperimentSpec
from refinelab.problems import FetchOptions, open_benchmark, read_benchmark, read_humanevalplus
from refinelab.problems._manifest import LIVECODEBENCH_FILES
from refinelab.store import Store
from refinelab.testing import StandInHub, serve, serve_standin
from tests.problems.standin import build, served_path

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    shared = Path(os.environ.get("REFINELAB_SHARED_DATA") or ROOT.parent / "shared" / "data")
    if not shared.is_dir():
        pytest.skip(f"shared benchmark data not found at {shared} (only present in the project workspace)")
    pytest.importorskip("pyarrow")
    root = tmp_path_factory.mktemp("standin")
    return root, build(shared, root)


@pytest.fixture
def hub(layout: tuple[Path, Path]) -> Iterator[StandInHub]:
    with serve_standin(layout[0]) as server:
        yield server


def environ(hub: StandInHub, layout: tuple[Path, Path], cache: Path) -> dict[str, str]:
    return {
        **hub.environ(),
        "REFINELAB_BENCHMARK_MANIFEST": str(layout[1]),
        "REFINELAB_CACHE_DIR": str(cache),
        "HOME": str(cache.parent),
    }


def files_in(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*") if p.is_file() and "benchmarks" in p.parts)


SELF_TESTED = ["livecodebench", "mbpp", "mbpp-sanitized", "apps", "codecontests", "mbpp-plus"]


def test_each_benchmark_by_name_downloads_self_tests_and_reads_offline_afterwards(
    hub: StandInHub, layout: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    env = environ(hub, layout, cache)
    for name in SELF_TESTED:
        # a generous limit: MBPP/123's reference needs about 6 CPU s on a slow machine, over the default 4 s;
        # this test is about downloads and offline reads, not the time rule
        code = main(["check", "--self-test", "--benchmark", name, "--workers", "2", "--timeout", "60"], env)
        out, err = capsys.readouterr()
        assert code == 0, (name, out, err)
        assert f"benchmark: {name}" in err and "sha256" in err and "0 discrepancies" in out, (name, out, err)
    plus = open_benchmark("humaneval-plus", options=FetchOptions(cache, env))  # its self-test takes minutes
    assert plus.provenance.manifest == "pinned" and len(list(read_humanevalplus(plus.paths[0]))) == 164
    hub.shutdown()
    hub.server_close()
    before = {p: p.stat().st_mtime_ns for p in files_in(cache)}
    for name in [*SELF_TESTED, "humaneval-plus"]:
        again = open_benchmark(name, options=FetchOptions(cache, env))
        assert all(path.is_file() for path in again.paths)
    assert {p: p.stat().st_mtime_ns for p in files_in(cache)} == before  # nothing was downloaded again
    window = ["--release", "release_v5", "--after", "2024-12-20", "--before", "2025-01-01"]
    assert main(["check", "--self-test", "--benchmark", "livecodebench", *window, "--workers", "2"], env) == 0
    out, err = capsys.readouterr()
    assert "release_v5" in err and "0 discrepancies" in out


def test_the_default_livecodebench_release_is_the_latest(
    hub: StandInHub, layout: tuple[Path, Path], tmp_path: Path
) -> None:
    env = environ(hub, layout, tmp_path / "cache")
    files = open_benchmark("livecodebench", options=FetchOptions(tmp_path / "cache", env))
    assert files.provenance.release == "release_v6" and len(files.paths) == 6
    assert len(read_benchmark(files)) == 879 + 2  # the stand-in's v1..v5 and its two-problem v6


def test_a_corrupted_download_is_refused_in_one_line_and_leaves_nothing(
    hub: StandInHub, layout: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    hub.corrupt.add(served_path(layout[0], LIVECODEBENCH_FILES[4]).relative_to(layout[0]).as_posix())
    code = main(
        ["check", "--self-test", "--benchmark", "livecodebench", "--release", "v5"], environ(hub, layout, cache)
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith("refinelab: error: test5.jsonl (huggingface:livecodebench/code_generation_lite") and (
        "--data FILE" in err
    )
    assert files_in(cache) == []


def test_a_killed_check_leaves_only_a_partial_download_which_the_next_check_resumes(
    hub: StandInHub, layout: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    served = served_path(layout[0], LIVECODEBENCH_FILES[4]).relative_to(layout[0]).as_posix()
    hub.stall[served] = 100_000
    command = [sys.executable, "-m", "refinelab", "check", "--self-test", "--benchmark", "livecodebench"]
    child = subprocess.Popen(
        [*command, "--release", "v5"],
        env={**os.environ, **environ(hub, layout, cache)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while partial_bytes(cache) < 100_000 and time.monotonic() < deadline:  # the event: what arrived is kept
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert partial_bytes(cache) == 100_000
    assert [p for p in files_in(cache) if not p.name.endswith(".partial")] == []
    hub.stall.clear()
    hub.requests.clear()
    code = main(
        ["check", "--self-test", "--benchmark", "livecodebench", "--release", "v5"], environ(hub, layout, cache)
    )
    assert code == 0, capsys.readouterr()
    assert [r.range for r in hub.requests if r.method == "GET"] == ["bytes=100000-"]
    assert [p.name for p in files_in(cache)] == ["test5.jsonl", "test5.jsonl.verified.json"]


def partial_bytes(cache: Path) -> int:
    return sum(p.stat().st_size for p in cache.rglob("*.partial"))


def test_a_run_records_what_it_read_and_other_bytes_make_another_run(
    hub: StandInHub, layout: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.experiment.fakes import reply

    cache, store = tmp_path / "cache", tmp_path / "s.sqlite"
    env = environ(hub, layout, cache)
    one_off = ["--benchmark", "livecodebench", "--release", "v5", "--after", "2024-12-25", "--strategy", "single-pass"]
    with serve(reply) as model:
        args = ["run", *one_off, "--model", "fake", "--base-url", model.base_url, "--store", str(store), "--quiet"]
        assert main(args, env) == 0
        with Store(store) as opened:
            first = opened.run()
        (choice,) = ExperimentSpec.from_json(first.spec).benchmarks
        assert choice.source is not None and choice.source.release == "v5"
        assert [f.name for f in choice.source.files] == ["test5.jsonl"]
        assert main(["report", "--store", str(store)], env) == 0
        report = capsys.readouterr().out
        assert "benchmark: livecodebench v5 · huggingface:livecodebench/code_generation_lite @ 0fe84c3912ea" in report
        assert f"test5.jsonl: 166 records · {choice.source.files[0].size:,} bytes · sha256" in report
        hub.shutdown()
        hub.server_close()
        assert main(args, env) == 0  # offline: the same files, the same run
        with Store(store) as opened:
            assert [r.id for r in opened.runs()] == [first.id]
        blocks = Path(env["REFINELAB_BENCHMARK_MANIFEST"]).read_text().split("[[files]]")
        moved = tmp_path / "other.toml"  # test5.jsonl at another revision: another run
        revision = LIVECODEBENCH_FILES[4].revision
        blocks = [b.replace(revision, "1" * 40) if 'path = "test5.jsonl"' in b else b for b in blocks]
        moved.write_text("[[files]]".join(blocks))
        ahead = served_path(layout[0], LIVECODEBENCH_FILES[4])
        target = ahead.parents[1] / ("1" * 40) / ahead.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(ahead.read_bytes())
        with serve_standin(layout[0]) as again:
            assert main(args, {**env, **again.environ(), "REFINELAB_BENCHMARK_MANIFEST": str(moved)}) == 0
        with Store(store) as opened:
            assert len(opened.runs()) == 2
