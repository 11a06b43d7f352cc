"""``local:OWNER/REPO/FILE.gguf`` downloads through refinelab's one fetcher from the stand-in hub on
127.0.0.1 (``HF_ENDPOINT``), the one the benchmark downloads use: pinned by commit, checked against its
SHA-256, renamed into the cache only when complete; a wrong checksum, an unreachable hub or a missing file is
one line and leaves nothing in the cache; a cut download is resumed; offline, only the cache is read."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from refinelab._downloads import HubFile
from refinelab.errors import UserError
from refinelab.models._local_files import fetch_hub_file, resolve_local
from refinelab.testing import StandInHub, serve_standin

CONTENT = b"GGUF" + bytes(range(256)) * 64
SHA = hashlib.sha256(CONTENT).hexdigest()


def environ(tmp_path: Path, hub: StandInHub | None = None, endpoint: str | None = None) -> dict[str, str]:
    return {"REFINELAB_CACHE_DIR": str(tmp_path / "cache"), "HF_ENDPOINT": endpoint or (hub.url if hub else "")}


def cached_files(tmp_path: Path) -> list[str]:
    """Every file under the cache's model folder except the notes on hashes."""
    root = tmp_path / "cache" / "models"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "hashes" not in p.parts)


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[StandInHub]:
    with serve_standin(tmp_path / "hub") as server:
        yield server


def served(commit: str, name: str = "tiny.gguf") -> str:
    """The stand-in's path of a file of the test repository (for its faults)."""
    return f"huggingface/models/someone/tiny-GGUF/{commit}/{name}"


def test_download_is_pinned_verified_and_then_offline(hub: StandInHub, tmp_path: Path) -> None:
    commit = hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    found = resolve_local("someone/tiny-GGUF/tiny.gguf", environ(tmp_path, hub))
    gets = [r.path for r in hub.requests if r.method == "GET"]
    assert found.path == tmp_path / "cache/models/hf/someone/tiny-GGUF" / commit / "tiny.gguf"
    assert found.path.read_bytes() == CONTENT and found.sha256 == SHA
    assert gets == [f"/cdn/{SHA}"]  # one download, from the storage host the hub redirected to
    assert cached_files(tmp_path) == [
        f"hf/someone/tiny-GGUF/{commit}/tiny.gguf",
        f"hf/someone/tiny-GGUF/{commit}/tiny.gguf.verified.json",
        "hf/someone/tiny-GGUF/refs/main",
    ]
    # the hub is gone: the pinned commit's file is used without asking
    again = resolve_local("someone/tiny-GGUF/tiny.gguf", environ(tmp_path, endpoint="http://127.0.0.1:9"))
    assert again.path == found.path and again.sha256 == SHA


def test_a_branch_stays_pinned_to_the_commit_of_the_first_download(hub: StandInHub, tmp_path: Path) -> None:
    first = hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    resolve_local("someone/tiny-GGUF/tiny.gguf@main", environ(tmp_path, hub))
    newer = hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT + b"v2")
    later = resolve_local("someone/tiny-GGUF/tiny.gguf@main", environ(tmp_path, hub))
    explicit = resolve_local(f"someone/tiny-GGUF/tiny.gguf@{newer}", environ(tmp_path, hub))
    assert first in str(later.path) and later.sha256 == SHA
    assert explicit.path.read_bytes() == CONTENT + b"v2"


def test_a_wrong_checksum_leaves_nothing_in_the_cache(hub: StandInHub, tmp_path: Path) -> None:
    commit = hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    hub.corrupt.add(served(commit))  # the bytes served differ from the hash the hub declares
    with pytest.raises(UserError, match="SHA-256 is .* expected " + SHA) as raised:
        resolve_local("someone/tiny-GGUF/tiny.gguf", environ(tmp_path, hub))
    assert "\n" not in str(raised.value) and "local:PATH.gguf" in str(raised.value)
    assert cached_files(tmp_path) == []


def test_a_pinned_hash_the_hub_contradicts_is_refused_before_downloading(hub: StandInHub, tmp_path: Path) -> None:
    commit = hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    pinned = HubFile("someone/tiny-GGUF", "tiny.gguf", commit, sha256="0" * 64)
    with pytest.raises(UserError, match=f"the hub's SHA-256 is {SHA}, not the pinned 0000"):
        fetch_hub_file(pinned, environ(tmp_path, hub))
    assert [r.method for r in hub.requests] == ["HEAD"]
    assert cached_files(tmp_path) == []


def test_a_pinned_hash_is_checked_against_the_bytes(hub: StandInHub, tmp_path: Path) -> None:
    commit = hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    hub.corrupt.add(served(commit))
    with pytest.raises(UserError, match=f"expected {SHA} \\(pinned\\)"):
        fetch_hub_file(HubFile("someone/tiny-GGUF", "tiny.gguf", commit, sha256=SHA), environ(tmp_path, hub))
    assert cached_files(tmp_path) == []


def test_a_cut_download_is_resumed_where_it_stopped(hub: StandInHub, tmp_path: Path) -> None:
    commit = hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    hub.cut[served(commit)] = 4000  # each connection closes after 4,000 bytes: three are not enough
    with pytest.raises(UserError, match="12,000 bytes are kept and running again resumes"):
        resolve_local("someone/tiny-GGUF/tiny.gguf", environ(tmp_path, hub))
    hub.cut.clear()
    hub.requests.clear()
    found = resolve_local("someone/tiny-GGUF/tiny.gguf", environ(tmp_path, hub))
    assert found.path.read_bytes() == CONTENT and found.sha256 == SHA
    assert [r.range for r in hub.requests if r.method == "GET"] == ["bytes=12000-"]


def test_offline_the_cache_is_read_and_nothing_else_is_asked(hub: StandInHub, tmp_path: Path) -> None:
    hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    offline = {**environ(tmp_path, hub), "HF_HUB_OFFLINE": "1"}
    with pytest.raises(UserError, match=r"downloads are off .*HF_HUB_OFFLINE.*local:PATH.gguf"):
        resolve_local("someone/tiny-GGUF/tiny.gguf", offline)
    assert hub.requests == []
    found = resolve_local("someone/tiny-GGUF/tiny.gguf", environ(tmp_path, hub))
    hub.requests.clear()
    assert resolve_local("someone/tiny-GGUF/tiny.gguf", {**offline, "REFINELAB_OFFLINE": "1"}).path == found.path
    assert hub.requests == []


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_hub_is_one_line(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(UserError, match=f"cannot reach the Hugging Face hub at {endpoint}") as raised:
        resolve_local("someone/tiny-GGUF/tiny.gguf", environ(tmp_path, endpoint=endpoint))
    assert "\n" not in str(raised.value) and "local:PATH.gguf" in str(raised.value)
    assert not (tmp_path / "cache" / "models" / "hf").exists() or cached_files(tmp_path) == []


@pytest.mark.parametrize(
    ("label", "message"),
    [
        ("someone/tiny-GGUF/other.gguf", "no file 'other.gguf' in someone/tiny-GGUF"),
        ("someone/tiny-GGUF/tiny.gguf@v9", "no revision 'v9'"),
        ("nobody/absent-GGUF/tiny.gguf", "no such repo"),
    ],
)
def test_what_the_hub_does_not_have_is_named(hub: StandInHub, tmp_path: Path, label: str, message: str) -> None:
    hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    with pytest.raises(UserError, match=message):
        resolve_local(label, environ(tmp_path, hub))
    assert cached_files(tmp_path) == []


def test_the_cli_says_it_in_one_line_and_exits_2(tmp_path: Path) -> None:
    env = {**environ(tmp_path, endpoint=f"http://127.0.0.1:{_closed_port()}"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "refinelab", "ping", "local:someone/tiny-GGUF/tiny.gguf"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "cannot reach the Hugging Face hub" in done.stderr


def test_a_download_says_how_far_it_got(hub: StandInHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commit = hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    seen: list[tuple[str, int, int]] = []
    fetch_hub_file(HubFile("someone/tiny-GGUF", "tiny.gguf", commit), environ(tmp_path, hub), lambda *a: seen.append(a))
    assert seen[-1] == ("downloading tiny.gguf", len(CONTENT), len(CONTENT)) and capsys.readouterr().err == ""
    resolve_local("someone/tiny-GGUF/tiny.gguf", environ(tmp_path / "other", hub))  # no hook: tenths on stderr
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1] == "refinelab: downloading tiny.gguf: 100% of 0.0 MB" and len(lines) <= 11
