"""``local:OWNER/REPO/FILE.gguf`` downloads through ``huggingface_hub`` from a stand-in hub on 127.0.0.1
(``HF_ENDPOINT``): pinned by commit, checked against its SHA-256, renamed into the cache only when complete;
a wrong checksum, an unreachable hub or a missing file is one line and leaves nothing in the cache."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from refinelab.errors import UserError
from refinelab.models._hub import fetch
from refinelab.models._local_files import HubFile, models_dir, resolve_local
from tests.models.fake_hub import FakeHub, serve_hub

pytest.importorskip("huggingface_hub", reason="the download tests need huggingface_hub (the local extra)")

CONTENT = b"GGUF" + bytes(range(256)) * 64
SHA = hashlib.sha256(CONTENT).hexdigest()


def environ(tmp_path: Path, hub: FakeHub | None = None, endpoint: str | None = None) -> dict[str, str]:
    return {"REFINELAB_CACHE_DIR": str(tmp_path / "cache"), "HF_ENDPOINT": endpoint or (hub.endpoint if hub else "")}


def cached_files(tmp_path: Path) -> list[str]:
    """Every file under the cache's model folder except the notes on hashes and pinned refs."""
    root = tmp_path / "cache" / "models"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "hashes" not in p.parts)


def test_download_is_pinned_verified_and_then_offline(tmp_path: Path) -> None:
    hub = FakeHub()
    commit = hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    with serve_hub(hub):
        found = resolve_local("someone/tiny-GGUF/tiny.gguf", environ(tmp_path, hub))
        gets = [path for method, path in hub.requests if method == "GET"]
    assert found.path == tmp_path / "cache/models/hf/someone/tiny-GGUF" / commit / "tiny.gguf"
    assert found.path.read_bytes() == CONTENT and found.sha256 == SHA
    assert gets == [f"/cdn/{SHA}"]  # one download, from the storage host the hub redirected to
    assert cached_files(tmp_path) == [f"hf/someone/tiny-GGUF/{commit}/tiny.gguf", "hf/someone/tiny-GGUF/refs/main"]
    # the hub is gone: the pinned commit's file is used without asking
    again = resolve_local("someone/tiny-GGUF/tiny.gguf", environ(tmp_path, endpoint="http://127.0.0.1:9"))
    assert again.path == found.path and again.sha256 == SHA


def test_a_branch_stays_pinned_to_the_commit_of_the_first_download(tmp_path: Path) -> None:
    hub = FakeHub()
    first = hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    with serve_hub(hub):
        resolve_local("someone/tiny-GGUF/tiny.gguf@main", environ(tmp_path, hub))
        hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT + b"v2")
        later = resolve_local("someone/tiny-GGUF/tiny.gguf@main", environ(tmp_path, hub))
        newer = hub.branches[("someone/tiny-GGUF", "main")]
        explicit = resolve_local(f"someone/tiny-GGUF/tiny.gguf@{newer}", environ(tmp_path, hub))
    assert first in str(later.path) and later.sha256 == SHA
    assert explicit.path.read_bytes() == CONTENT + b"v2"


def test_a_wrong_checksum_leaves_nothing_in_the_cache(tmp_path: Path) -> None:
    hub = FakeHub()
    hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    hub.corrupt.add("tiny.gguf")  # the bytes served differ from the hash the hub declares
    with serve_hub(hub), pytest.raises(UserError, match="SHA-256 is .* expected " + SHA) as raised:
        resolve_local("someone/tiny-GGUF/tiny.gguf", environ(tmp_path, hub))
    assert "\n" not in str(raised.value)
    assert cached_files(tmp_path) == []
    assert not any(p.name.startswith(".downloading") for p in (tmp_path / "cache").rglob("*"))


def test_a_pinned_hash_the_hub_contradicts_is_refused_before_downloading(tmp_path: Path) -> None:
    hub = FakeHub()
    commit = hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    pinned = HubFile("someone/tiny-GGUF", "tiny.gguf", commit, "0" * 64)
    with serve_hub(hub), pytest.raises(UserError, match=f"the hub's SHA-256 is {SHA}, not the pinned 0000"):
        fetch(pinned, models_dir(environ(tmp_path, hub)), environ(tmp_path, hub))
    assert [method for method, _ in hub.requests] == ["HEAD"]
    assert cached_files(tmp_path) == []


def test_a_pinned_hash_is_checked_against_the_bytes(tmp_path: Path) -> None:
    hub = FakeHub()
    commit = hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    hub.corrupt.add("tiny.gguf")
    with serve_hub(hub), pytest.raises(UserError, match=f"expected {SHA}"):
        fetch(HubFile("someone/tiny-GGUF", "tiny.gguf", commit, SHA), tmp_path / "models", environ(tmp_path, hub))
    assert not list((tmp_path / "models").rglob("*.gguf"))


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_hub_is_one_line(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(UserError, match=f"cannot reach the Hugging Face hub at {endpoint}") as raised:
        resolve_local("someone/tiny-GGUF/tiny.gguf", environ(tmp_path, endpoint=endpoint))
    assert "\n" not in str(raised.value)
    assert not (tmp_path / "cache" / "models" / "hf").exists() or cached_files(tmp_path) == []


@pytest.mark.parametrize(
    ("label", "message"),
    [
        ("someone/tiny-GGUF/other.gguf", "no file 'other.gguf' in someone/tiny-GGUF"),
        ("someone/tiny-GGUF/tiny.gguf@v9", "no revision 'v9'"),
        ("nobody/absent-GGUF/tiny.gguf", "no such repo"),
    ],
)
def test_what_the_hub_does_not_have_is_named(tmp_path: Path, label: str, message: str) -> None:
    hub = FakeHub()
    hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    with serve_hub(hub), pytest.raises(UserError, match=message):
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
