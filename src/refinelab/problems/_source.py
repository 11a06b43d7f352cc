"""A benchmark's files by name: a ``--data`` file, the packaged HumanEval, or pinned downloads; and the
record of which bytes they were.

Order: ``--data FILE`` first; then evalplus's own override variables (``HUMANEVAL_OVERRIDE_PATH`` for
HumanEval+, ``MBPP_OVERRIDE_PATH`` for MBPP+), as evalplus reads them; then the pinned source,
downloaded into the cache once (see :mod:`refinelab.problems._fetch` and :mod:`refinelab._downloads`).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from refinelab._downloads import FetchOptions, file_sha256
from refinelab.errors import UserError
from refinelab.problems._benchmarks import Benchmark, Packaged, benchmark
from refinelab.problems._fetch import fetch
from refinelab.problems._manifest import PartsOfOneFile, manifest_from
from refinelab.problems._provenance import FileRecord, Provenance


@dataclass(frozen=True)
class BenchmarkFiles:
    """A benchmark's files on disk, verified, and what they are."""

    benchmark: str
    """Registered benchmark name."""
    paths: tuple[Path, ...]
    """The files to read, in order."""
    provenance: Provenance
    """Source, revision, release and every file's hash."""
    subset: str | None = None
    """Only this part of the problems (an APPS difficulty, an MBPP split); None: all of them."""
    given: bool = False
    """The user named the file (``--data`` or an override variable)."""


def open_benchmark(
    name: str,
    data: str | Path | None = None,
    *,
    release: str | None = None,
    options: FetchOptions | None = None,
) -> BenchmarkFiles:
    """``name``'s files: ``data`` when given, else the packaged or pinned source (downloaded into
    ``options.cache_dir`` the first time; ``release`` as upstream spells it)."""
    environ: Mapping[str, str] = options.environ if options is not None else {}
    record = benchmark(name)
    override = record.override
    if data is None and override and environ.get(override):
        return _given(record, Path(environ[override]), release, f"file (${override})")
    if data is not None:
        return _given(record, Path(data), release, "file")
    if record.packaged is not None:
        return _packaged(name, record.packaged, release)
    if record.releases is None:
        raise UserError(f"benchmark {name!r} needs --data FILE")
    if options is None:
        raise UserError(f"benchmark {name!r}: no cache directory to download it into")
    return _downloaded(record, release, options)


def _given(benchmark: Benchmark, path: Path, release: str | None, source: str) -> BenchmarkFiles:
    """The user's file; ``release`` keeps its part where releases are parts of one file (an MBPP split,
    an APPS difficulty), as it does of the download."""
    name = benchmark.name
    part = None
    if release is not None:
        if not isinstance(benchmark.releases, PartsOfOneFile):
            raise UserError(
                f"{name}: --release chooses which upstream files to download; with your own file use --after/--before"
            )
        part = benchmark.release(release).subset
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    record = FileRecord(str(path.resolve()), file_sha256(path), path.stat().st_size)
    return BenchmarkFiles(name, (path,), Provenance(name, source, None, release, (record,)), part, given=True)


def _packaged(name: str, packaged: Packaged, release: str | None) -> BenchmarkFiles:
    if release is not None:
        raise UserError(f"{name} has no releases: it is the problems of the {packaged.distribution} package")
    path = packaged.path()
    version = importlib.metadata.version(packaged.distribution)
    record = FileRecord(f"{packaged.folder}/{path.name}", file_sha256(path), path.stat().st_size)
    return BenchmarkFiles(
        name, (path,), Provenance(name, f"package:{packaged.distribution} {version}", None, None, (record,))
    )


def _downloaded(record: Benchmark, release: str | None, options: FetchOptions) -> BenchmarkFiles:
    name = record.name
    chosen = record.release(release)
    manifest = manifest_from(options.environ)
    pinned = [manifest.pin(f) for f in chosen.files]
    fetched = [fetch(f, options) for f in pinned]
    provenance = Provenance(
        benchmark=name,
        source=pinned[0].source,
        revision=pinned[0].revision,
        release=chosen.tag,
        files=tuple(record for _, record in fetched),
        manifest=manifest.label if any(manifest.replaces(f) for f in chosen.files) else "pinned",
    )
    return BenchmarkFiles(name, tuple(path for path, _ in fetched), provenance, chosen.subset)
