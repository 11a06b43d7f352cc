"""``refinelab view``: the viewer served on 127.0.0.1, reading the store on each request (so a run in
progress shows its newest trajectories; computed pages are reused until the run's data changes)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

from refinelab.errors import UserError
from refinelab.view._site import Source


class ViewServer(ThreadingHTTPServer):
    """The HTTP server; :func:`serving` runs it in a thread.

    Args:
        source: The files to serve.
        port: TCP port on 127.0.0.1 (0: any free port).
    """

    daemon_threads = True

    def __init__(self, source: Source, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.source = source

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/``."""
        return f"http://127.0.0.1:{self.server_address[1]}/"


@contextmanager
def serving(source: Source, port: int = 0) -> Iterator[ViewServer]:
    """Serve ``source`` in a background thread until the block ends."""
    try:
        server = ViewServer(source, port)
    except OSError as exc:
        raise UserError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror} (choose another --port, or 0)") from None
    thread = threading.Thread(target=server.serve_forever, name="refinelab-view", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer

    def do_GET(self) -> None:
        path = unquote(urlsplit(self.path).path)
        try:
            found = self.server.source.get(path)
        except UserError as exc:  # e.g. matplotlib missing: say so in the page, keep serving
            self.send_error(HTTPStatus.INTERNAL_SERVER_ERROR, str(exc))
            return
        if found is None:
            self.send_error(HTTPStatus.NOT_FOUND, "no such page")
            return
        content_type, body = found
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")  # live data: always ask again
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: a request log would bury the one line that says where the viewer is."""
