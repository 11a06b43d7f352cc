"""A stand-in for the Hugging Face hub on 127.0.0.1, speaking as much of its protocol as ``huggingface_hub``
needs to download a file: ``HEAD``/``GET /OWNER/REPO/resolve/REVISION/FILE`` answers with a redirect to a
storage host carrying ``X-Repo-Commit``, ``X-Linked-Etag`` (the file's SHA-256) and ``X-Linked-Size``, or a
404 with the hub's ``X-Error-Code`` (``RepoNotFound``, ``RevisionNotFound``, ``EntryNotFound``); the storage
host (``localhost`` on the same port: another host name, as a CDN is) serves the bytes."""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote


@dataclass
class FakeHub:
    """Repos, their commits and files; what was asked."""

    commits: dict[str, dict[str, dict[str, bytes]]] = field(default_factory=dict)
    """repo -> commit -> filename -> content."""
    branches: dict[tuple[str, str], str] = field(default_factory=dict)
    """(repo, branch) -> commit."""
    corrupt: set[str] = field(default_factory=set)
    """Files whose bytes differ (one byte) from the hash the hub declares for them."""
    requests: list[tuple[str, str]] = field(default_factory=list)
    """(method, path) of every request."""
    port: int = 0
    """Where it listens (set by :func:`serve_hub`)."""

    @property
    def endpoint(self) -> str:
        """The value for ``HF_ENDPOINT``."""
        return f"http://127.0.0.1:{self.port}"

    def add(self, repo: str, filename: str, content: bytes, *, branch: str = "main") -> str:
        """Commit ``content`` as ``filename`` on ``branch`` (keeping the branch's other files); the commit."""
        commit = secrets.token_hex(20)
        previous = self.commits.get(repo, {}).get(self.branches.get((repo, branch), ""), {})
        self.commits.setdefault(repo, {})[commit] = {**previous, filename: content}
        self.branches[(repo, branch)] = commit
        return commit

    def find(self, repo: str, revision: str) -> str | None:
        """The commit a revision names."""
        if revision in self.commits.get(repo, {}):
            return revision
        return self.branches.get((repo, revision))

    def blob(self, sha: str) -> bytes | None:
        """The bytes served for a hash (tampered with for a corrupt file)."""
        for files in self.commits.values():
            for versions in files.values():
                for name, content in versions.items():
                    if hashlib.sha256(content).hexdigest() == sha:
                        return content[:-1] + bytes([content[-1] ^ 1]) if name in self.corrupt else content
        return None


class _Handler(BaseHTTPRequestHandler):
    hub: FakeHub
    """The hub this server stands in for (set on a subclass per server)."""

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self, *, body: bool) -> None:
        self.hub.requests.append((self.command, self.path))
        path = unquote(self.path.split("?")[0]).lstrip("/")
        if path.startswith("cdn/"):
            self._blob(path[4:], body=body)
            return
        parts = path.split("/")
        if len(parts) < 5 or parts[2] != "resolve":
            self._send(404, {"X-Error-Code": "RepoNotFound"})
            return
        repo, revision, filename = "/".join(parts[:2]), parts[3], "/".join(parts[4:])
        self._resolve(repo, revision, filename)

    def _resolve(self, repo: str, revision: str, filename: str) -> None:
        if repo not in self.hub.commits:
            self._send(401, {"X-Error-Code": "RepoNotFound"})
            return
        commit = self.hub.find(repo, revision)
        if commit is None:
            self._send(404, {"X-Error-Code": "RevisionNotFound"})
            return
        content = self.hub.commits[repo][commit].get(filename)
        if content is None:
            self._send(404, {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": commit})
            return
        sha = hashlib.sha256(content).hexdigest()
        headers = {
            "Location": f"http://localhost:{self.hub.port}/cdn/{sha}",
            "X-Repo-Commit": commit,
            "X-Linked-Etag": f'"{sha}"',
            "X-Linked-Size": str(len(content)),
            "ETag": f'"{hashlib.sha1(content).hexdigest()}"',  # git blob id, as the hub sends
        }
        self._send(302, headers)

    def _blob(self, sha: str, *, body: bool) -> None:
        content = self.hub.blob(sha)
        if content is None:
            self._send(404, {})
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(content)))
        self.send_header("ETag", f'"{sha}"')
        self.end_headers()
        if body:
            self.wfile.write(content)

    def _send(self, status: int, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()


@contextmanager
def serve_hub(hub: FakeHub) -> Iterator[FakeHub]:
    """Serve ``hub`` on 127.0.0.1 (a free port) until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (_Handler,), {"hub": hub}))
    hub.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
