"""Reaching a Ray cluster before handing its address to Ray, and keeping ``ray.init``'s wait bounded.

Given an address where nothing listens, ``ray.init`` retries for many minutes (about 20 attempts of
some 40 s each: 13.7 minutes measured, printing a warning per attempt) while holding the main thread, so
a SIGTERM is not acted on either. Before calling it, :func:`reach_problem` opens a TCP connection to the
address (the head's GCS port, or the Ray Client server's) with a short timeout
(``ClusterOptions.connect_seconds``), in the event loop: a
refused or unanswered connection is a one-line user error within seconds, and a signal is handled as it
comes. When something does listen but does not answer as Ray, :func:`bounded_ray_init` makes Ray try
once (``RAY_gcs_server_port_wait_time_s=1``: about 40 s, then a ``ConnectionError``), unless the caller's
environment sets its own budget. ``ray.init`` replaces the process's SIGTERM handler with its own;
:func:`bounded_ray_init` puts the caller's back, so ``run`` still marks an interrupted run as such.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from urllib.parse import urlsplit

_WAIT_VARIABLE = "RAY_gcs_server_port_wait_time_s"
"""Ray's own budget for finding a cluster's GCS (one attempt a second, each waiting for the GCS)."""


def probe_target(address: str, environ: Mapping[str, str]) -> tuple[str, int] | None:
    """The host and port behind a cluster address (``auto`` reads ``RAY_ADDRESS``); ``None`` when there
    is nothing to probe (``auto`` without ``RAY_ADDRESS``: Ray looks for a cluster started here)."""
    if address == "auto":
        address = environ.get("RAY_ADDRESS", "")
        if not address or address == "auto":
            return None
    parts = urlsplit(address if "://" in address else f"ray://{address}")
    try:
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname or port is None:
        return None
    return parts.hostname, port


async def reach_problem(address: str, environ: Mapping[str, str], seconds: float) -> str | None:
    """Why nothing answers at a cluster's address (``None``: a connection was made, or there is nothing
    to probe): refused, or no answer within ``seconds``."""
    target = probe_target(address, environ)
    if target is None:
        return None
    host, port = target
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), seconds)
    except asyncio.TimeoutError:
        return f"nothing answered at {host}:{port} within {seconds:g} s"
    except OSError as exc:  # asyncio's message repeats the address: the system's words say it better
        reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
        return f"nothing answers at {host}:{port}: {reason}"
    writer.close()
    try:
        await writer.wait_closed()
    except OSError:
        pass
    return None


@contextmanager
def bounded_ray_init() -> Iterator[None]:
    """For a ``ray.init`` inside the block: one attempt at the cluster's GCS unless the environment sets
    Ray's own budget, and the SIGTERM handler that was there before it, back afterwards."""
    handler = signal.getsignal(signal.SIGTERM)
    added = _WAIT_VARIABLE not in os.environ
    if added:
        os.environ[_WAIT_VARIABLE] = "1"  # read by ray.init as it connects; put back below
    try:
        yield
    finally:
        if added:
            os.environ.pop(_WAIT_VARIABLE, None)
        if handler is not None and signal.getsignal(signal.SIGTERM) is not handler:
            try:
                signal.signal(signal.SIGTERM, handler)
            except ValueError:  # not the main thread: Ray left the handler alone there too
                pass
