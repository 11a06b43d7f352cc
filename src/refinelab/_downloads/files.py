"""What can be downloaded (a file in a Hugging Face repository, a file on a release host) and where each
is kept in the cache folder.

The layout is the one benchmark and model files had before they shared a fetcher, so caches filled by
earlier versions are read as they are:

``benchmarks/huggingface/OWNER/NAME/REVISION/PATH``   a file in a dataset repository
``benchmarks/github/OWNER/NAME/REVISION/PATH``        a release asset or a file at a commit
``models/hf/OWNER/NAME/COMMIT/PATH``                  a file in a model repository
``models/hf/OWNER/NAME/refs/BRANCH``                  the commit a branch or tag was pinned to at its first
                                                      download (``{"commit": ...}``)

Beside each file, ``PATH.verified.json`` records what was verified when it arrived.
"""

from __future__ import annotations

import json
import re
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Literal

from refinelab._files import write_atomically

RepoType = Literal["model", "dataset"]
"""The kind of Hugging Face repository a file is in (the hub serves them under different URLs)."""

COMMIT = re.compile(r"[0-9a-f]{40}")
"""A full git commit id."""


@dataclass(frozen=True)
class HubFile:
    """One file in a Hugging Face repository, at a revision."""

    repo: str
    """``OWNER/NAME``."""
    path: str
    """The file's path in the repository."""
    revision: str = "main"
    """A commit (pinned), or a branch or tag (pinned to its commit at the first download)."""
    _: KW_ONLY
    repo_type: RepoType = "model"
    """A model or a dataset repository."""
    sha256: str | None = None
    """The SHA-256 the bytes must have; None: the hub's own hash for the commit is checked instead."""
    size: int | None = None
    """The size in bytes the file must have, where known."""


@dataclass(frozen=True)
class ReleaseFile:
    """One file on a release host laid out as GitHub (``$REFINELAB_RELEASE_URL``, default github.com)."""

    repo: str
    """``OWNER/NAME``."""
    revision: str
    """A release tag (for an asset) or a commit (for a file at a commit)."""
    path: str
    """The asset's name, or the file's path at the commit."""
    _: KW_ONLY
    asset: bool = False
    """A release asset (``releases/download/TAG/NAME``) rather than a file at a commit (``raw/COMMIT/PATH``)."""
    sha256: str | None = None
    """The SHA-256 the bytes must have (a release host gives none of its own, so one must be pinned)."""
    size: int | None = None
    """The size in bytes the file must have, where known."""


RemoteFile = HubFile | ReleaseFile
"""Anything the fetcher downloads."""


def source(file: RemoteFile) -> str:
    """``huggingface:OWNER/NAME`` or ``github:OWNER/NAME``: where the file comes from, in messages and records."""
    return f"{'huggingface' if isinstance(file, HubFile) else 'github'}:{file.repo}"


def describe(file: RemoteFile, name: str | None = None) -> str:
    """``test5.jsonl (huggingface:livecodebench/code_generation_lite @ 0fe84c3912ea)``: the file in messages."""
    return f"{name or file.path} ({source(file)} @ {file.revision[:12]})"


def repo_folder(file: RemoteFile, cache_dir: Path) -> Path:
    """The cache folder of the file's repository (see the module docstring)."""
    if isinstance(file, ReleaseFile):
        return cache_dir / "benchmarks" / "github" / file.repo
    if file.repo_type == "dataset":
        return cache_dir / "benchmarks" / "huggingface" / file.repo
    return cache_dir / "models" / "hf" / file.repo


def cached_path(file: RemoteFile, cache_dir: Path, commit: str, name: str | None = None) -> Path:
    """Where ``file`` at ``commit`` is kept (under ``name`` when it is kept under another name)."""
    return repo_folder(file, cache_dir) / commit / (name or file.path)


def known_commit(file: RemoteFile, cache_dir: Path) -> str | None:
    """The commit ``file`` is kept under without asking the hub: its revision when that is a commit (or a
    release host's revision), else the commit its branch was pinned to at the first download, if any."""
    if isinstance(file, ReleaseFile) or COMMIT.fullmatch(file.revision):
        return file.revision
    try:
        commit = json.loads(_ref(file, cache_dir).read_text(encoding="utf-8")).get("commit")
    except (OSError, ValueError, AttributeError):
        return None
    return commit if isinstance(commit, str) and COMMIT.fullmatch(commit) else None


def pin_commit(file: RemoteFile, cache_dir: Path, commit: str) -> None:
    """Remember the commit a branch or tag named (nothing to remember for a commit)."""
    if isinstance(file, HubFile) and not COMMIT.fullmatch(file.revision):
        _ref(file, cache_dir).parent.mkdir(parents=True, exist_ok=True)
        write_atomically(_ref(file, cache_dir), json.dumps({"commit": commit}) + "\n")


def _ref(file: HubFile, cache_dir: Path) -> Path:
    return repo_folder(file, cache_dir) / "refs" / file.revision
