"""Streaming one URL into an open file, from where it already ends: progress in bytes, and a resume with a
``Range`` request after a dropped connection or an earlier, interrupted download.

The standard library's ``urllib`` does the HTTP (redirects to a CDN are followed; proxies come from the
usual environment variables). Each chunk is written through to the file as it arrives, so a process that
is killed keeps what it received. A failure is a :class:`~refinelab.errors.UserError` with a short
reason; the caller adds which file it was and what to do.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import BinaryIO

from refinelab.errors import UserError

CHUNK = 1024 * 1024
"""Bytes read at a time (at most)."""
TIMEOUT = 60.0
"""Seconds without an answer before a connection counts as dropped."""
ATTEMPTS = 3
"""Connections tried before giving up (the later ones resume where the last one stopped)."""


Report = Callable[[int, int], None]
"""Called as ``report(bytes_so_far, total)`` (total 0 when unknown) as the body arrives."""


@dataclass(frozen=True)
class Wanted:
    """What to fetch, and what is known of it."""

    url: str
    """Where the bytes are."""
    headers: Mapping[str, str]
    """Headers for the GET (a user agent; a token for the hub)."""
    size: int | None
    """The whole file's size, when known: what arrives must add up to it."""


def stream(wanted: Wanted, handle: BinaryIO, report: Report) -> int:
    """Append the rest of ``wanted`` to ``handle`` (which holds its first bytes, or none); the file's size.

    The transfer asks for the bytes after those ``handle`` already holds; a server that ignores the range
    sends the whole body, which replaces them. A body cut short is resumed where it stopped, up to
    :data:`ATTEMPTS` connections, and then is an error, as is a longer one.
    """
    import urllib.error  # here: urllib.request loads ssl and email, which most commands never need
    from http.client import HTTPException

    reason = ""
    for _ in range(ATTEMPTS):
        start = handle.seek(0, 2)
        if wanted.size is not None and start >= wanted.size:
            if start == wanted.size:  # all arrived before (and was not verified yet): nothing to ask for
                return start
            handle.truncate(0)  # longer than the file: not this file's bytes
            start = 0
        try:
            written, total = _attempt(wanted, handle, start, report)
            if total is None or written == total:
                return written
            reason = f"the connection closed after {written:,} of {total:,} bytes"
        except urllib.error.HTTPError as exc:
            if exc.code == 416 and start:  # the range starts past the end: what is kept is not this file's start
                handle.seek(0)
                handle.truncate()
                reason = "the server refused to resume"
                continue
            raise UserError(f"HTTP {exc.code} {exc.reason} from {_short(wanted.url)}") from None
        except (urllib.error.URLError, HTTPException, OSError) as exc:
            reason = _reason(exc)
    raise UserError(f"{reason} ({_short(wanted.url)})")


def _attempt(wanted: Wanted, handle: BinaryIO, start: int, report: Report) -> tuple[int, int | None]:
    """One connection: from byte ``start`` on when the server allows it, else from the beginning;
    ``(bytes the file now holds, expected total)``."""
    import urllib.request

    headers = dict(wanted.headers)
    if start:
        headers["Range"] = f"bytes={start}-"
    request = urllib.request.Request(wanted.url, headers=headers)  # noqa: S310 - http(s) URLs of pinned files only
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # noqa: S310
        if start and not _resumes_at(response.status, response.headers.get("Content-Range"), start):
            start = 0  # the server ignored the range: take the whole body again
        handle.seek(start)
        handle.truncate()
        length = response.headers.get("Content-Length")
        total = (
            wanted.size if wanted.size is not None else (start + int(length) if length and length.isdigit() else None)
        )
        done = start
        while chunk := response.read1(CHUNK):
            handle.write(chunk)
            done += len(chunk)
            if total is not None and done > total:
                raise UserError(f"more bytes than the {total:,} expected ({_short(wanted.url)})")
            report(done, total or 0)
    return done, total


def _resumes_at(status: int, content_range: str | None, start: int) -> bool:
    """True when a response is the part asked for: ``206`` with ``Content-Range: bytes START-...``."""
    return status == 206 and (content_range or "").startswith(f"bytes {start}-")


def _reason(exc: BaseException) -> str:
    inner = getattr(exc, "reason", None)
    if isinstance(inner, (socket.timeout, TimeoutError)) or isinstance(exc, (socket.timeout, TimeoutError)):
        return f"no answer within {TIMEOUT:g} s"
    text = str(inner if inner is not None else exc) or type(exc).__name__
    return text.splitlines()[0] if text else type(exc).__name__


def _short(url: str) -> str:
    return url if len(url) <= 100 else url[:97] + "..."
