"""The pinned sources of the benchmarks refinelab downloads: where each file lives, at which revision,
how many records it holds and what it must hash to; and the releases as upstream spells them.

Where every pinned number comes from is written in docs/problems.md ("Pinned sources"). A SHA-256 is
pinned only where it is established (several independent records of upstream's bytes, or bytes
checked here against such a record); for a hub file without one, the hub's own content hash for the
pinned revision (the LFS SHA-256 it reports) is checked against the bytes instead.

``$REFINELAB_BENCHMARK_MANIFEST`` names a TOML file whose ``[[files]]`` entries replace pinned entries
(matched by host, repo and path): for a mirror holding other bytes, or a test stand-in. A run made
with one records the file and its hash.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, Protocol

from refinelab._toml import located, read_toml
from refinelab.errors import UserError

Host = Literal["huggingface", "github"]
"""Where a pinned file lives: a Hugging Face dataset repository, or GitHub (a release asset or a file
at a commit)."""


@dataclass(frozen=True)
class PinnedFile:
    """One upstream file, pinned."""

    host: Host
    """``huggingface`` (dataset repository) or ``github``."""
    repo: str
    """``OWNER/NAME``."""
    revision: str
    """A commit (hub, GitHub file) or a release tag (GitHub release asset)."""
    path: str
    """Path in the repository, or the release asset's name."""
    records: int
    """Records the file holds (JSON Lines lines, JSON list items, Parquet rows)."""
    sha256: str | None = None
    """SHA-256 of the content as kept in the cache (a ``.gz`` asset is kept decompressed); None where it
    is not established, and the hub's own hash is checked instead."""
    size: int | None = None
    """Bytes of that content, where established."""
    asset: bool = False
    """A GitHub release asset (``releases/download/TAG/NAME``) rather than a file at a commit."""
    download_sha256: str | None = None
    """SHA-256 of a compressed asset as downloaded, where established."""

    @property
    def gzip(self) -> bool:
        """The bytes are gzip-compressed and kept decompressed."""
        return self.path.endswith(".gz")

    @property
    def cached_name(self) -> str:
        """The file's name in the cache."""
        return self.path[: -len(".gz")] if self.gzip else self.path

    @property
    def source(self) -> str:
        """``huggingface:OWNER/NAME`` or ``github:OWNER/NAME``."""
        return f"{self.host}:{self.repo}"


@dataclass(frozen=True)
class Release:
    """What one release of a benchmark is made of."""

    tag: str | None
    """The release as recorded (``release_v6`` for ``release_latest``); None for a benchmark without releases."""
    files: tuple[PinnedFile, ...]
    """The files, in order."""
    subset: str | None = None
    """Keep only this part of the files' problems: an APPS difficulty (``interview``) or an MBPP split
    (``test``); None keeps all."""


LIVECODEBENCH_REPO = "livecodebench/code_generation_lite"
LIVECODEBENCH_REVISION = "0fe84c3912ea0c4d4a78037083943e8f0c4dd505"
_LCB = (
    ("test.jsonl", 400, 1_252_609_773, "2bd02b38beb48e8c46b5b9987095d999ff38cd8efc255ea5d58974317c48f63f"),
    ("test2.jsonl", 111, 713_377_060, "095df7c5daf15f882c51a9deb84085cff1e073495a5dbcf95015a564d485f3a3"),
    ("test3.jsonl", 101, 623_360_766, "28ed26cc83363ce3f1fe2d5fad9f8393077beb1907b167a31bd3b32f80801b79"),
    ("test4.jsonl", 101, 1_204_644_685, "d711138ddaebfcf5f8ec6a4283ee677298c0f5c5d374a235af92aaf0584510da"),
    ("test5.jsonl", 167, 557_699_297, "7f77571c2a6df0c2a72a3277650309f67e01e0008e18117e624633df53f81214"),
    ("test6.jsonl", 175, 134_303_240, "bb4c364f71921c4495a6ad15abe1a927350b720009f4933e2e71f8af0f6fd1f5"),
)
LIVECODEBENCH_FILES = tuple(
    PinnedFile("huggingface", LIVECODEBENCH_REPO, LIVECODEBENCH_REVISION, name, records, sha256=sha, size=size)
    for name, records, size, sha in _LCB
)
"""LiveCodeBench's six release files at the pinned revision: ``testN.jsonl`` is what release vN added."""

HUMANEVAL_PLUS = PinnedFile(
    "github",
    "evalplus/humanevalplus_release",
    "v0.1.10",
    "HumanEvalPlus.jsonl.gz",
    164,
    sha256="42526ec0e7d5f3ee0b06d6ced98f8c8bae3d76519151bfb3d36f79010645bd7f",
    size=7_714_666,
    asset=True,
    download_sha256="272720b90ac375502c8ed23cd791c2a93dfb22a911641a494da74a426c09f101",
)
MBPP_PLUS = PinnedFile(
    "github",
    "evalplus/mbppplus_release",
    "v0.2.0",
    "MbppPlus.jsonl.gz",
    378,
    sha256="b54e762755248ca411b523c917fa9f93c07b5ff2966bf60b3917b853926a3dad",
    asset=True,
    download_sha256="af43697e8791c4c149bdfd6b489d8b5412507551ac20e28a439f650b8225db63",
)
MBPP_COMMIT = "f82046ba5aabbbb427dbfd38a254d26bff08b533"
"""The google-research commit that last changed ``mbpp/mbpp.jsonl``."""
MBPP = PinnedFile(
    "github",
    "google-research/google-research",
    MBPP_COMMIT,
    "mbpp/mbpp.jsonl",
    974,
    sha256="ccf64ceae9c5403bf50a044cb6d505bfd2a2963ee58338ba268fd65beab92a9f",
    size=563_743,
)
MBPP_SANITIZED = PinnedFile(
    "github",
    "google-research/google-research",
    MBPP_COMMIT,
    "mbpp/sanitized-mbpp.json",
    427,
    sha256="ca95deaa9a01ef0a6f439f88bcf0dd3db3563d22f22aad6cae04ebb9a8d8c8e9",
    size=255_053,
)
APPS = PinnedFile(
    "huggingface",
    "codeparrot/apps",
    "21e74ddf8de1a21436da12e3e653065c5213e9d1",
    "test.jsonl",
    5000,
    size=1_292_436_853,
)
"""APPS's test split. Its SHA-256 is not pinned (the records found disagree): the hub's LFS hash is checked."""
CODECONTESTS = PinnedFile(
    "huggingface",
    "deepmind/code_contests",
    "802411c3010cb00d1b05bad57ca77365a3c699d6",
    "data/test-00000-of-00001-9c49eeff30aacaa8.parquet",
    165,
    sha256="aa426cbdb202bf8703b658bcb31fd1878ca7cfd33ca07d3b703dc94ca6a2b651",
    size=63_077_400,
)

APPS_DIFFICULTIES = ("introductory", "interview", "competition")
"""APPS's configurations besides ``all``: one difficulty each."""
MBPP_SPLITS = {"test": (11, 510), "validation": (511, 600), "train": (601, 974), "prompt": (1, 10)}
"""MBPP's splits by task id, as its README gives them (the sanitized set inherits them)."""


class Releases(Protocol):
    """How a benchmark's releases map to pinned files (a benchmark record's ``releases``)."""

    def release(self, benchmark: str, tag: str | None) -> Release:
        """The files of release ``tag`` (None: the default), or a user error listing the tags."""
        ...


@dataclass(frozen=True)
class OneRelease:
    """One pinned file; ``version`` its only release (None: the benchmark has no releases)."""

    version: str | None
    """The release as recorded."""
    file: PinnedFile
    """The file."""

    def release(self, benchmark: str, tag: str | None) -> Release:
        """The file, when ``tag`` is None or the pinned version."""
        if tag is not None and tag != self.version:
            have = f"only {self.version}" if self.version else "no releases"
            raise UserError(f"{benchmark}: unknown release {tag!r}; refinelab pins {have}")
        return Release(self.version, (self.file,))


@dataclass(frozen=True)
class PartsOfOneFile:
    """One pinned file whose releases are parts of it (an APPS difficulty, an MBPP split)."""

    file: PinnedFile
    """The file."""
    default: str
    """The release when none is named."""
    others: tuple[str, ...]
    """The other releases; ``all`` and ``full`` keep every problem."""

    def release(self, benchmark: str, tag: str | None) -> Release:
        """The file, and the part ``tag`` keeps."""
        tag = tag or self.default
        if tag not in (self.default, *self.others):
            choices = f"{self.default} (default), {', '.join(self.others)}"
            raise UserError(f"{benchmark}: unknown release {tag!r}; choose {choices}")
        return Release(tag, (self.file,), None if tag in ("all", "full") else tag)


@dataclass(frozen=True)
class LiveCodeBenchReleases:
    """LiveCodeBench's release files: ``release_vN`` (cumulative), ``release_latest``, ``vN`` (what vN
    added) and ``vA_vB`` (vA to vB)."""

    def release(self, benchmark: str, tag: str | None) -> Release:
        """The files of ``tag`` (default ``release_latest``)."""
        return _livecodebench(tag or "release_latest")


def _livecodebench(tag: str) -> Release:
    """``release_vN`` (cumulative), ``release_latest``, ``vN`` (what vN added) and ``vA_vB`` (vA to vB)."""
    count = len(LIVECODEBENCH_FILES)
    if tag == "release_latest":
        tag = f"release_v{count}"
    if match := re.fullmatch(r"release_v(\d+)", tag):
        first, last = 1, int(match.group(1))
    elif match := re.fullmatch(r"v(\d+)", tag):
        first = last = int(match.group(1))
    elif match := re.fullmatch(r"v(\d+)_v(\d+)", tag):
        first, last = int(match.group(1)), int(match.group(2))
    else:
        first, last = 0, -1
    if not 1 <= first <= last <= count or (tag.startswith("v") and "_" in tag and first == last):
        raise UserError(
            f"livecodebench: unknown release {tag!r}; choose release_v1 … release_v{count} (cumulative), "
            f"release_latest, v1 … v{count} (one release's additions) or vA_vB (A < B)"
        )
    return Release(tag, LIVECODEBENCH_FILES[first - 1 : last])


MANIFEST_VARIABLE = "REFINELAB_BENCHMARK_MANIFEST"
"""Environment variable naming a manifest that replaces pinned entries."""
_KEYS = {"host", "repo", "path", "revision", "records", "sha256", "size", "download_sha256"}


@dataclass(frozen=True)
class Manifest:
    """Replacements for pinned entries, from ``$REFINELAB_BENCHMARK_MANIFEST``."""

    label: str
    """``pinned``, or ``FILE sha256:HASH``."""
    entries: Mapping[tuple[Host, str, str], PinnedFile]
    """By (host, repo, path)."""

    def pin(self, pinned: PinnedFile) -> PinnedFile:
        """The entry to use for ``pinned``."""
        return self.entries.get((pinned.host, pinned.repo, pinned.path), pinned)

    def replaces(self, pinned: PinnedFile) -> bool:
        """True when this manifest has its own entry for ``pinned``."""
        return (pinned.host, pinned.repo, pinned.path) in self.entries


PINNED = Manifest("pinned", {})
"""No replacements."""


def manifest_from(environ: Mapping[str, str]) -> Manifest:
    """The manifest ``$REFINELAB_BENCHMARK_MANIFEST`` names, or :data:`PINNED`."""
    named = environ.get(MANIFEST_VARIABLE)
    if not named:
        return PINNED
    path = Path(named)
    table = read_toml(path)
    files = table.get("files")
    if not isinstance(files, list) or not all(isinstance(f, dict) for f in files):
        raise located(path, "files", "must be an array of tables ([[files]] with host, repo, path, revision, records)")
    entries: dict[tuple[Host, str, str], PinnedFile] = {}
    for index, entry in enumerate(files):
        pinned = _entry(path, index, entry)
        entries[(pinned.host, pinned.repo, pinned.path)] = pinned
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return Manifest(f"{path} sha256:{digest[:16]}", entries)


def _entry(path: Path, index: int, entry: dict[str, object]) -> PinnedFile:
    where = f"files[{index}]."
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise located(path, where + unknown[0], f"unknown key; known: {', '.join(sorted(_KEYS))}")
    for key in ("host", "repo", "path", "revision"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise located(path, where + key, "missing or not a string")
    if entry["host"] not in ("huggingface", "github"):
        raise located(path, where + "host", "must be huggingface or github")
    for key in ("sha256", "download_sha256"):
        value = entry.get(key)
        if value is not None and not (isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value)):
            raise located(path, where + key, "must be 64 lowercase hex digits")
    for key in ("records", "size"):
        value = entry.get(key)
        if (value is not None or key == "records") and (not isinstance(value, int) or isinstance(value, bool)):
            raise located(path, where + key, "must be an integer")
    replaced = _ALL.get((str(entry["host"]), str(entry["repo"]), str(entry["path"])))
    if replaced is None:
        raise located(path, where + "path", "matches no pinned file (host, repo and path must name one)")
    return replace(
        replaced,
        revision=str(entry["revision"]),
        records=int(str(entry["records"])),
        sha256=_optional_str(entry.get("sha256")),
        size=int(str(entry["size"])) if entry.get("size") is not None else None,
        download_sha256=_optional_str(entry.get("download_sha256")),
    )


def _optional_str(value: object) -> str | None:
    return None if value is None else str(value)


_ALL: dict[tuple[str, str, str], PinnedFile] = {
    (f.host, f.repo, f.path): f
    for f in (*LIVECODEBENCH_FILES, HUMANEVAL_PLUS, MBPP_PLUS, MBPP, MBPP_SANITIZED, APPS, CODECONTESTS)
}
"""Every pinned file, by (host, repo, path)."""
