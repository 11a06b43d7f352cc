"""Hugging Face Hub files at a pinned revision: the file's metadata through ``huggingface_hub``, the bytes
through :mod:`refinelab.problems._http`.

``huggingface_hub`` asks the hub (``$HF_ENDPOINT``, default https://huggingface.co) for a file's
resolve URL with a HEAD request and reads its answer: the commit it resolved to (``X-Repo-Commit``), the
content hash (``X-Linked-Etag``: the LFS SHA-256 for a large file, else the git blob SHA-1 in ``ETag``),
the size (``X-Linked-Size``) and where the bytes are (a CDN ``Location``). Those are what a download is
checked against when refinelab pins no hash of its own. It is imported only when a file is fetched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from refinelab.errors import MissingDependency, RefinelabError, UserError
from refinelab.problems._manifest import PinnedFile

DEFAULT_ENDPOINT = "https://huggingface.co"
"""The hub, when ``$HF_ENDPOINT`` is not set."""


@dataclass(frozen=True)
class HubFile:
    """What the hub says about one file at one revision."""

    url: str
    """Where to GET the bytes."""
    commit: str | None
    """The commit the revision resolved to."""
    etag: str | None
    """The content hash: 64 hex digits (LFS SHA-256) or 40 (git blob SHA-1)."""
    size: int | None
    """Bytes."""
    headers: Mapping[str, str]
    """Headers for the GET (user agent, and a token when one is configured)."""


def endpoint(environ: Mapping[str, str]) -> str:
    """``$HF_ENDPOINT`` without a trailing slash, or the public hub."""
    return (environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def lookup(pinned: PinnedFile, environ: Mapping[str, str]) -> HubFile:
    """The hub's metadata for ``pinned``; a :class:`UserError` with the reason when the hub cannot say."""
    hub = _huggingface_hub()
    base = endpoint(environ)
    url = hub.hf_hub_url(pinned.repo, pinned.path, repo_type="dataset", revision=pinned.revision, endpoint=base)
    token = environ.get("HF_TOKEN") or None
    try:
        headers = hub.utils.build_hf_headers(token=token, library_name="refinelab")
        meta = hub.get_hf_file_metadata(url, token=token, headers=headers, endpoint=base)
    except RefinelabError:
        raise
    except Exception as exc:  # noqa: BLE001 - connection, HTTP and hub errors all mean "cannot reach it" here
        raise UserError(f"{base} did not answer for it ({_first_line(exc)})") from None
    return HubFile(meta.location, meta.commit_hash, meta.etag, meta.size, headers)


def _huggingface_hub() -> Any:
    try:
        import huggingface_hub
    except ImportError:
        raise MissingDependency(
            "downloading from the Hugging Face Hub needs huggingface_hub: pip install huggingface_hub "
            "(or pass --data FILE)"
        ) from None
    return huggingface_hub


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
