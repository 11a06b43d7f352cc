"""A stand-in for the Hugging Face Hub and for GitHub, on 127.0.0.1: serves a folder of benchmark files
the way those hosts do, so downloads are tested end to end without the network (and a mirror or a
checker can reproduce them).

Folder layout (``ROOT``) and what is served where (``http://127.0.0.1:PORT``):

* ``ROOT/huggingface/OWNER/NAME/REVISION/PATH`` at ``/datasets/OWNER/NAME/resolve/REVISION/PATH``,
  answered as the hub answers for an LFS file: a redirect to ``http://localhost:PORT/cdn/SHA256`` (another
  host name, as the hub's CDN is another host) with ``X-Repo-Commit``
  (the revision), ``X-Linked-Etag`` (the content's SHA-256) and ``X-Linked-Size``. A file whose name
  ends in ``.git-blob`` is answered as a small non-LFS file instead (``ETag``: the git blob SHA-1; the
  suffix is not part of its served name).
* ``ROOT/github/...`` at ``/github/...``: ``OWNER/NAME/releases/download/TAG/ASSET`` and
  ``OWNER/NAME/raw/COMMIT/PATH``, as GitHub lays them out.

Set ``HF_ENDPOINT=http://127.0.0.1:PORT`` and ``REFINELAB_RELEASE_URL=http://127.0.0.1:PORT/github``
(:meth:`StandInHub.environ`). Faults for tests: ``corrupt`` (paths served with one byte changed, the
headers still announcing the true hash), ``cut`` (path -> bytes after which the connection closes),
``stall`` (path -> bytes after which the server waits until stopped), ``commit`` (a commit announced
instead of the requested revision). Paths are relative to ``ROOT`` (``huggingface/OWNER/NAME/REV/PATH``).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

GIT_BLOB = ".git-blob"
"""Suffix marking a file served as a small (non-LFS) hub file."""


class StandInHub(ThreadingHTTPServer):
    """The server; see the module docstring. Use :func:`serve_standin` to run it in a thread."""

    daemon_threads = True

    def __init__(self, root: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.root = root
        self.corrupt: set[str] = set()
        self.cut: dict[str, int] = {}
        self.stall: dict[str, int] = {}
        self.requests: list[tuple[str, str]] = []
        self.commit: str | None = None
        """Announce this commit instead of the requested revision (a hub that resolved it elsewhere)."""
        self.stopping = threading.Event()
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

    def sha256(self, path: Path) -> str:
        """SHA-256 of a served file (remembered)."""
        if path not in self._hashes:
            self._hashes[path] = hashlib.sha256(path.read_bytes()).hexdigest()
        return self._hashes[path]

    def locate(self, url_path: str) -> tuple[str, Path | None, dict[str, str]]:
        """``(kind, file, headers)`` for a request path: kind ``hub`` (answer with a redirect), ``cdn``,
        ``github`` or ``missing``."""
        parts = [unquote(p) for p in url_path.split("?", 1)[0].split("/") if p]
        if len(parts) >= 6 and parts[0] == "datasets" and parts[3] == "resolve":
            owner, name, revision, rest = parts[1], parts[2], parts[4], parts[5:]
            base = self.root / "huggingface" / owner / name / revision
            for candidate, lfs in (
                (base.joinpath(*rest), True),
                (base.joinpath(*rest[:-1], rest[-1] + GIT_BLOB), False),
            ):
                if candidate.is_file():
                    return "hub", candidate, self._hub_headers(candidate, revision, lfs)
        if len(parts) == 2 and parts[0] == "cdn":
            found = next((p for p in self._served() if self.sha256(p) == parts[1]), None)
            return ("cdn", found, {}) if found else ("missing", None, {})
        if parts and parts[0] == "github":
            candidate = self.root.joinpath(*parts)
            if candidate.is_file():
                return "github", candidate, {}
        return "missing", None, {}

    def _served(self) -> Iterator[Path]:
        return (p for p in (self.root / "huggingface").rglob("*") if p.is_file())

    def _hub_headers(self, path: Path, revision: str, lfs: bool) -> dict[str, str]:
        data_size = path.stat().st_size
        revision = self.commit or revision
        if not lfs:
            blob = hashlib.sha1(f"blob {data_size}\0".encode() + path.read_bytes()).hexdigest()  # noqa: S324
            return {"X-Repo-Commit": revision, "ETag": f'"{blob}"', "Content-Length": str(data_size)}
        return {
            "X-Repo-Commit": revision,
            "X-Linked-Etag": f'"{self.sha256(path)}"',
            "X-Linked-Size": str(data_size),
            "ETag": '"0123456789abcdef0123456789abcdef01234567"',
            "Location": f"{self.cdn_url}/cdn/{self.sha256(path)}",
        }


class _Handler(BaseHTTPRequestHandler):
    server: StandInHub

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _answer(self, *, body: bool) -> None:
        self.server.requests.append((self.command, self.path))
        kind, path, headers = self.server.locate(self.path)
        if path is None:
            self.send_error(404, "Entry not found")
            return
        if kind == "hub" and "Location" in headers:
            self.send_response(302)
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
        self.send_response(206 if start else 200)
        for key, value in headers.items():
            if key != "Content-Length":
                self.send_header(key, value)
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
            while not self.server.stopping.wait(0.05):
                time.sleep(0.05)
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
