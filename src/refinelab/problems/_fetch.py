"""Pinned benchmark files into the cache, through refinelab's one fetcher (:mod:`refinelab._downloads`).

Layout: ``CACHE/benchmarks/HOST/OWNER/NAME/REVISION/PATH`` (a ``.gz`` release asset is kept
decompressed), and beside each file ``PATH.verified.json``: its SHA-256, size and record count as
verified when it arrived. A cached file is hashed again whenever a process first reads it, so a
corrupted or edited file is refused, never used.

What this module adds to the fetcher is what makes a file a benchmark's: its record count is checked
before it is kept, and what the user can do instead is ``--data FILE``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO

from refinelab._downloads import FetchOptions, Gunzip, HubFile, Keep, ReleaseFile, RemoteFile, describe
from refinelab._downloads import cached_path as _cached_path
from refinelab._downloads import fetch as _fetch
from refinelab.errors import UserError
from refinelab.problems._counting import count_records
from refinelab.problems._manifest import PinnedFile
from refinelab.problems._provenance import FileRecord

OTHERWISE = "pass a local copy with --data FILE"
"""What a user can do instead of downloading a benchmark file."""


def cached_path(pinned: PinnedFile, cache_dir: Path) -> Path:
    """Where ``pinned`` is kept."""
    return _cached_path(_remote(pinned), cache_dir, pinned.revision, pinned.cached_name)


def fetch(pinned: PinnedFile, options: FetchOptions) -> tuple[Path, FileRecord]:
    """``pinned``'s verified local copy, downloading it first when it is not in the cache."""
    fetched = _fetch(_remote(pinned), options, _keep(pinned))
    records = fetched.details.get("records")
    if not isinstance(records, int):
        raise UserError(
            f"{fetched.path}: cached benchmark file refused: its verification record has no record count; "
            f"delete it to download it again, or {OTHERWISE}"
        )
    return fetched.path, FileRecord(pinned.cached_name, fetched.sha256, fetched.size, records)


def _remote(pinned: PinnedFile) -> RemoteFile:
    """The file as the fetcher knows it: the bytes as downloaded (a ``.gz`` asset's own hash, if pinned)."""
    if pinned.host == "huggingface":
        return HubFile(
            pinned.repo, pinned.path, pinned.revision, repo_type="dataset", sha256=pinned.sha256, size=pinned.size
        )
    if pinned.gzip:
        return ReleaseFile(pinned.repo, pinned.revision, pinned.path, asset=pinned.asset, sha256=pinned.download_sha256)
    return ReleaseFile(
        pinned.repo, pinned.revision, pinned.path, asset=pinned.asset, sha256=pinned.sha256, size=pinned.size
    )


def _keep(pinned: PinnedFile) -> Keep:
    gunzip = Gunzip(pinned.cached_name, pinned.sha256, pinned.size) if pinned.gzip else None
    return Keep("benchmark file", OTHERWISE, gunzip, _RecordCount(pinned))


class _RecordCount:
    """Checks the file holds the pinned number of records, and records it."""

    def __init__(self, pinned: PinnedFile) -> None:
        self.pinned = pinned

    def __call__(self, handle: BinaryIO) -> Mapping[str, object]:
        pinned = self.pinned
        records = count_records(handle, pinned.cached_name)
        if records != pinned.records:
            what = describe(_remote(pinned), pinned.cached_name)
            raise UserError(
                f"{what}: {records:,} records, not the pinned {pinned.records:,}; nothing was kept; try again, "
                f"or {OTHERWISE}"
            )
        return {"records": records}
