"""The thin synchronous facade over the async core (STYLE.md practice 18).

The coroutine runs on its own event loop in a helper thread, so ``solve()`` works the same in a script
and inside Jupyter, where the notebook's loop is already running in the calling thread. Ctrl-C (or a
kernel interrupt) in the calling thread cancels the coroutine, which answers with its best attempt so far.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
_POLL_SECONDS = 0.1


class _Box:
    """What the helper thread hands back: its loop and task while running, then a result or an error."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.done = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.result: object = None
        self.error: BaseException | None = None


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``make()`` to completion from synchronous code, in or outside a running loop."""
    box = _Box()
    thread = threading.Thread(target=_thread_main, args=(make, box), name="refinelab-solve", daemon=True)
    thread.start()
    try:
        # an Event, not Thread.join: a KeyboardInterrupt inside join() can leave the thread looking finished
        # while it still runs (CPython before 3.12), and the result would be read before it is there
        while not box.done.wait(_POLL_SECONDS):
            pass
    except KeyboardInterrupt:
        _cancel(box)
        box.done.wait()
        if isinstance(box.error, asyncio.CancelledError):
            raise  # nothing was done yet: the interrupt stands
    thread.join()
    if box.error is not None:
        raise box.error
    return box.result  # type: ignore[return-value]


def _thread_main(make: Callable[[], Coroutine[Any, Any, Any]], box: _Box) -> None:
    async def main() -> object:
        box.loop, box.task = asyncio.get_running_loop(), asyncio.current_task()
        box.started.set()
        return await make()

    try:
        box.result = asyncio.run(main())
    except BaseException as exc:  # noqa: BLE001 - handed to the calling thread, which re-raises it
        box.error = exc
    finally:
        box.started.set()
        box.done.set()


def _cancel(box: _Box) -> None:
    box.started.wait()
    if box.loop is not None and box.task is not None and not box.loop.is_closed():
        try:
            box.loop.call_soon_threadsafe(box.task.cancel)
        except RuntimeError:
            pass  # the loop closed in between: the result is already there
