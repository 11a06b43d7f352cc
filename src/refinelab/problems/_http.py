"""Streaming one URL into an open file, with progress in bytes and a resume after a dropped connection.

The standard library's ``urllib`` does the HTTP (redirects to a CDN are followed; proxies come from the
usual environment variables). A failure is a :class:`~refinelab.errors.UserError` with a short reason;
the caller adds which file it was and what to do.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import BinaryIO

from refinelab.errors import UserError

CHUNK = 1024 * 1024
"""Bytes read at a time."""
TIMEOUT = 60.0
"""Seconds without an answer before a connection counts as dropped."""
ATTEMPTS = 3
"""Connections tried before giving up (the later ones resume where the last one stopped)."""


Report = Callable[[int, int], None]
"""Called as ``report(bytes_so_far, total)`` (total 0 when unknown) as the body arrives."""


def stream(url: str, handle: BinaryIO, *, headers: Mapping[str, str], size: int | None, report: Report) -> int:
    """Write the body of ``url`` into ``handle`` (at its start); the number of bytes written.

    ``size``, when known, must be what arrives: a shorter body (a cut connection) is resumed from where
    it stopped, up to :data:`ATTEMPTS` connections, and then is an error, as is a longer one.
    """
    import urllib.error  # here: urllib.request loads ssl and email, which most commands never need
    from http.client import HTTPException

    written, reason = 0, ""
    for _ in range(ATTEMPTS):
        try:
            written, total = _attempt(url, handle, dict(headers), _Range(written, size), report)
            if total is None or written == total:
                return written
            reason = f"the connection closed after {written:,} of {total:,} bytes"
        except urllib.error.HTTPError as exc:
            raise UserError(f"HTTP {exc.code} {exc.reason} from {_short(url)}") from None
        except (urllib.error.URLError, HTTPException, OSError) as exc:
            reason, written = _reason(exc), handle.tell()  # resume after what did arrive
    raise UserError(f"{reason} ({_short(url)})")


@dataclass(frozen=True)
class _Range:
    """Where a connection takes up a download."""

    start: int
    """The first byte wanted (0: from the beginning)."""
    size: int | None
    """The whole file's size, when known."""


def _attempt(
    url: str, handle: BinaryIO, headers: dict[str, str], where: _Range, report: Report
) -> tuple[int, int | None]:
    """One connection: from byte ``where.start`` on when the server allows it, else from the beginning;
    ``(bytes written, expected total)``."""
    import urllib.request

    start, size = where.start, where.size
    if start:
        headers["Range"] = f"bytes={start}-"
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - http(s) URLs of pinned sources only
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # noqa: S310
        if start and response.status != 206:
            start = 0  # the server ignored the range: take the whole body again
        handle.seek(start)
        handle.truncate()
        length = response.headers.get("Content-Length")
        total = size if size is not None else (start + int(length) if length and length.isdigit() else None)
        done = start
        while chunk := response.read(CHUNK):
            handle.write(chunk)
            done += len(chunk)
            if total is not None and done > total:
                raise UserError(f"more bytes than the {total:,} expected ({_short(url)})")
            report(done, total or 0)
    return done, total


def _reason(exc: BaseException) -> str:
    inner = getattr(exc, "reason", None)
    if isinstance(inner, (socket.timeout, TimeoutError)) or isinstance(exc, (socket.timeout, TimeoutError)):
        return f"no answer within {TIMEOUT:g} s"
    text = str(inner if inner is not None else exc) or type(exc).__name__
    return text.splitlines()[0] if text else type(exc).__name__


def _short(url: str) -> str:
    return url if len(url) <= 100 else url[:97] + "..."
