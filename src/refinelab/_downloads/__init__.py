"""The one way refinelab downloads a file: benchmark files and model files alike.

A file is a :class:`HubFile` (a file in a Hugging Face model or dataset repository, at a revision, with
the SHA-256 and size it must have where pinned) or a :class:`ReleaseFile` (a release asset or a file at a
commit on a GitHub-like host). :func:`fetch` returns its verified copy in the cache, downloading or
resuming it first; the steps are in :mod:`refinelab._downloads.fetcher`, the cache layout in
:mod:`refinelab._downloads.files`, and why the hub's own client asks for a file's metadata but does not
download its bytes in docs/design/models.md ("Downloads").

Modules: ``files`` (what and where), ``hub`` (what the hub says, through ``huggingface_hub``), ``http``
(the bytes, resumed), ``verify`` (hashes and records), ``fetcher`` (the steps). Nothing here imports
``huggingface_hub`` or ``urllib.request`` until a download starts.
"""

from refinelab._downloads.fetcher import (
    OFFLINE_VARIABLES,
    RELEASE_URL_VARIABLE,
    Check,
    Fetched,
    FetchOptions,
    Gunzip,
    Keep,
    Recheck,
    default_cache_dir,
    fetch,
    offline,
)
from refinelab._downloads.files import HubFile, ReleaseFile, RemoteFile, RepoType, cached_path, describe
from refinelab._downloads.verify import file_sha256, forget_hashes

__all__ = [
    "OFFLINE_VARIABLES",
    "RELEASE_URL_VARIABLE",
    "Check",
    "FetchOptions",
    "Fetched",
    "Gunzip",
    "HubFile",
    "Keep",
    "Recheck",
    "ReleaseFile",
    "RemoteFile",
    "RepoType",
    "cached_path",
    "default_cache_dir",
    "describe",
    "fetch",
    "file_sha256",
    "forget_hashes",
    "offline",
]
