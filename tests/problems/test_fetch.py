"""Benchmark downloads by name against the stand-in hub on 127.0.0.1: verified, cached, offline afterwards;
refused whole (nothing left in the cache) when the bytes, the size or the record count are wrong; resumed
where they stopped when the connection fails or the process is killed."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from refinelab._downloads import forget_hashes
from refinelab.errors import UserError
from refinelab.problems import FetchOptions, open_benchmark, read_benchmark
from refinelab.problems._fetch import cached_path
from refinelab.problems._manifest import APPS, HUMANEVAL_PLUS, LIVECODEBENCH_FILES, PinnedFile
from refinelab.testing import StandInHub, serve_standin

LCB = LIVECODEBENCH_FILES[0]
RECORDS = [
    {
        "question_id": f"q{i}",
        "question_title": f"Echo {i}",
        "question_content": "Print the input.",
        "platform": "atcoder",
        "contest_id": "x",
        "contest_date": f"2024-0{i + 1}-01T00:00:00",
        "starter_code": "",
        "difficulty": "easy",
        "public_test_cases": json.dumps([{"input": f"{i}\n", "output": f"{i}\n", "testtype": "stdin"}]),
        "private_test_cases": "",
        "metadata": "{}",
    }
    for i in range(3)
]
CONTENT = "".join(json.dumps(r) + "\n" for r in RECORDS).encode()


def served(root: Path, pinned: PinnedFile, data: bytes, *, small: bool = False) -> str:
    """Put ``data`` where the stand-in serves ``pinned``; its path relative to ``root``."""
    relative = Path(
        "huggingface", "datasets", pinned.repo, pinned.revision, pinned.path + (".git-blob" if small else "")
    )
    if pinned.host == "github":
        relative = Path("github", pinned.repo, "releases", "download", pinned.revision, pinned.path)
    (root / relative).parent.mkdir(parents=True, exist_ok=True)
    (root / relative).write_bytes(data)
    return relative.as_posix().removesuffix(".git-blob")


def manifest(tmp_path: Path, pinned: PinnedFile, content: bytes, *, sha: bool = True, records: int = 3) -> Path:
    path = tmp_path / "manifest.toml"
    lines = [
        "[[files]]",
        f'host = "{pinned.host}"',
        f'repo = "{pinned.repo}"',
        f'path = "{pinned.path}"',
        f'revision = "{pinned.revision}"',
        f"records = {records}",
    ]
    if sha:
        lines.append(f'sha256 = "{hashlib.sha256(content).hexdigest()}"')
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[StandInHub]:
    with serve_standin(tmp_path / "root") as server:
        yield server


def options(hub: StandInHub, tmp_path: Path, **more: str) -> FetchOptions:
    environ = {**hub.environ(), "REFINELAB_BENCHMARK_MANIFEST": str(tmp_path / "manifest.toml"), **more}
    return FetchOptions(tmp_path / "cache", environ)


def cached_files(tmp_path: Path) -> list[Path]:
    return sorted(p for p in (tmp_path / "cache").rglob("*") if p.is_file())


def test_a_download_is_verified_recorded_and_read_offline_afterwards(hub: StandInHub, tmp_path: Path) -> None:
    served(hub.root, LCB, CONTENT)
    manifest(tmp_path, LCB, CONTENT)
    seen: list[tuple[str, int, int]] = []
    first = open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path))
    files = first.provenance.files
    assert [f.name for f in files] == ["test.jsonl"] and files[0].sha256 == hashlib.sha256(CONTENT).hexdigest()
    assert files[0].records == 3 and files[0].size == len(CONTENT)
    assert first.provenance.source == "huggingface:livecodebench/code_generation_lite"
    assert first.provenance.revision == LCB.revision and first.provenance.release == "v1"
    assert first.provenance.manifest.startswith(str(tmp_path / "manifest.toml"))
    assert [p.id for p in read_benchmark(first)] == ["q0", "q1", "q2"]
    hub.shutdown()
    hub.server_close()  # the hub is gone: the second open must not need it
    again = FetchOptions(tmp_path / "cache", options(hub, tmp_path).environ, lambda *a: seen.append(a))
    second = open_benchmark("livecodebench", release="v1", options=again)
    assert second.provenance == first.provenance and second.paths == first.paths and not seen


def test_progress_counts_bytes(hub: StandInHub, tmp_path: Path) -> None:
    served(hub.root, LCB, CONTENT)
    manifest(tmp_path, LCB, CONTENT)
    seen: list[tuple[str, int, int]] = []
    hooked = FetchOptions(tmp_path / "cache", options(hub, tmp_path).environ, lambda *a: seen.append(a))
    open_benchmark("livecodebench", release="v1", options=hooked)
    assert seen and seen[-1] == ("downloading test.jsonl", len(CONTENT), len(CONTENT))


def test_bytes_that_do_not_match_the_pinned_hash_are_refused_and_nothing_is_kept(
    hub: StandInHub, tmp_path: Path
) -> None:
    hub.corrupt.add(served(hub.root, LCB, CONTENT))
    manifest(tmp_path, LCB, CONTENT)
    with pytest.raises(UserError) as refused:
        open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path))
    message = str(refused.value)
    assert "test.jsonl" in message and "SHA-256" in message and "--data FILE" in message and "\n" not in message
    assert cached_files(tmp_path) == []


def test_without_a_pinned_hash_the_hubs_own_hash_is_checked(hub: StandInHub, tmp_path: Path) -> None:
    relative = served(hub.root, APPS, CONTENT)
    manifest(tmp_path, APPS, CONTENT, sha=False)
    hub.corrupt.add(relative)
    with pytest.raises(UserError, match="hub's sha256"):
        open_benchmark("apps", options=options(hub, tmp_path))
    assert cached_files(tmp_path) == []
    hub.corrupt.clear()
    files = open_benchmark("apps", options=options(hub, tmp_path))
    assert files.provenance.files[0].sha256 == hashlib.sha256(CONTENT).hexdigest()


def test_a_small_hub_file_is_checked_against_its_git_blob_id(hub: StandInHub, tmp_path: Path) -> None:
    relative = served(hub.root, APPS, CONTENT, small=True)
    manifest(tmp_path, APPS, CONTENT, sha=False)
    hub.corrupt.add(relative + ".git-blob")
    with pytest.raises(UserError, match="git blob SHA-1"):
        open_benchmark("apps", options=options(hub, tmp_path))
    hub.corrupt.clear()
    assert open_benchmark("apps", options=options(hub, tmp_path)).provenance.files[0].records == 3


def test_a_hub_that_resolves_the_revision_to_another_commit_is_refused(hub: StandInHub, tmp_path: Path) -> None:
    served(hub.root, LCB, CONTENT)
    manifest(tmp_path, LCB, CONTENT)
    hub.commit = "f" * 40
    with pytest.raises(UserError, match="another commit"):
        open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path))
    assert cached_files(tmp_path) == []


def test_a_wrong_record_count_is_refused(hub: StandInHub, tmp_path: Path) -> None:
    served(hub.root, LCB, CONTENT)
    manifest(tmp_path, LCB, CONTENT, records=4)
    with pytest.raises(UserError, match="3 records, not the pinned 4"):
        open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path))
    assert cached_files(tmp_path) == []


def test_a_dropped_connection_is_resumed_where_it_stopped(hub: StandInHub, tmp_path: Path) -> None:
    relative = served(hub.root, LCB, CONTENT)
    manifest(tmp_path, LCB, CONTENT)
    hub.cut[relative] = len(CONTENT) // 2 + 1
    files = open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path))
    assert files.provenance.files[0].sha256 == hashlib.sha256(CONTENT).hexdigest()
    assert [r.range for r in hub.requests if r.method == "GET"] == [None, f"bytes={len(CONTENT) // 2 + 1}-"]


def test_a_download_cut_short_for_good_keeps_what_arrived_and_the_next_one_resumes(
    hub: StandInHub, tmp_path: Path
) -> None:
    relative = served(hub.root, LCB, CONTENT)
    manifest(tmp_path, LCB, CONTENT)
    hub.cut[relative] = 100  # each connection closes after 100 bytes: three connections are not enough
    with pytest.raises(UserError) as refused:
        open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path))
    message = str(refused.value)
    assert "cannot download" in message and "test.jsonl" in message and "\n" not in message
    assert "300 bytes are kept and running again resumes" in message and "--data FILE" in message
    path = cached_path(LCB, tmp_path / "cache")
    assert not path.exists() and not path.with_name("test.jsonl.verified.json").exists()
    assert [p.stat().st_size for p in path.parent.glob(".test.jsonl.*.partial")] == [300]
    hub.cut.clear()
    hub.requests.clear()
    files = open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path))
    assert files.paths[0].read_bytes() == CONTENT
    assert [r.range for r in hub.requests if r.method == "GET"] == ["bytes=300-"]
    assert [p.name for p in cached_files(tmp_path)] == ["test.jsonl", "test.jsonl.verified.json"]


def test_an_unreachable_hub_is_one_line_naming_the_file_and_data(tmp_path: Path) -> None:
    with serve_standin(tmp_path / "root") as gone:
        environ = gone.environ()
    manifest(tmp_path, LCB, CONTENT)
    environ["REFINELAB_BENCHMARK_MANIFEST"] = str(tmp_path / "manifest.toml")
    with pytest.raises(UserError) as refused:
        open_benchmark("livecodebench", release="v1", options=FetchOptions(tmp_path / "cache", environ))
    message = str(refused.value)
    assert "test.jsonl" in message and "--data FILE" in message and "\n" not in message
    assert cached_files(tmp_path) == []


def test_offline_without_the_file_in_the_cache_says_so_and_asks_nothing(hub: StandInHub, tmp_path: Path) -> None:
    served(hub.root, LCB, CONTENT)
    manifest(tmp_path, LCB, CONTENT)
    with pytest.raises(UserError, match="HF_HUB_OFFLINE"):
        open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path, HF_HUB_OFFLINE="1"))
    assert hub.requests == []


def test_a_corrupted_cache_is_refused(hub: StandInHub, tmp_path: Path) -> None:
    served(hub.root, LCB, CONTENT)
    manifest(tmp_path, LCB, CONTENT)
    files = open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path))
    path = files.paths[0]
    data = bytearray(path.read_bytes())
    data[10] ^= 1
    path.write_bytes(bytes(data))
    forget_hashes()  # as a new process would
    with pytest.raises(UserError, match="cached benchmark file refused") as refused:
        open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path))
    assert str(path) in str(refused.value) and "delete it" in str(refused.value)


def test_a_release_asset_is_checked_compressed_and_decompressed(hub: StandInHub, tmp_path: Path) -> None:
    plus = b'{"task_id": "HumanEval/0"}\n'
    packed = gzip.compress(plus, mtime=0)
    relative = served(hub.root, HUMANEVAL_PLUS, packed)
    path = tmp_path / "manifest.toml"
    path.write_text(
        textwrap.dedent(f"""\
        [[files]]
        host = "github"
        repo = "evalplus/humanevalplus_release"
        path = "HumanEvalPlus.jsonl.gz"
        revision = "v0.1.10"
        records = 1
        sha256 = "{hashlib.sha256(plus).hexdigest()}"
        download_sha256 = "{hashlib.sha256(packed).hexdigest()}"
        """)
    )
    files = open_benchmark("humaneval-plus", options=options(hub, tmp_path))
    assert files.paths[0].name == "HumanEvalPlus.jsonl" and files.paths[0].read_bytes() == plus
    assert files.provenance.files[0].name == "HumanEvalPlus.jsonl"
    assert ("GET", f"/{relative}") in [(r.method, r.path) for r in hub.requests]
    hub.corrupt.add(relative)
    for file in cached_files(tmp_path):
        file.unlink()
    with pytest.raises(UserError, match="download SHA-256"):
        open_benchmark("humaneval-plus", options=options(hub, tmp_path))


def test_the_real_humanevalplus_asset_passes_the_built_in_pins(
    hub: StandInHub, tmp_path: Path, shared_data: Path
) -> None:
    """The shared file is evalplus's v0.1.10 asset byte for byte: refinelab's own pins accept it."""
    served(hub.root, HUMANEVAL_PLUS, (shared_data / "benchmarks/humanevalplus-v0.1.10.jsonl.gz").read_bytes())
    files = open_benchmark("humaneval-plus", options=FetchOptions(tmp_path / "cache", hub.environ()))
    assert files.provenance.manifest == "pinned" and files.provenance.files[0].records == 164
    assert files.provenance.files[0].sha256 == HUMANEVAL_PLUS.sha256


KILLED = """
import sys
from pathlib import Path
from refinelab.problems import FetchOptions, open_benchmark
environ = dict(arg.split("=", 1) for arg in sys.argv[2:])
open_benchmark("livecodebench", release="v1", options=FetchOptions(Path(sys.argv[1]), environ))
"""


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_a_killed_download_leaves_only_its_partial_file_and_the_next_one_resumes(
    hub: StandInHub, tmp_path: Path, how: signal.Signals
) -> None:
    relative = served(hub.root, LCB, CONTENT)
    manifest(tmp_path, LCB, CONTENT)
    hub.stall[relative] = 1000
    environ = [f"{k}={v}" for k, v in options(hub, tmp_path).environ.items()]
    child = subprocess.Popen([sys.executable, "-c", KILLED, str(tmp_path / "cache"), *environ])
    path = cached_path(LCB, tmp_path / "cache")
    try:
        deadline = time.monotonic() + 60
        while partial_size(path) < 1000 and time.monotonic() < deadline:  # the event: the first bytes are kept
            time.sleep(0.05)
        assert partial_size(path) == 1000
        os.kill(child.pid, how)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert not path.exists() and not path.with_name("test.jsonl.verified.json").exists()
    hub.stall.clear()
    hub.requests.clear()
    files = open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path))
    assert files.paths[0].read_bytes() == CONTENT and files.provenance.files[0].records == 3
    assert [r.range for r in hub.requests if r.method == "GET"] == ["bytes=1000-"]
    assert [p.name for p in cached_files(tmp_path)] == ["test.jsonl", "test.jsonl.verified.json"]


def partial_size(path: Path) -> int:
    """Bytes in the partial download of ``path`` (0 when there is none yet)."""
    return sum(p.stat().st_size for p in path.parent.glob(f".{path.name}.*.partial")) if path.parent.is_dir() else 0


def test_the_network_modules_load_only_to_download() -> None:
    code = "import sys, refinelab.problems; print(sorted({'huggingface_hub', 'urllib.request'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_refused_download_removes_its_partial_file_and_the_next_one_starts_afresh(
    hub: StandInHub, tmp_path: Path
) -> None:
    relative = served(hub.root, LCB, CONTENT)
    manifest(tmp_path, LCB, CONTENT)
    hub.corrupt.add(relative)
    with pytest.raises(UserError, match="SHA-256"):
        open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path))
    assert cached_files(tmp_path) == [] and partial_size(cached_path(LCB, tmp_path / "cache")) == 0
    hub.corrupt.clear()
    hub.requests.clear()
    files = open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path))
    assert files.paths[0].read_bytes() == CONTENT
    assert [r.range for r in hub.requests if r.method == "GET"] == [None]


def test_a_partial_file_for_other_bytes_is_not_resumed(hub: StandInHub, tmp_path: Path) -> None:
    served(hub.root, LCB, CONTENT)
    manifest(tmp_path, LCB, CONTENT)
    stale = cached_path(LCB, tmp_path / "cache").with_name(".test.jsonl.0123456789abcdef.partial")
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"left by a download of other bytes")
    files = open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path))
    assert files.paths[0].read_bytes() == CONTENT and not stale.exists()
    assert [r.range for r in hub.requests if r.method == "GET"] == [None]
    assert [p.name for p in cached_files(tmp_path)] == ["test.jsonl", "test.jsonl.verified.json"]


def test_a_download_stopped_after_its_last_byte_is_verified_without_asking_for_the_bytes_again(
    hub: StandInHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from refinelab._downloads.fetcher import _Download

    served(hub.root, LCB, CONTENT)
    manifest(tmp_path, LCB, CONTENT)

    def stopped(self: _Download, handle: object, size: int) -> str:
        raise KeyboardInterrupt  # as a Ctrl-C between the last byte and the check

    with monkeypatch.context() as patched:
        patched.setattr(_Download, "_verified", stopped)
        with pytest.raises(KeyboardInterrupt):
            open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path))
    assert partial_size(cached_path(LCB, tmp_path / "cache")) == len(CONTENT)
    hub.requests.clear()
    files = open_benchmark("livecodebench", release="v1", options=options(hub, tmp_path))
    assert files.paths[0].read_bytes() == CONTENT and [r.method for r in hub.requests] == ["HEAD"]
