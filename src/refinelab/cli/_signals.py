"""SIGTERM handled as Ctrl-C is: what a command started (sandbox workers, their scratch directories, a
run's state) is closed the normal way before it exits 143. ``timeout``, ``docker stop``, a pod's end and
a cancelled CI job all send SIGTERM, whose default action ends Python with no clean-up at all."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

TERMINATED = 128 + signal.SIGTERM
"""Exit code after SIGTERM (143), as a process killed by it."""


class Received:
    """Whether SIGTERM came: a command whose work answers a cancel with what it has (a solve's best
    attempt) still exits 143 after it."""

    def __init__(self) -> None:
        self.sigterm = False


async def until_sigterm(work: Coroutine[Any, Any, T], received: Received | None = None) -> T:
    """Await ``work``; SIGTERM cancels it the way Ctrl-C does (``asyncio.run`` then raises
    :class:`asyncio.CancelledError`, unless ``work`` answers the cancel) and is noted in ``received``. Off
    the main thread (a command called from a helper thread) only ``work`` is awaited: signals reach the main
    thread alone, and asyncio takes no handler elsewhere."""
    if threading.current_thread() is not threading.main_thread():
        return await work
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    noted = received or Received()

    def cancel() -> None:
        noted.sigterm = True
        task.cancel()

    loop.add_signal_handler(signal.SIGTERM, cancel)
    try:
        return await work
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
