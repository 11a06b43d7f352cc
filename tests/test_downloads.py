"""The one fetcher (``refinelab._downloads``) and the one stand-in hub (``refinelab.testing.StandInHub``):
the stand-in answers ``huggingface_hub``'s own client as the hub does, for model and dataset repositories
alike; caches filled before benchmark and model files shared a fetcher are read as they are, offline, with
the same provenance; release files come over plain HTTP with the same resume and checks."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from refinelab._downloads import FetchOptions, Gunzip, HubFile, Keep, ReleaseFile, fetch, forget_hashes
from refinelab.errors import UserError
from refinelab.models._local_files import fetch_hub_file, resolve_local
from refinelab.problems import FetchOptions as BenchmarkOptions
from refinelab.problems import open_benchmark
from refinelab.problems._fetch import cached_path
from refinelab.problems._manifest import HUMANEVAL_PLUS, LIVECODEBENCH_FILES
from refinelab.testing import StandInHub, serve_standin

CONTENT = b"GGUF" + bytes(range(256)) * 64
SHA = hashlib.sha256(CONTENT).hexdigest()


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[StandInHub]:
    with serve_standin(tmp_path / "hub") as server:
        yield server


@pytest.mark.parametrize("repo_type", ["model", "dataset"])
def test_the_stand_in_answers_the_hubs_own_client_as_the_hub_does(
    hub: StandInHub, repo_type: str, tmp_path: Path
) -> None:
    import huggingface_hub
    from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError

    kind = "model" if repo_type == "model" else "dataset"
    commit = hub.add("someone/repo", "dir/file.bin", CONTENT, repo_type=kind)  # type: ignore[arg-type]

    def metadata(
        repo: str = "someone/repo", path: str = "dir/file.bin", revision: str = "main"
    ) -> huggingface_hub.HfFileMetadata:
        url = huggingface_hub.hf_hub_url(repo, path, repo_type=repo_type, revision=revision, endpoint=hub.url)
        return huggingface_hub.get_hf_file_metadata(url)

    meta = metadata()
    assert meta.commit_hash == commit and meta.etag == SHA and meta.size == len(CONTENT)
    assert meta.location == f"{hub.cdn_url}/cdn/{SHA}"
    with pytest.raises(RepositoryNotFoundError):
        metadata(repo="nobody/absent")
    with pytest.raises(RevisionNotFoundError):
        metadata(revision="v9")
    with pytest.raises(EntryNotFoundError):
        metadata(path="other.bin")
    got = huggingface_hub.hf_hub_download(
        "someone/repo",
        "dir/file.bin",
        repo_type=repo_type,
        revision=commit,
        cache_dir=tmp_path / "hf",
        endpoint=hub.url,
    )
    assert Path(got).read_bytes() == CONTENT  # the hub client's own download works against it too


def test_a_range_request_is_answered_with_the_rest(hub: StandInHub) -> None:
    import urllib.request

    hub.add("someone/repo", "file.bin", CONTENT)
    request = urllib.request.Request(f"{hub.cdn_url}/cdn/{SHA}", headers={"Range": "bytes=100-"})
    with urllib.request.urlopen(request) as response:
        assert (
            response.status == 206
            and response.headers["Content-Range"] == f"bytes 100-{len(CONTENT) - 1}/{len(CONTENT)}"
        )
        assert response.read() == CONTENT[100:]


def old_benchmark_cache(cache: Path, content: bytes, records: int) -> Path:
    """A LiveCodeBench file as refinelab kept it before the shared fetcher: the file and its record."""
    pinned = LIVECODEBENCH_FILES[0]
    path = cached_path(pinned, cache)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    sha = hashlib.sha256(content).hexdigest()
    record = {"name": "test.jsonl", "sha256": sha, "size": len(content), "records": records}
    extra = {"source": pinned.source, "revision": pinned.revision, "path": pinned.path}
    path.with_name("test.jsonl.verified.json").write_text(json.dumps({**record, **extra}, indent=1) + "\n")
    return path


def test_a_benchmark_cache_from_before_is_read_as_it_is_with_the_same_provenance(
    hub: StandInHub, tmp_path: Path
) -> None:
    content = b'{"question_id": "q0"}\n{"question_id": "q1"}\n'
    manifest = tmp_path / "manifest.toml"
    sha = hashlib.sha256(content).hexdigest()
    manifest.write_text(
        f'[[files]]\nhost = "huggingface"\nrepo = "{LIVECODEBENCH_FILES[0].repo}"\npath = "test.jsonl"\n'
        f'revision = "{LIVECODEBENCH_FILES[0].revision}"\nrecords = 2\nsha256 = "{sha}"\n'
    )
    path = old_benchmark_cache(tmp_path / "cache", content, 2)
    before = path.stat().st_mtime_ns
    environ = {**hub.environ(), "REFINELAB_BENCHMARK_MANIFEST": str(manifest), "HF_HUB_OFFLINE": "1"}
    files = open_benchmark("livecodebench", release="v1", options=BenchmarkOptions(tmp_path / "cache", environ))
    assert files.paths == (path,) and hub.requests == [] and path.stat().st_mtime_ns == before
    record = files.provenance.files[0]
    assert (record.name, record.sha256, record.size, record.records) == ("test.jsonl", sha, len(content), 2)


def old_model_cache(cache: Path, commit: str, content: bytes) -> Path:
    """A model file as refinelab kept it before the shared fetcher: the file (no record) and its branch's commit."""
    folder = cache / "models" / "hf" / "someone" / "tiny-GGUF"
    (folder / commit).mkdir(parents=True)
    (folder / commit / "tiny.gguf").write_bytes(content)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(json.dumps({"commit": commit}))
    return folder / commit / "tiny.gguf"


def test_a_model_cache_from_before_is_read_without_downloading(hub: StandInHub, tmp_path: Path) -> None:
    path = old_model_cache(tmp_path / "cache", "a" * 40, CONTENT)
    environ = {"REFINELAB_CACHE_DIR": str(tmp_path / "cache"), "HF_ENDPOINT": hub.url, "HF_HUB_OFFLINE": "1"}
    found = resolve_local("someone/tiny-GGUF/tiny.gguf", environ)
    assert found.path == path and found.sha256 == SHA and hub.requests == []
    assert json.loads(path.with_name("tiny.gguf.verified.json").read_text())["sha256"] == SHA  # adopted once
    assert resolve_local("someone/tiny-GGUF/tiny.gguf", environ).sha256 == SHA


def test_an_old_model_file_that_is_not_the_pinned_one_is_refused(hub: StandInHub, tmp_path: Path) -> None:
    old_model_cache(tmp_path / "cache", "a" * 40, CONTENT + b"edited")
    environ = {"REFINELAB_CACHE_DIR": str(tmp_path / "cache"), "HF_ENDPOINT": hub.url}
    with pytest.raises(UserError, match=f"cached model file refused: its SHA-256 is .*, not the pinned {SHA}"):
        fetch_hub_file(HubFile("someone/tiny-GGUF", "tiny.gguf", "a" * 40, sha256=SHA), environ)
    assert hub.requests == []


def test_a_cached_model_file_edited_in_place_is_refused(hub: StandInHub, tmp_path: Path) -> None:
    hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    environ = {"REFINELAB_CACHE_DIR": str(tmp_path / "cache"), "HF_ENDPOINT": hub.url}
    path, _ = fetch_hub_file(HubFile("someone/tiny-GGUF", "tiny.gguf"), environ)
    data = bytearray(path.read_bytes())
    data[10] ^= 1
    path.write_bytes(bytes(data))  # same size; another modification time
    forget_hashes()
    with pytest.raises(UserError, match=r"cached model file refused: its SHA-256 is .*delete it"):
        fetch_hub_file(HubFile("someone/tiny-GGUF", "tiny.gguf"), environ)


def release_asset(hub: StandInHub) -> tuple[bytes, bytes, str]:
    """A gzip asset on the stand-in's release host: (content, the asset's bytes, its path for faults)."""
    content = b"".join(b'{"task_id": "HumanEval/%d", "pad": "%s"}\n' % (i, b"x" * 200) for i in range(64))
    packed = gzip.compress(content, mtime=0)
    asset = hub.root / "github" / HUMANEVAL_PLUS.repo / "releases/download" / HUMANEVAL_PLUS.revision / "a.jsonl.gz"
    asset.parent.mkdir(parents=True)
    asset.write_bytes(packed)
    return content, packed, asset.relative_to(hub.root).as_posix()


def asset_file(sha256: str) -> ReleaseFile:
    return ReleaseFile(HUMANEVAL_PLUS.repo, HUMANEVAL_PLUS.revision, "a.jsonl.gz", asset=True, sha256=sha256)


def test_a_release_asset_comes_over_plain_http_resumed_and_checked_twice(hub: StandInHub, tmp_path: Path) -> None:
    content, packed, relative = release_asset(hub)
    keep = Keep("release file", "download it yourself", Gunzip("a.jsonl", hashlib.sha256(content).hexdigest()))
    options = FetchOptions(tmp_path / "cache", hub.environ())
    file = asset_file(hashlib.sha256(packed).hexdigest())
    hub.cut[relative] = len(packed) // 4
    with pytest.raises(UserError, match=f"{3 * (len(packed) // 4):,} bytes are kept and running again resumes"):
        fetch(file, options, keep)
    hub.cut.clear()
    hub.requests.clear()
    fetched = fetch(file, options, keep)
    assert [r.range for r in hub.requests] == [f"bytes={3 * (len(packed) // 4)}-"]
    assert fetched.path.name == "a.jsonl" and fetched.path.read_bytes() == content
    assert fetched.sha256 == hashlib.sha256(content).hexdigest() and fetched.size == len(content)
    assert sorted(p.name for p in fetched.path.parent.iterdir()) == ["a.jsonl", "a.jsonl.verified.json"]


@pytest.mark.parametrize("wrong", ["download", "content"])
def test_a_release_asset_that_is_not_the_pinned_one_is_refused_whole(
    hub: StandInHub, tmp_path: Path, wrong: str
) -> None:
    content, packed, _ = release_asset(hub)
    download, unpacked = hashlib.sha256(packed).hexdigest(), hashlib.sha256(content).hexdigest()
    expected = {"download": (SHA, unpacked), "content": (download, SHA)}[wrong]
    keep = Keep("release file", "download it yourself", Gunzip("a.jsonl", expected[1]))
    with pytest.raises(UserError, match=f"{wrong} SHA-256 is .*, expected {SHA} \\(pinned\\); nothing was kept"):
        fetch(asset_file(expected[0]), FetchOptions(tmp_path / "cache", hub.environ()), keep)
    assert [p for p in (tmp_path / "cache").rglob("*") if p.is_file()] == []


def test_a_cached_model_file_is_hashed_again_only_when_it_changed(
    hub: StandInHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model of gigabytes is loaded at every start: its hash is taken again only when its size or modification
    time differ from those recorded when it arrived (a benchmark file is hashed again by each process)."""
    from refinelab._downloads import fetcher

    hub.add("someone/tiny-GGUF", "tiny.gguf", CONTENT)
    environ = {"REFINELAB_CACHE_DIR": str(tmp_path / "cache"), "HF_ENDPOINT": hub.url}
    path, _ = fetch_hub_file(HubFile("someone/tiny-GGUF", "tiny.gguf"), environ)
    hashed: list[Path] = []

    def spy(p: Path) -> str:
        hashed.append(p)
        return SHA

    monkeypatch.setattr(fetcher, "file_sha256", spy)
    forget_hashes()
    assert fetch_hub_file(HubFile("someone/tiny-GGUF", "tiny.gguf"), environ) == (path, SHA) and hashed == []
    os.utime(path, ns=(0, 0))
    assert fetch_hub_file(HubFile("someone/tiny-GGUF", "tiny.gguf"), environ) == (path, SHA) and hashed == [path]
