"""Hashes, and the record kept beside each verified file (``NAME.verified.json``).

The record holds the SHA-256 and size of the file as verified when it arrived, where it came from, the
modification time it was given, and whatever else the caller checked (a benchmark's record count). It is
written before the file gets its name, so a file with a name always has one; a crash between the two leaves
a record without a file, which the next download replaces.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO

_HASHED: dict[tuple[str, int, int], str] = {}
"""SHA-256 of files this process has hashed, by (path, size, mtime): a file is hashed once per process."""

OWN_KEYS = frozenset({"name", "sha256", "size", "source", "revision", "path", "mtime_ns"})
"""The record's own keys; any other key is a detail the caller recorded (``records``)."""


def file_sha256(path: Path) -> str:
    """SHA-256 of a file (remembered for the rest of the process while its size and mtime stay)."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _HASHED:
        with path.open("rb") as handle:
            _HASHED[key] = sha256_of(handle)
    return _HASHED[key]


def forget_hashes() -> None:
    """Forget what this process has hashed, as a new process would (for benchmarks of a cached read)."""
    _HASHED.clear()


def sha256_of(handle: BinaryIO) -> str:
    """SHA-256 of an open file's whole content."""
    handle.seek(0)
    digest = hashlib.sha256()
    while chunk := handle.read(1 << 20):
        digest.update(chunk)
    return digest.hexdigest()


def git_blob_sha1(handle: BinaryIO, size: int) -> str:
    """git's object id of an open file's content: what the hub gives as the ETag of a file kept in git, not LFS."""
    handle.seek(0)
    digest = hashlib.sha1(f"blob {size}\0".encode())  # noqa: S324 - git's object id, not security
    while chunk := handle.read(1 << 20):
        digest.update(chunk)
    return digest.hexdigest()


def sidecar(path: Path) -> Path:
    """Where the record of ``path`` is kept."""
    return path.with_name(path.name + ".verified.json")


def read_record(path: Path) -> Mapping[str, object]:
    """The record beside ``path``; ``ValueError`` when it is missing a field or unreadable."""
    data = json.loads(sidecar(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("sha256"), str) or not isinstance(data.get("size"), int):
        raise ValueError("not a verification record")
    return data
