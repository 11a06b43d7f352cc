"""What the Hugging Face Hub says about a file at a revision, asked through its own client, ``huggingface_hub``.

One ``HEAD`` of the file's resolve URL (``$HF_ENDPOINT``, default https://huggingface.co; the hub's own
redirects for a renamed repository are followed) answers with the commit the revision stands for
(``X-Repo-Commit``), the content hash (``X-Linked-Etag``: the LFS SHA-256 of a large file; else ``ETag``,
the git blob SHA-1 of a small one), the size (``X-Linked-Size``) and where the bytes are (a CDN
``Location``). The bytes themselves come through :mod:`refinelab._downloads.http` (see
docs/design/models.md, "Downloads", for why not ``hf_hub_download``). What the hub does not have, or will
not give, is one line saying what to do. ``huggingface_hub`` is imported only here, when a file is fetched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from refinelab._downloads.files import HubFile, describe
from refinelab.errors import MissingDependency, UserError

DEFAULT_ENDPOINT = "https://huggingface.co"
"""The hub, when ``$HF_ENDPOINT`` is not set."""
METADATA_SECONDS = 10.0
"""How long to wait for the hub to describe a file before saying it cannot be reached."""


@dataclass(frozen=True)
class HubAnswer:
    """What the hub says about one file at one revision."""

    url: str
    """Where to GET the bytes."""
    headers: Mapping[str, str]
    """Headers for that GET (the token only when the bytes are on the hub's own host)."""
    commit: str | None
    """The commit the revision resolved to."""
    etag: str | None
    """The content hash, lower case: 64 hex digits (LFS SHA-256) or 40 (git blob SHA-1)."""
    size: int | None
    """Bytes."""


def endpoint(environ: Mapping[str, str]) -> str:
    """``$HF_ENDPOINT`` without a trailing slash, or the public hub."""
    return (environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def ask(file: HubFile, environ: Mapping[str, str], otherwise: str) -> HubAnswer:
    """The hub's answer for ``file``; a :class:`UserError` saying what went wrong and what to do (``otherwise``:
    what the user can do instead of downloading) when it cannot say."""
    hub, base = _huggingface_hub(), endpoint(environ)
    url = hub.hf_hub_url(file.repo, file.path, repo_type=file.repo_type, revision=file.revision, endpoint=base)
    token = environ.get("HF_TOKEN") or None
    try:
        headers = hub.utils.build_hf_headers(token=token, library_name="refinelab")
        meta = hub.get_hf_file_metadata(url, token=token, headers=headers, timeout=METADATA_SECONDS)
    except Exception as exc:  # noqa: BLE001 - every failure of the hub client becomes one line for the user
        raise hub_error(exc, file, base, otherwise) from None
    same_host = urlsplit(meta.location).netloc == urlsplit(base).netloc
    get_headers = headers if same_host else {"User-Agent": headers.get("user-agent", "refinelab")}
    etag = meta.etag.lower() if isinstance(meta.etag, str) else None
    return HubAnswer(meta.location, get_headers, meta.commit_hash, etag, meta.size)


def _huggingface_hub() -> Any:
    try:
        import huggingface_hub
    except ImportError:
        raise MissingDependency(
            "downloading from the Hugging Face Hub needs huggingface_hub, a dependency of refinelab: "
            "pip install huggingface_hub"
        ) from None
    return huggingface_hub


def hub_error(exc: Exception, file: HubFile, base: str, otherwise: str) -> UserError:
    """One line saying what went wrong asking the hub about ``file``, and what to do."""
    what, kinds = describe(file), {type(cause).__name__ for cause in _chain(exc)}
    if "GatedRepoError" in kinds:
        return UserError(f"{what}: the repository is gated: accept its terms on the hub and set HF_TOKEN")
    if "RepositoryNotFoundError" in kinds:
        return UserError(f"{what}: no such repo on {base} (or it is private: set HF_TOKEN)")
    if "RevisionNotFoundError" in kinds:
        return UserError(f"{what}: no revision {file.revision!r} in {file.repo}")
    if kinds & {"RemoteEntryNotFoundError", "EntryNotFoundError"}:
        return UserError(f"{what}: no file {file.path!r} in {file.repo} at {file.revision}")
    if "HfHubHTTPError" in kinds:
        status = getattr(getattr(exc, "response", None), "status_code", "?")
        return UserError(f"{what}: the hub at {base} answered {status}; try again later, or {otherwise}")
    if kinds & _UNREACHABLE or isinstance(exc, OSError):
        return UserError(
            f"{what}: cannot reach the Hugging Face hub at {base} ({_innermost(exc)}); check the network or "
            f"HF_ENDPOINT, or {otherwise}"
        )
    return UserError(f"{what}: asking {base} about it failed ({_innermost(exc)}); {otherwise}")


_UNREACHABLE = {"ConnectError", "ConnectTimeout", "TimeoutException", "ReadTimeout", "ConnectionError", "Timeout"}
"""The hub client's exceptions (httpx's, and requests' in older releases) for a hub that does not answer."""


def _chain(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _innermost(exc: BaseException) -> str:
    last = _chain(exc)[-1]
    text = str(last).strip().splitlines()[0] if str(last).strip() else ""
    return f"{type(last).__name__}: {text}" if text else type(last).__name__
