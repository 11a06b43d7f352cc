"""What a benchmark was read from: the source, its revision and every file's hash, as plain frozen data.

A run stores this with its spec, so the report says exactly which bytes it ran on and a run on other
bytes gets another run id. Where the bytes came over the network from (the hub, a mirror) is left out:
the same content through a mirror is the same run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class FileRecord:
    """One file a benchmark was read from, as verified."""

    name: str
    """Path inside the source (``test5.jsonl``, ``mbpp/mbpp.jsonl``), or the local path of a ``--data`` file."""
    sha256: str
    """SHA-256 of the content read (for a gzip-compressed release asset: of the decompressed content)."""
    size: int
    """Bytes of that content."""
    records: int | None = None
    """Records counted in it (JSON Lines lines, JSON list items, Parquet rows); None when not counted."""

    def to_json(self) -> dict[str, object]:
        """Plain data."""
        return {"name": self.name, "sha256": self.sha256, "size": self.size, "records": self.records}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> FileRecord:
        """Back from :meth:`to_json`."""
        records = data.get("records")
        return cls(
            name=str(data["name"]),
            sha256=str(data["sha256"]),
            size=int(str(data["size"])),
            records=int(str(records)) if records is not None else None,
        )


@dataclass(frozen=True)
class Provenance:
    """Where a benchmark's problems came from."""

    benchmark: str
    """Registered benchmark name."""
    source: str
    """``huggingface:OWNER/NAME``, ``github:OWNER/NAME``, ``package:NAME VERSION`` or ``file``."""
    revision: str | None
    """Commit or release tag of the source (None for a local file)."""
    release: str | None
    """The benchmark release as upstream spells it (``release_v5``, ``v4_v5``, ``v0.1.10``), if any."""
    files: tuple[FileRecord, ...]
    """Every file read, in order."""
    manifest: str = "pinned"
    """``pinned`` (refinelab's built-in hashes) or ``FILE sha256:HASH`` for a manifest given with
    ``$REFINELAB_BENCHMARK_MANIFEST``."""

    def to_json(self) -> dict[str, object]:
        """Plain data (stored with a run)."""
        return {
            "benchmark": self.benchmark,
            "source": self.source,
            "revision": self.revision,
            "release": self.release,
            "files": [f.to_json() for f in self.files],
            "manifest": self.manifest,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Provenance:
        """Back from :meth:`to_json`."""
        files = data.get("files")
        revision, release = data.get("revision"), data.get("release")
        return cls(
            benchmark=str(data["benchmark"]),
            source=str(data["source"]),
            revision=None if revision is None else str(revision),
            release=None if release is None else str(release),
            files=tuple(FileRecord.from_json(f) for f in files if isinstance(f, dict))
            if isinstance(files, list)
            else (),
            manifest=str(data.get("manifest", "pinned")),
        )

    def describe(self) -> str:
        """One line: ``livecodebench release_v5 · huggingface:livecodebench/code_generation_lite @ 0fe84c3``."""
        what = self.benchmark + (f" {self.release}" if self.release else "")
        where = self.source + (f" @ {self.revision[:12]}" if self.revision else "")
        extra = "" if self.manifest == "pinned" else f" (manifest {self.manifest})"
        return f"{what} · {where}{extra}"

    def file_lines(self) -> list[str]:
        """One line per file: name, records, size and hash."""
        lines = []
        for f in self.files:
            records = f"{f.records:,} records · " if f.records is not None else ""
            lines.append(f"{f.name}: {records}{f.size:,} bytes · sha256 {f.sha256}")
        return lines
