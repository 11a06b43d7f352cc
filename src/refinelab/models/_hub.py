"""Downloading a GGUF file from a Hugging Face repo, once, into the cache directory.

``<models dir>/hf/OWNER/REPO/COMMIT/FILE`` holds a file only once it is complete and its SHA-256 checked (the
pinned one, else the hub's own LFS hash for that commit): it is downloaded into a staging directory beside
it and renamed into place, and the staging directory is removed whatever happens, so a wrong checksum, an
unreachable hub or an interrupted download leaves nothing behind. A branch or tag is pinned to its commit
at the first download (``refs/REVISION``); later runs use that commit without asking the hub, so they work
offline and load the same bytes. ``HF_ENDPOINT`` and ``HF_TOKEN`` are honoured.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from refinelab.errors import MissingDependency, UserError
from refinelab.models._local_files import HubFile, file_sha256, record_sha256, remember, remove_tree

_COMMIT = re.compile(r"[0-9a-f]{40}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
DEFAULT_ENDPOINT = "https://huggingface.co"
METADATA_SECONDS = 10.0
"""How long to wait for the hub to describe a file (its commit, size and hash) before saying it cannot be
reached."""


@dataclass(frozen=True)
class _Access:
    """How the hub is reached."""

    endpoint: str
    """Its base URL (``$HF_ENDPOINT``, else huggingface.co)."""
    token: str | None
    """``$HF_TOKEN``, for gated or private repositories."""


@dataclass(frozen=True)
class _Pinned:
    """What the hub says a revision's file is, which the download must match."""

    commit: str
    """The commit the revision stands for."""
    sha256: str
    """The SHA-256 to check (the pinned one, else the hub's)."""
    size: int | None
    """Its size in bytes, when the hub gives it."""


def fetch(hub: HubFile, root: Path, environ: Mapping[str, str]) -> Path:
    """The verified local copy of ``hub``'s file, downloaded on first use."""
    where = root / "hf" / hub.repo
    commit = hub.revision if _COMMIT.fullmatch(hub.revision) else _pinned(where, hub.revision)
    if commit is not None and (where / commit / hub.filename).is_file():
        return where / commit / hub.filename
    api = _huggingface_hub()
    access = _Access((environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/"), environ.get("HF_TOKEN") or None)
    pinned = _describe(api, hub, access)
    target = where / pinned.commit / hub.filename
    if not target.is_file():
        _download(api, hub, access, pinned, target)
        record_sha256(target, root, pinned.sha256)  # checked just now: no need to hash it again at the next start
    remember(where / "refs" / hub.revision, {"commit": pinned.commit})
    return target


def _pinned(where: Path, revision: str) -> str | None:
    """The commit a branch or tag was pinned to at the first download, if any."""
    import json

    try:
        commit = json.loads((where / "refs" / revision).read_text()).get("commit")
    except (OSError, ValueError, AttributeError):
        return None
    return commit if isinstance(commit, str) and _COMMIT.fullmatch(commit) else None


def _huggingface_hub() -> Any:
    try:
        import huggingface_hub
    except ImportError:
        raise MissingDependency(
            "downloading a model from Hugging Face needs huggingface_hub: pip install 'refinelab[local]'"
        ) from None
    return huggingface_hub


def _describe(api: Any, hub: HubFile, access: _Access) -> _Pinned:
    """The commit the revision stands for, the SHA-256 to check, and the size, from one HEAD request."""
    endpoint, token = access.endpoint, access.token
    url = api.hf_hub_url(hub.repo, hub.filename, revision=hub.revision, endpoint=endpoint)
    try:
        meta = api.get_hf_file_metadata(url, token=token, timeout=METADATA_SECONDS)
    except Exception as exc:  # noqa: BLE001 - every failure of the hub client becomes one line for the user
        raise _hub_error(exc, hub, endpoint) from None
    commit, etag = meta.commit_hash, (meta.etag or "").lower()
    if not isinstance(commit, str) or not _COMMIT.fullmatch(commit):
        raise UserError(f"{endpoint} did not name the commit of {hub.repo}@{hub.revision}: is it a Hugging Face hub?")
    hub_sha = etag if _SHA256.fullmatch(etag) else None
    if hub.sha256 is not None and hub_sha is not None and hub_sha != hub.sha256:
        raise UserError(
            f"{hub.repo}/{hub.filename}@{hub.revision}: the hub's SHA-256 is {hub_sha}, not the pinned {hub.sha256}"
        )
    expected = hub.sha256 or hub_sha
    if expected is None:
        raise UserError(f"{hub.repo}/{hub.filename}: the hub gives no SHA-256 to check it against (not an LFS file)")
    return _Pinned(commit, expected, meta.size)


def _download(api: Any, hub: HubFile, access: _Access, pinned: _Pinned, target: Path) -> None:
    """Download into a staging directory, check the SHA-256, rename into place; remove the staging directory."""
    endpoint, token = access.endpoint, access.token
    commit, expected, size = pinned.commit, pinned.sha256, pinned.size
    target.parent.mkdir(parents=True, exist_ok=True)
    if size is not None and _free_bytes(target.parent) < size:
        raise UserError(
            f"{hub.filename} needs {size / 1e9:.1f} GB and {target.parent} has {_free_bytes(target.parent) / 1e9:.1f} "
            "GB free: free some space or set REFINELAB_CACHE_DIR to a larger disk"
        )
    staging = Path(tempfile.mkdtemp(prefix=".downloading-", dir=target.parent))
    try:
        try:
            found = api.hf_hub_download(
                hub.repo, hub.filename, revision=commit, local_dir=staging, endpoint=endpoint, token=token
            )
        except Exception as exc:  # noqa: BLE001 - every failure of the hub client becomes one line for the user
            raise _hub_error(exc, hub, endpoint) from None
        actual = file_sha256(Path(found))
        if actual != expected:
            raise UserError(
                f"{hub.repo}/{hub.filename}@{commit[:12]}: the download's SHA-256 is {actual}, expected {expected}; "
                "nothing was kept, try again"
            )
        os.replace(found, target)
    finally:
        remove_tree(staging)


def _free_bytes(path: Path) -> int:
    import shutil

    return shutil.disk_usage(path).free


def _hub_error(exc: Exception, hub: HubFile, endpoint: str) -> UserError:
    """One line saying what went wrong talking to the hub, and what to do."""
    what = f"{hub.repo}/{hub.filename}@{hub.revision}"
    kind = {type(cause).__name__ for cause in _chain(exc)}
    if "GatedRepoError" in kind:
        return UserError(f"{what}: the repo is gated: accept its terms on the hub and set HF_TOKEN")
    if "RepositoryNotFoundError" in kind:
        return UserError(f"{what}: no such repo on {endpoint} (or it is private: set HF_TOKEN)")
    if "RevisionNotFoundError" in kind:
        return UserError(f"{what}: no revision {hub.revision!r} in {hub.repo}")
    if kind & {"RemoteEntryNotFoundError", "EntryNotFoundError"}:
        return UserError(f"{what}: no file {hub.filename!r} in {hub.repo} at {hub.revision}")
    if "HfHubHTTPError" in kind:
        status = getattr(getattr(exc, "response", None), "status_code", "?")
        return UserError(f"{what}: the hub at {endpoint} answered {status}; try again later")
    if kind & {"ConnectError", "ConnectTimeout", "TimeoutException", "ReadTimeout", "OfflineModeIsEnabled"} or (
        isinstance(exc, OSError)
    ):
        return UserError(
            f"cannot reach the Hugging Face hub at {endpoint} to download {what} ({_innermost(exc)}); check the "
            "network or HF_ENDPOINT, or download the file yourself and use local:PATH.gguf"
        )
    return UserError(f"downloading {what} from {endpoint} failed: {_innermost(exc)}")


def _chain(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _innermost(exc: BaseException) -> str:
    last = _chain(exc)[-1]
    return f"{type(last).__name__}: {last}" if str(last) else type(last).__name__
