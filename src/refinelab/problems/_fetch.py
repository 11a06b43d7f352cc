"""Pinned files into the cache: downloaded once, verified, then read offline.

Layout: ``CACHE/benchmarks/HOST/OWNER/NAME/REVISION/PATH`` (a ``.gz`` release asset is kept
decompressed), and beside each file ``PATH.verified.json``: its SHA-256, size and record count as
verified when it arrived. A cached file is hashed again whenever a process first reads it, so a
corrupted or edited file is refused, never used.

A download goes to an unnamed temporary file in the target folder (Linux ``O_TMPFILE``; elsewhere a
``.NAME.PID.partial`` file that the next download of that file removes), is checked against the pinned
SHA-256 (or the hub's own hash where none is pinned), its size and its record count, and only then gets
its name. Interrupted, killed or refused, it leaves nothing behind.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from refinelab._files import write_atomically
from refinelab._progress import DOWNLOADING, ProgressHook
from refinelab.errors import RefinelabError, UserError
from refinelab.problems import _hub
from refinelab.problems._counting import count_records
from refinelab.problems._http import stream
from refinelab.problems._manifest import PinnedFile
from refinelab.problems._provenance import FileRecord

RELEASE_URL_VARIABLE = "REFINELAB_RELEASE_URL"
"""Environment variable replacing ``https://github.com`` for release assets and files at a commit."""
DEFAULT_RELEASE_URL = "https://github.com"
"""Where GitHub-hosted files come from by default."""
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "REFINELAB_OFFLINE")
"""Either set to 1/true/yes/on: nothing is downloaded; only what is in the cache is read."""


@dataclass(frozen=True)
class FetchOptions:
    """Where files are kept and how they are reached."""

    cache_dir: Path
    """The cache root (``benchmarks/`` is made inside it)."""
    environ: Mapping[str, str] = field(default_factory=dict)
    """``HF_ENDPOINT``, ``HF_TOKEN``, ``REFINELAB_RELEASE_URL``, ``HF_HUB_OFFLINE``, ..."""
    progress: ProgressHook | None = None
    """Told the bytes of each download as ``downloading NAME``."""


def cached_path(pinned: PinnedFile, cache_dir: Path) -> Path:
    """Where ``pinned`` is kept."""
    return cache_dir / "benchmarks" / pinned.host / pinned.repo / pinned.revision / pinned.cached_name


def fetch(pinned: PinnedFile, options: FetchOptions) -> tuple[Path, FileRecord]:
    """``pinned``'s verified local copy, downloading it first when it is not in the cache."""
    path = cached_path(pinned, options.cache_dir)
    sidecar = _sidecar(path)
    if path.is_file() and sidecar.is_file():
        return path, _verified_cache(pinned, path, sidecar)
    if offline(options.environ):
        raise UserError(
            f"{pinned.cached_name}: not in the cache ({path}) and downloads are off (HF_HUB_OFFLINE or "
            "REFINELAB_OFFLINE); connect once to download it, or pass a local copy with --data FILE"
        )
    return path, _download(pinned, path, options)


def offline(environ: Mapping[str, str]) -> bool:
    """True when ``$HF_HUB_OFFLINE`` or ``$REFINELAB_OFFLINE`` says so."""
    return any(environ.get(name, "").strip().lower() in ("1", "true", "yes", "on") for name in OFFLINE_VARIABLES)


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


_HASHED: dict[tuple[str, int, int], str] = {}
"""SHA-256 of files this process has hashed, by (path, size, mtime): a file is hashed once per process."""


def _verified_cache(pinned: PinnedFile, path: Path, sidecar: Path) -> FileRecord:
    """The cached file's record, after checking it still is what was verified when it arrived."""
    try:
        recorded = FileRecord.from_json(json.loads(sidecar.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        raise _corrupt(path, "its verification record is unreadable") from None
    if pinned.sha256 is not None and recorded.sha256 != pinned.sha256:
        raise _corrupt(path, f"it was verified as sha256 {recorded.sha256}, but {pinned.sha256} is pinned")
    size = path.stat().st_size
    if size != recorded.size:  # the cheap check first
        raise _corrupt(path, f"it has {size:,} bytes, not the {recorded.size:,} verified when it was downloaded")
    actual = file_sha256(path)
    if actual != recorded.sha256:
        raise _corrupt(path, f"its SHA-256 is {actual}, not the {recorded.sha256} verified when it was downloaded")
    return recorded


def _corrupt(path: Path, why: str) -> UserError:
    return UserError(
        f"{path}: cached benchmark file refused: {why}; delete it to download it again, "
        "or pass a local copy with --data FILE"
    )


def file_sha256(path: Path) -> str:
    """SHA-256 of a file (remembered for the rest of the process while its size and mtime stay)."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _HASHED:
        with path.open("rb") as handle:
            _HASHED[key] = _sha256(handle)
    return _HASHED[key]


def _sha256(handle: BinaryIO) -> str:
    handle.seek(0)
    digest = hashlib.sha256()
    while chunk := handle.read(1 << 20):
        digest.update(chunk)
    return digest.hexdigest()


def _git_blob_sha1(handle: BinaryIO, size: int) -> str:
    handle.seek(0)
    digest = hashlib.sha1(f"blob {size}\0".encode())  # noqa: S324 - git's object id, not security
    while chunk := handle.read(1 << 20):
        digest.update(chunk)
    return digest.hexdigest()


def _download(pinned: PinnedFile, path: Path, options: FetchOptions) -> FileRecord:
    """Download, verify and name ``path``; a refused or failed download leaves nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_partials(path)
    with _anonymous(path) as raw:
        expected = _receive(pinned, raw.handle, options)
        if not pinned.gzip:
            record = _checked(pinned, raw.handle, expected)
            _keep(raw, path, record, pinned)
            return record
        _check_hash(pinned, "download", _sha256(raw.handle), pinned.download_sha256)
        with _anonymous(path) as content:
            _gunzip(pinned, raw.handle, content.handle)
            record = _checked(pinned, content.handle, expected=None)
            _keep(content, path, record, pinned)
            return record


@dataclass(frozen=True)
class _Hash:
    """A hash the hub gives for a file, which the bytes must match."""

    kind: str
    """``sha256``, or ``git blob sha1`` (the hub's hash of a file kept in git, not in LFS)."""
    value: str
    """The hash, lower case."""


def _receive(pinned: PinnedFile, handle: BinaryIO, options: FetchOptions) -> _Hash | None:
    """The bytes into ``handle``; the hub's hash for a hub file, which the bytes must match."""

    def report(done: int, total: int) -> None:
        if options.progress is not None:
            options.progress(f"{DOWNLOADING} {pinned.cached_name}", done, total)

    try:
        if pinned.host == "huggingface":
            meta = _hub.lookup(pinned, options.environ)
            _check_commit(pinned, meta.commit)
            stream(meta.url, handle, headers=meta.headers, size=meta.size, report=report)
            return _hub_hash(meta.etag)
        stream(_github_url(pinned, options.environ), handle, headers=_AGENT, size=None, report=report)
        return None
    except RefinelabError as exc:
        raise UserError(f"{_what(pinned)}: cannot download: {exc}; {_SUPPLY}") from None


_AGENT = {"User-Agent": "refinelab"}
_SUPPLY = "check the connection (or HF_ENDPOINT / REFINELAB_RELEASE_URL), or pass a local copy with --data FILE"
_REFUSED = "nothing was kept; pass a verified local copy with --data FILE"


def _what(pinned: PinnedFile) -> str:
    return f"{pinned.cached_name} ({pinned.source} @ {pinned.revision[:12]})"


def _github_url(pinned: PinnedFile, environ: Mapping[str, str]) -> str:
    base = (environ.get(RELEASE_URL_VARIABLE) or DEFAULT_RELEASE_URL).rstrip("/")
    if pinned.asset:
        return f"{base}/{pinned.repo}/releases/download/{pinned.revision}/{pinned.path}"
    return f"{base}/{pinned.repo}/raw/{pinned.revision}/{pinned.path}"


def _check_commit(pinned: PinnedFile, commit: str | None) -> None:
    if commit is not None and commit != pinned.revision:
        raise UserError(f"the hub resolved revision {pinned.revision} to another commit, {commit}")


def _hub_hash(etag: str | None) -> _Hash | None:
    if etag is not None and len(etag) == 64:
        return _Hash("sha256", etag.lower())
    if etag is not None and len(etag) == 40:
        return _Hash("git blob sha1", etag.lower())
    return None


def _checked(pinned: PinnedFile, handle: BinaryIO, expected: _Hash | None) -> FileRecord:
    """The record of a downloaded file, after checking size, hashes and record count."""
    size = handle.seek(0, os.SEEK_END)
    if pinned.size is not None and size != pinned.size:
        raise UserError(f"{_what(pinned)}: {size:,} bytes, not the pinned {pinned.size:,}; {_REFUSED}")
    digest = _sha256(handle)
    if pinned.sha256 is None and expected is None:
        raise UserError(
            f"{_what(pinned)}: no SHA-256 pinned and none given by the server, so it cannot be verified; {_REFUSED}"
        )
    _check_hash(pinned, "content", digest, pinned.sha256)
    if expected is not None:
        actual = digest if expected.kind == "sha256" else _git_blob_sha1(handle, size)
        _check_hash(pinned, f"hub's {expected.kind}", actual, expected.value)
    handle.seek(0)
    records = count_records(handle, pinned.cached_name)
    if records != pinned.records:
        raise UserError(f"{_what(pinned)}: {records:,} records, not the pinned {pinned.records:,}; {_REFUSED}")
    return FileRecord(pinned.path if not pinned.gzip else pinned.cached_name, digest, size, records)


def _check_hash(pinned: PinnedFile, what: str, actual: str, expected: str | None) -> None:
    if expected is not None and actual != expected:
        raise UserError(
            f"{_what(pinned)}: {what} SHA-256 is {actual}, expected {expected}; {_REFUSED}"
            if what != "hub's git blob sha1"
            else f"{_what(pinned)}: git blob SHA-1 is {actual}, the hub's is {expected}; {_REFUSED}"
        )


def _gunzip(pinned: PinnedFile, raw: BinaryIO, content: BinaryIO) -> None:
    raw.seek(0)
    try:
        with gzip.GzipFile(fileobj=raw, mode="rb") as unpacked:
            shutil.copyfileobj(unpacked, content, 1 << 20)
    except (OSError, EOFError) as exc:
        raise UserError(f"{_what(pinned)}: not valid gzip data ({exc}); {_REFUSED}") from None


def _keep(temporary: _Temporary, path: Path, record: FileRecord, pinned: PinnedFile) -> None:
    """Record the verification, then give the verified file its name (a crash between the two leaves a
    record without a file, which the next download replaces)."""
    sidecar = {**record.to_json(), "source": pinned.source, "revision": pinned.revision, "path": pinned.path}
    write_atomically(_sidecar(path), json.dumps(sidecar, indent=1) + "\n")
    temporary.handle.flush()
    os.fsync(temporary.handle.fileno())
    _link(temporary, path)


@dataclass
class _Temporary:
    """A temporary file beside its destination: unnamed (``O_TMPFILE``) or, where that is missing, a
    ``.NAME.PID.partial`` file."""

    handle: BinaryIO
    """Open for reading and writing."""
    named: Path | None
    """Its name in the fallback case."""


@contextmanager
def _anonymous(path: Path) -> Iterator[_Temporary]:
    """A temporary file in ``path``'s folder that has no name unless :func:`_link` gives it one."""
    named: Path | None = None
    try:
        fd = os.open(path.parent, os.O_TMPFILE | os.O_RDWR, 0o644)  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):  # not Linux, or a file system without O_TMPFILE
        fd, name = tempfile.mkstemp(suffix=".partial", prefix=f".{path.name}.{os.getpid()}.", dir=path.parent)
        named = Path(name)
    temporary = _Temporary(os.fdopen(fd, "w+b"), named)
    try:
        yield temporary
    finally:
        temporary.handle.close()
        if named is not None:
            named.unlink(missing_ok=True)


def _link(temporary: _Temporary, path: Path) -> None:
    """Give the temporary file the name ``path`` (replacing whatever is there)."""
    if temporary.named is not None:
        os.replace(temporary.named, path)
        temporary.named = None
        return
    staging = path.with_name(f".{path.name}.{os.getpid()}.link.partial")
    staging.unlink(missing_ok=True)
    try:
        os.link(f"/proc/self/fd/{temporary.handle.fileno()}", staging)
    except OSError:  # no /proc: copy instead (the copy is of verified bytes)
        temporary.handle.seek(0)
        with staging.open("wb") as copy:
            shutil.copyfileobj(temporary.handle, copy, 1 << 20)
    os.replace(staging, path)


def _remove_stale_partials(path: Path) -> None:
    """Leftovers of an earlier download of this file that was killed (only where ``O_TMPFILE`` is missing)."""
    prefix = f".{path.name}."
    for stale in path.parent.glob(f"{prefix}*.partial"):
        pid = stale.name[len(prefix) :].split(".", 1)[0]
        if not pid.isdigit() or not _alive(int(pid)):
            stale.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def default_cache_dir(environ: Mapping[str, str]) -> Path:
    """``$XDG_CACHE_HOME/refinelab``, else ``~/.cache/refinelab``: the cache folder when nothing names one
    (``--cache-dir``, ``$REFINELAB_CACHE_DIR`` and ``cache_dir`` in ``refinelab.toml`` are read with the
    other settings, by :func:`refinelab.runtime.resolve_settings`)."""
    base = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME", "~")).expanduser() / ".cache")
    return Path(base) / "refinelab"
