"""The one fetcher: a remote file's verified copy in the cache, downloaded (or resumed) when it is not there.

1. **Cached?** The file's commit is known without asking (a pinned commit, a release tag, or the commit a
   branch was pinned to): a cached copy with its verification record is checked (record, size, SHA-256)
   and returned; one that fails is refused with what to do, never used.
2. **Offline?** ``$HF_HUB_OFFLINE`` or ``$REFINELAB_OFFLINE``: nothing is asked; a missing file says so.
3. **Located.** The hub says the commit, its hash, size and where the bytes are (:mod:`.hub`); a release
   host's URL is built from ``$REFINELAB_RELEASE_URL``. A pinned hash or size the hub contradicts is refused
   before anything is downloaded, as is a file nothing could verify.
4. **Downloaded** into ``.NAME.ID.partial`` beside its destination (``ID``: the bytes it is for), under a
   lock on the folder. A partial file left by a dropped connection or a killed process is resumed with a
   ``Range`` request; one for other bytes is removed.
5. **Verified and kept.** Size, the pinned SHA-256, the hub's hash; a ``.gz`` asset decompressed and its
   content checked; the caller's own check (a benchmark's record count). Refused: the partial file is
   removed and nothing is kept. Accepted: the record is written, then the file gets its name.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal

from refinelab._downloads.files import (
    COMMIT,
    HubFile,
    ReleaseFile,
    RemoteFile,
    cached_path,
    describe,
    known_commit,
    pin_commit,
    repo_folder,
    source,
)
from refinelab._downloads.http import Wanted, stream
from refinelab._downloads.verify import OWN_KEYS, file_sha256, git_blob_sha1, read_record, sha256_of, sidecar
from refinelab._files import write_atomically
from refinelab._progress import DOWNLOADING, ProgressHook
from refinelab.errors import UserError

RELEASE_URL_VARIABLE = "REFINELAB_RELEASE_URL"
"""Environment variable replacing ``https://github.com`` for release assets and files at a commit."""
DEFAULT_RELEASE_URL = "https://github.com"
"""Where release files come from by default."""
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "REFINELAB_OFFLINE")
"""Either set to 1/true/yes/on: nothing is downloaded; only what is in the cache is read."""

Recheck = Literal["each-process", "when-changed"]
"""When a cached file is hashed again: the first time each process reads it, or only when its size or
modification time differ from those recorded when it arrived."""


@dataclass(frozen=True)
class FetchOptions:
    """Where files are kept and how they are reached."""

    cache_dir: Path
    """The cache root (``benchmarks/`` and ``models/`` are made inside it)."""
    environ: Mapping[str, str] = field(default_factory=dict)
    """``HF_ENDPOINT``, ``HF_TOKEN``, ``REFINELAB_RELEASE_URL``, ``HF_HUB_OFFLINE``, ..."""
    progress: ProgressHook | None = None
    """Told the bytes of each download as ``downloading NAME``."""
    recheck: Recheck = "each-process"
    """When a cached file is hashed again (model files, gigabytes loaded at every start: ``when-changed``)."""


Check = Callable[[BinaryIO], Mapping[str, object]]
"""The caller's own check of the bytes to keep (read from the start): raises :class:`UserError` to refuse
them; what it returns is recorded with the file (a benchmark's ``{"records": N}``)."""


@dataclass(frozen=True)
class Gunzip:
    """The download is a gzip archive, kept decompressed."""

    name: str
    """The decompressed file's name in the cache (``HumanEvalPlus.jsonl``)."""
    sha256: str | None = None
    """The SHA-256 the decompressed content must have, where pinned."""
    size: int | None = None
    """Its size in bytes, where pinned."""


@dataclass(frozen=True)
class Keep:
    """How a caller keeps a fetched file, and what it tells the user to do when that fails."""

    kind: str = "file"
    """What the file is, in messages about the cache (``benchmark file``, ``model file``)."""
    otherwise: str = "download the file yourself"
    """What the user can do instead of downloading (``pass a local copy with --data FILE``)."""
    gunzip: Gunzip | None = None
    """Keep the download decompressed."""
    check: Check | None = None
    """The caller's own check of the bytes to keep."""


@dataclass(frozen=True)
class Fetched:
    """A verified file in the cache."""

    path: Path
    """Where it is."""
    sha256: str
    """Its SHA-256 (of the decompressed content, for a ``.gz`` asset kept decompressed)."""
    size: int
    """Its size in bytes."""
    commit: str
    """The commit (or release tag) it is at."""
    details: Mapping[str, object]
    """What the caller's check recorded when it arrived (``{"records": 400}``)."""


def fetch(file: RemoteFile, options: FetchOptions, keep: Keep | None = None) -> Fetched:
    """``file``'s verified copy in the cache, downloading (or resuming) it first when it is not there."""
    keep = keep or Keep()
    name = keep.gunzip.name if keep.gunzip else None
    commit = known_commit(file, options.cache_dir)
    if commit is not None:
        path = cached_path(file, options.cache_dir, commit, name)
        if (found := _cached(file, path, commit, keep, options)) is not None:
            return found
    if offline(options.environ):
        where = path if commit is not None else repo_folder(file, options.cache_dir)
        raise UserError(
            f"{describe(file, name)}: not in the cache ({where}) and downloads are off (HF_HUB_OFFLINE or "
            f"REFINELAB_OFFLINE); connect once to download it, or {keep.otherwise}"
        )
    located = _locate(file, options.environ, keep)
    path = cached_path(file, options.cache_dir, located.commit, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path.parent):  # another process fetching it: wait, then read what it kept
        found = (
            _cached(file, path, located.commit, keep, options) or _Download(file, located, path, keep, options).run()
        )
    pin_commit(file, options.cache_dir, located.commit)
    return found


def offline(environ: Mapping[str, str]) -> bool:
    """True when ``$HF_HUB_OFFLINE`` or ``$REFINELAB_OFFLINE`` says so."""
    return any(environ.get(name, "").strip().lower() in ("1", "true", "yes", "on") for name in OFFLINE_VARIABLES)


def default_cache_dir(environ: Mapping[str, str]) -> Path:
    """``$XDG_CACHE_HOME/refinelab``, else ``~/.cache/refinelab``: the cache folder when nothing names one
    (``--cache-dir``, ``$REFINELAB_CACHE_DIR`` and ``cache_dir`` in ``refinelab.toml`` are read with the
    other settings, by :func:`refinelab.runtime.resolve_settings`)."""
    base = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME", "~")).expanduser() / ".cache")
    return Path(base) / "refinelab"


# --- 1. the cache ---------------------------------------------------------------------------------------


def _cached(file: RemoteFile, path: Path, commit: str, keep: Keep, options: FetchOptions) -> Fetched | None:
    """The cached copy of ``file`` at ``commit``, kept at ``path``, after checking it is still what was
    verified; None when there is none."""
    if not path.is_file():
        return None
    try:
        record = read_record(path)
    except FileNotFoundError:
        legacy = isinstance(file, HubFile) and file.repo_type == "model"
        return _adopted(file, path, commit, keep) if legacy else None
    except (OSError, ValueError):
        raise _corrupt(path, keep, "its verification record is unreadable") from None
    recorded, pinned = str(record["sha256"]), _content_sha256(file, keep)
    if pinned is not None and recorded != pinned:
        raise _corrupt(path, keep, f"it was verified as sha256 {recorded}, but {pinned} is pinned")
    stat = path.stat()
    if stat.st_size != record["size"]:  # the cheap check first
        raise _corrupt(
            path, keep, f"it has {stat.st_size:,} bytes, not the {record['size']:,} verified when it arrived"
        )
    unchanged = options.recheck == "when-changed" and record.get("mtime_ns") == stat.st_mtime_ns
    if not unchanged and (actual := file_sha256(path)) != recorded:
        raise _corrupt(path, keep, f"its SHA-256 is {actual}, not the {recorded} verified when it arrived")
    details = {key: value for key, value in record.items() if key not in OWN_KEYS}
    return Fetched(path, recorded, stat.st_size, commit, details)


def _adopted(file: RemoteFile, path: Path, commit: str, keep: Keep) -> Fetched:
    """A model file kept by a refinelab from before verification records (it was verified, then renamed into
    place): hashed once, checked against the pinned hash, and given its record."""
    digest, stat = file_sha256(path), path.stat()
    if file.sha256 is not None and digest != file.sha256:
        raise _corrupt(path, keep, f"its SHA-256 is {digest}, not the pinned {file.sha256}")
    _record(
        path, file, commit, {"name": file.path, "sha256": digest, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    )
    return Fetched(path, digest, stat.st_size, commit, {})


def _content_sha256(file: RemoteFile, keep: Keep) -> str | None:
    return keep.gunzip.sha256 if keep.gunzip else file.sha256


def _corrupt(path: Path, keep: Keep, why: str) -> UserError:
    return UserError(f"{path}: cached {keep.kind} refused: {why}; delete it to download it again, or {keep.otherwise}")


def _record(path: Path, file: RemoteFile, commit: str, record: Mapping[str, object]) -> None:
    """Write the verification record of the file that is (or is about to be) at ``path``."""
    extra = {"source": source(file), "revision": commit, "path": file.path}
    write_atomically(sidecar(path), json.dumps({**record, **extra}, indent=1) + "\n")


# --- 3. where the bytes are, and what they must hash to -------------------------------------------------


@dataclass(frozen=True)
class _Hash:
    """A hash the bytes must match."""

    kind: Literal["sha256", "git blob sha1"]
    """``sha256``, or git's blob id (the hub's hash of a small file kept in git, not LFS)."""
    value: str
    """Lower-case hex."""
    whose: str
    """Where it comes from, in messages: ``pinned``, ``the hub's sha256 for commit 0fe84c3912ea``."""


@dataclass(frozen=True)
class _Located:
    """Where a file's bytes are and what they must be."""

    wanted: Wanted
    """The GET."""
    commit: str
    """The commit (or release tag) they are at."""
    hashes: tuple[_Hash, ...]
    """Every hash the downloaded bytes must match."""
    identity: str
    """What a partial download belongs to (another identity's partial file is not resumed)."""


def _locate(file: RemoteFile, environ: Mapping[str, str], keep: Keep) -> _Located:
    located = _locate_hub(file, environ, keep) if isinstance(file, HubFile) else _locate_release(file, environ)
    if not located.hashes and not _content_sha256(file, keep):
        raise UserError(
            f"{describe(file)}: no SHA-256 pinned and none given by the server, so it cannot be verified; "
            f"{_refused(keep)}"
        )
    return located


def _locate_hub(file: HubFile, environ: Mapping[str, str], keep: Keep) -> _Located:
    from refinelab._downloads.hub import ask

    answer, what, pinned = ask(file, environ, keep.otherwise), describe(file), COMMIT.fullmatch(file.revision)
    commit = answer.commit or (file.revision if pinned else None)
    if commit is None or not COMMIT.fullmatch(commit):
        raise UserError(f"{what}: the server did not name the commit of {file.revision}: is it a Hugging Face hub?")
    if pinned and commit != file.revision:
        raise UserError(
            f"{what}: the hub resolved revision {file.revision} to another commit, {commit}; {_refused(keep)}"
        )
    hashes = [] if file.sha256 is None else [_Hash("sha256", file.sha256, "pinned")]
    etag, whose = answer.etag or "", f"the hub's {{}} for commit {commit[:12]}"
    if len(etag) == 64:
        if file.sha256 is not None and etag != file.sha256:
            raise UserError(f"{what}: the hub's SHA-256 is {etag}, not the pinned {file.sha256}; {_refused(keep)}")
        hashes.append(_Hash("sha256", etag, whose.format("sha256")))
    elif len(etag) == 40:
        hashes.append(_Hash("git blob sha1", etag, whose.format("git blob SHA-1")))
    if file.size is not None and answer.size is not None and answer.size != file.size:
        raise UserError(
            f"{what}: the hub's size is {answer.size:,} bytes, not the pinned {file.size:,}; {_refused(keep)}"
        )
    size = file.size if file.size is not None else answer.size
    wanted = Wanted(answer.url, answer.headers, size)
    return _Located(wanted, commit, tuple(hashes), f"{commit}:{etag}:{size}")


def _locate_release(file: ReleaseFile, environ: Mapping[str, str]) -> _Located:
    base = (environ.get(RELEASE_URL_VARIABLE) or DEFAULT_RELEASE_URL).rstrip("/")
    kind = f"releases/download/{file.revision}" if file.asset else f"raw/{file.revision}"
    url = f"{base}/{file.repo}/{kind}/{file.path}"
    hashes = () if file.sha256 is None else (_Hash("sha256", file.sha256, "pinned"),)
    return _Located(Wanted(url, {"User-Agent": "refinelab"}, file.size), file.revision, hashes, f"{url}:{file.sha256}")


def _refused(keep: Keep) -> str:
    return f"nothing was kept; try again, or {keep.otherwise}"


# --- 4 and 5. the download -------------------------------------------------------------------------------


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """An exclusive lock on ``folder`` for the block (where the file system has none, no lock: two processes
    writing one partial file make bytes that fail the hash check, and nothing is kept)."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system
        yield
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
    finally:
        os.close(descriptor)  # releases the lock


class _Download:
    """One download of ``file`` to ``path``: resumed, verified, kept or refused whole."""

    def __init__(self, file: RemoteFile, located: _Located, path: Path, keep: Keep, options: FetchOptions) -> None:
        self.file, self.located, self.path, self.keep, self.options = file, located, path, keep, options
        self.what = describe(file, keep.gunzip.name if keep.gunzip else None)
        basename = Path(file.path).name
        identity = hashlib.sha256(located.identity.encode()).hexdigest()[:16]
        self.partial = path.with_name(f".{basename}.{identity}.partial")
        self.unpacked = path.with_name(f".{path.name}.{os.getpid()}.unpacking")
        self._remove_leftovers(basename)

    def run(self) -> Fetched:
        """Download (from where an earlier one stopped), verify, keep; the kept file."""
        handle = open(os.open(self.partial, os.O_RDWR | os.O_CREAT, 0o644), "r+b", buffering=0)  # noqa: SIM115
        try:
            self._check_space(handle.seek(0, os.SEEK_END))
            size = self._receive(handle)
            try:
                digest = self._verified(handle, size)
                if self.keep.gunzip is None:
                    return self._keep(handle, self.partial, digest)
                with self.unpacked.open("w+b") as unpacked:
                    return self._keep(unpacked, self.unpacked, self._gunzipped(handle, unpacked))
            except UserError:
                self.partial.unlink(missing_ok=True)  # refused: nothing is kept, the next try starts afresh
                raise
        finally:
            handle.close()
            self.unpacked.unlink(missing_ok=True)

    def _remove_leftovers(self, basename: str) -> None:
        """Partial files of this file for other bytes, and decompressions a killed process left (the folder
        is locked: nobody else is writing them)."""
        for stale in self.path.parent.glob(f".{basename}.*.partial"):
            if stale != self.partial:
                stale.unlink(missing_ok=True)
        for stale in self.path.parent.glob(f".{self.path.name}.*.unpacking"):
            stale.unlink(missing_ok=True)

    def _check_space(self, kept: int) -> None:
        size = self.located.wanted.size
        free = shutil.disk_usage(self.path.parent).free
        if size is not None and free < size - kept:
            raise UserError(
                f"{self.what} needs {(size - kept) / 1e9:.1f} GB and {self.path.parent} has {free / 1e9:.1f} GB "
                "free: free some space or set REFINELAB_CACHE_DIR to a larger disk"
            )

    def _receive(self, handle: BinaryIO) -> int:
        """The rest of the bytes into ``handle``; their total. A transfer that fails keeps what arrived."""
        name = self.keep.gunzip.name if self.keep.gunzip else self.file.path

        def report(done: int, total: int) -> None:
            if self.options.progress is not None:
                self.options.progress(f"{DOWNLOADING} {name}", done, total)

        try:
            return stream(self.located.wanted, handle, report)
        except UserError as exc:
            kept = handle.seek(0, os.SEEK_END)
            resume = f"{kept:,} bytes are kept and running again resumes from there; " if kept else ""
            raise UserError(
                f"{self.what}: cannot download: {exc}; {resume}check the connection (or HF_ENDPOINT / "
                f"REFINELAB_RELEASE_URL), or {self.keep.otherwise}"
            ) from None

    def _verified(self, handle: BinaryIO, size: int) -> str:
        """The bytes' SHA-256, after checking their size and every hash they must match."""
        if self.file.size is not None and size != self.file.size:
            raise UserError(f"{self.what}: {size:,} bytes, not the pinned {self.file.size:,}; {_refused(self.keep)}")
        digest = sha256_of(handle)
        for expected in self.located.hashes:
            actual = digest if expected.kind == "sha256" else git_blob_sha1(handle, size)
            if actual != expected.value:
                label = "download SHA-256" if expected.kind == "sha256" else "git blob SHA-1"
                why = f"{label} is {actual}, expected {expected.value} ({expected.whose})"
                raise UserError(f"{self.what}: {why}; {_refused(self.keep)}")
        return digest

    def _gunzipped(self, raw: BinaryIO, content: BinaryIO) -> str:
        """Decompress ``raw`` into ``content``; its SHA-256, after checking it against the pinned one."""
        assert self.keep.gunzip is not None
        raw.seek(0)
        try:
            with gzip.GzipFile(fileobj=raw, mode="rb") as unpacking:
                shutil.copyfileobj(unpacking, content, 1 << 20)
        except (OSError, EOFError) as exc:
            raise UserError(f"{self.what}: not valid gzip data ({exc}); {_refused(self.keep)}") from None
        size, digest = content.seek(0, os.SEEK_END), sha256_of(content)
        pinned = self.keep.gunzip
        if pinned.size is not None and size != pinned.size:
            raise UserError(f"{self.what}: {size:,} bytes, not the pinned {pinned.size:,}; {_refused(self.keep)}")
        if pinned.sha256 is not None and digest != pinned.sha256:
            raise UserError(
                f"{self.what}: content SHA-256 is {digest}, expected {pinned.sha256} (pinned); {_refused(self.keep)}"
            )
        return digest

    def _keep(self, handle: BinaryIO, temporary: Path, digest: str) -> Fetched:
        """The caller's check, then the record, then the name (a crash between the two leaves a record
        without a file, which the next download replaces)."""
        handle.seek(0)
        details = dict(self.keep.check(handle)) if self.keep.check is not None else {}
        handle.flush()
        os.fsync(handle.fileno())
        stat = os.fstat(handle.fileno())
        name = self.keep.gunzip.name if self.keep.gunzip else self.file.path
        record = {"name": name, "sha256": digest, "size": stat.st_size, **details, "mtime_ns": stat.st_mtime_ns}
        _record(self.path, self.file, self.located.commit, record)
        os.replace(temporary, self.path)
        self.partial.unlink(missing_ok=True)
        return Fetched(self.path, digest, stat.st_size, self.located.commit, details)
