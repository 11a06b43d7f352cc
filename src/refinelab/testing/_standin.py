"""A stand-in for the Hugging Face Hub and for GitHub, on 127.0.0.1: serves model and dataset repositories
and release files from a folder the way those hosts do, so downloads are tested end to end without the
network, through ``huggingface_hub``'s own client (and a mirror or a checker can reproduce them).

Folder layout (``ROOT``) and what is served where (``http://127.0.0.1:PORT``):

* ``ROOT/huggingface/models/OWNER/NAME/REVISION/PATH`` at ``/OWNER/NAME/resolve/REVISION/PATH`` and
  ``ROOT/huggingface/datasets/OWNER/NAME/REVISION/PATH`` at ``/datasets/OWNER/NAME/resolve/REVISION/PATH``.
  ``REVISION`` is a commit's folder; ``ROOT/huggingface/TYPE/OWNER/NAME/refs/BRANCH`` holds the commit a
  branch or tag names (:meth:`StandInHub.add` writes both). A file is answered as the hub answers for an
  LFS file: ``302`` to ``http://localhost:PORT/cdn/SHA256`` (another host name, as the hub's CDN is another
  host) with ``X-Repo-Commit`` (the commit), ``X-Linked-Etag`` (the content's SHA-256), ``X-Linked-Size``
  and ``ETag`` (the git blob id of the LFS pointer file, as the hub sends). A file whose name ends in
  ``.git-blob`` is answered as a small file kept in git instead: ``200`` with the bytes and ``ETag``, the
  git blob SHA-1 of its content (the suffix is not part of its served name). What the hub does not have is
  answered as the hub answers it, with ``X-Error-Code``: ``RepoNotFound`` (401), ``RevisionNotFound`` and
  ``EntryNotFound`` (404).
* ``ROOT/github/...`` at ``/github/...``: ``OWNER/NAME/releases/download/TAG/ASSET`` and
  ``OWNER/NAME/raw/COMMIT/PATH``, as GitHub lays them out.

Bytes are served with ``Accept-Ranges: bytes``, and a ``Range: bytes=START-`` request is answered ``206``
with ``Content-Range`` (``416`` past the end), as the CDN and GitHub do.

Set ``HF_ENDPOINT=http://127.0.0.1:PORT`` and ``REFINELAB_RELEASE_URL=http://127.0.0.1:PORT/github``
(:meth:`StandInHub.environ`). Faults for tests, by path relative to ``ROOT``
(``huggingface/datasets/OWNER/NAME/COMMIT/PATH``): ``corrupt`` (served with one byte changed, the headers
still announcing the true hash), ``cut`` (path -> bytes after which each connection closes), ``stall``
(path -> bytes after which the server waits until stopped), and ``commit`` (announced instead of the
requested revision's). Every request is logged in ``requests``.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Literal, NamedTuple
from urllib.parse import unquote

GIT_BLOB = ".git-blob"
"""Suffix marking a file served as a small (non-LFS) hub file."""
_COMMIT = re.compile(r"[0-9a-f]{40}")


class Request(NamedTuple):
    """One request the stand-in answered."""

    method: str
    """``HEAD`` or ``GET``."""
    path: str
    """The URL path."""
    range: str | None
    """The ``Range`` header, if any."""


class _Answer(NamedTuple):
    """How to answer a request: ``status``, the file whose bytes to send (if any), headers."""

    status: int
    file: Path | None
    headers: dict[str, str]


class StandInHub(ThreadingHTTPServer):
    """The server; see the module docstring. Use :func:`serve_standin` to run it in a thread."""

    daemon_threads = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.root = root
        """The folder served."""
        self.corrupt: set[str] = set()
        """Paths served with one byte changed."""
        self.cut: dict[str, int] = {}
        """Path -> bytes after which each connection closes."""
        self.stall: dict[str, int] = {}
        """Path -> bytes after which the server waits until stopped."""
        self.requests: list[Request] = []
        """Every request answered, in order."""
        self.commit: str | None = None
        """Announce this commit instead of the requested revision's (a hub that resolved it elsewhere)."""
        self.stopping = threading.Event()
        """Set when the server stops (a stalled answer ends then)."""
        self._hashes: dict[Path, str] = {}

    def handle_error(self, request: object, client_address: object) -> None:
        """Quiet: clients that go away mid-download are expected here."""

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def cdn_url(self) -> str:
        """``http://localhost:PORT``: the same server under another host name, as the hub's CDN is another
        host (``huggingface_hub`` follows redirects within the hub only)."""
        return f"http://localhost:{self.server_address[1]}"

    def environ(self) -> dict[str, str]:
        """The variables that point refinelab at this server."""
        return {"HF_ENDPOINT": self.url, "REFINELAB_RELEASE_URL": f"{self.url}/github"}

    def add(
        self,
        repo: str,
        path: str,
        content: bytes,
        *,
        repo_type: Literal["model", "dataset"] = "model",
        branch: str = "main",
    ) -> str:
        """Commit ``content`` as ``path`` on ``branch`` of a repository (keeping the branch's other files), as
        an LFS file; the new commit."""
        folder = self.root / "huggingface" / f"{repo_type}s" / repo
        previous = _read_ref(folder, branch)
        made = f"{repo} {branch} {previous} {path}\0".encode() + content
        commit = hashlib.sha1(made).hexdigest()  # noqa: S324 - a commit id (of made-up contents), as git names one
        if previous is not None:
            shutil.copytree(folder / previous, folder / commit, dirs_exist_ok=True)
        target = folder / commit / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        (folder / "refs" / branch).parent.mkdir(parents=True, exist_ok=True)
        (folder / "refs" / branch).write_text(commit, encoding="utf-8")
        return commit

    def sha256(self, path: Path) -> str:
        """SHA-256 of a served file (remembered)."""
        if path not in self._hashes:
            self._hashes[path] = hashlib.sha256(path.read_bytes()).hexdigest()
        return self._hashes[path]

    def answer(self, url_path: str) -> _Answer:
        """How to answer a request for ``url_path``."""
        parts = [unquote(p) for p in url_path.split("?", 1)[0].split("/") if p]
        if parts[:1] == ["datasets"] and len(parts) >= 6 and parts[3] == "resolve":
            return self._resolve("datasets", parts[1:3], parts[4], parts[5:])
        if len(parts) >= 5 and parts[2] == "resolve":
            return self._resolve("models", parts[0:2], parts[3], parts[4:])
        if len(parts) == 2 and parts[0] == "cdn":
            found = next((p for p in self._served() if self.sha256(p) == parts[1]), None)
            return _Answer(200, found, {"ETag": f'"{parts[1]}"'}) if found else _Answer(404, None, {})
        if parts[:1] == ["github"] and self.root.joinpath(*parts).is_file():
            return _Answer(200, self.root.joinpath(*parts), {})
        return _Answer(404, None, {})

    def _resolve(self, kind: str, repo: list[str], revision: str, rest: list[str]) -> _Answer:
        folder = self.root.joinpath("huggingface", kind, *repo)
        if not folder.is_dir():
            return _Answer(401, None, {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"})
        commit = revision if (folder / revision).is_dir() and revision != "refs" else _read_ref(folder, revision)
        if commit is None:
            return _Answer(404, None, {"X-Error-Code": "RevisionNotFound", "X-Error-Message": "Invalid rev id"})
        named = commit if _COMMIT.fullmatch(commit) else hashlib.sha1(commit.encode()).hexdigest()  # noqa: S324
        announced = self.commit or named  # a folder named like a branch still answers with a commit id
        base = folder / commit
        if base.joinpath(*rest).is_file():
            return self._lfs(base.joinpath(*rest), announced)
        small = base.joinpath(*rest[:-1], rest[-1] + GIT_BLOB)
        if small.is_file():
            blob = _git_blob(small.read_bytes())
            return _Answer(200, small, {"X-Repo-Commit": announced, "ETag": f'"{blob}"'})
        headers = {"X-Error-Code": "EntryNotFound", "X-Error-Message": "Entry not found", "X-Repo-Commit": announced}
        return _Answer(404, None, headers)

    def _lfs(self, path: Path, commit: str) -> _Answer:
        sha, size = self.sha256(path), path.stat().st_size
        pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha}\nsize {size}\n".encode()
        headers = {
            "X-Repo-Commit": commit,
            "X-Linked-Etag": f'"{sha}"',
            "X-Linked-Size": str(size),
            "ETag": f'"{_git_blob(pointer)}"',
            "Location": f"{self.cdn_url}/cdn/{sha}",
        }
        return _Answer(302, None, headers)

    def _served(self) -> Iterator[Path]:
        return (p for p in (self.root / "huggingface").rglob("*") if p.is_file() and "refs" not in p.parts[-2:-1])


def _read_ref(folder: Path, name: str) -> str | None:
    ref = folder / "refs" / name
    return ref.read_text(encoding="utf-8").strip() if ref.is_file() else None


def _git_blob(data: bytes) -> str:
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()  # noqa: S324 - git's object id


class _Handler(BaseHTTPRequestHandler):
    server: StandInHub

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_HEAD(self) -> None:
        self._respond(body=False)

    def do_GET(self) -> None:
        self._respond(body=True)

    def _respond(self, *, body: bool) -> None:
        self.server.requests.append(Request(self.command, self.path, self.headers.get("Range")))
        status, path, headers = self.server.answer(self.path)
        if path is None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._send_file(path, headers, body=body)

    def _send_file(self, path: Path, headers: dict[str, str], *, body: bool) -> None:
        data = path.read_bytes()
        relative = path.relative_to(self.server.root).as_posix()
        if relative in self.server.corrupt and data:
            data = bytes([data[0] ^ 1]) + data[1:]
        start = _range_start(self.headers.get("Range"))
        if start and start >= len(data):
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{len(data)}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(206 if start else 200)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(len(data) - start))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        if body:
            self._stream(data[start:], relative)

    def _stream(self, data: bytes, relative: str) -> None:
        limit = self.server.cut.get(relative)
        stall = self.server.stall.get(relative)
        if stall is not None:
            self.wfile.write(data[:stall])
            self.wfile.flush()
            self.server.stopping.wait()
            return
        self.wfile.write(data if limit is None else data[:limit])
        if limit is not None:
            self.close_connection = True


def _range_start(header: str | None) -> int:
    if header and header.startswith("bytes=") and header.endswith("-"):
        start = header[len("bytes=") : -1]
        return int(start) if start.isdigit() else 0
    return 0


@contextmanager
def serve_standin(root: Path) -> Iterator[StandInHub]:
    """Run a :class:`StandInHub` over ``root`` in a background thread for the ``with`` block."""
    server = StandInHub(root)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
