"""The host's end of one worker's pipes (``WorkerProcess``): a job's reply is awaited in the caller's own task,
under the job's backstop, and a worker that stops answering is given up on when the backstop ends."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

from refinelab.sandbox._bwrap import WorkerCommand
from refinelab.sandbox._worker import protocol as wire
from refinelab.sandbox._workers import WorkerProcess

# A stand-in worker: ready, then it answers each job with its length, or, for a job reading "hang", never.
FAKE = f"""
import json, struct, sys, time
head = struct.Struct(">I")
out, into = sys.stdout.buffer, sys.stdin.buffer
out.write({wire.READY!r}); out.flush()
while header := into.read(head.size):
    body = into.read(head.unpack(header)[0])
    if body == b"hang":
        time.sleep(60)  # bounded: the test gives up after 0.5 s and ends this process
    reply = json.dumps({{"length": len(body)}}).encode() + b"\\nrow"
    out.write(head.pack(len(reply)) + reply); out.flush()
"""


def _call(*bodies: bytes, timeout: float) -> list[object]:
    """Each body's reply (its JSON, its texts, and how many tasks the call made), or the exception it ended
    in; the worker stopped after."""

    async def main() -> list[object]:
        worker = WorkerProcess(WorkerCommand((sys.executable, "-c", FAKE), "none"))
        await worker.start()
        loop, made = asyncio.get_running_loop(), [0]

        def counted(loop: asyncio.AbstractEventLoop, coro: Any) -> asyncio.Task[Any]:
            made[0] += 1
            return asyncio.Task(coro, loop=loop)

        loop.set_task_factory(counted)
        found: list[object] = []
        try:
            for body in bodies:
                made[0] = 0
                try:
                    reply, texts = await worker.call(body, timeout)
                    found.append((reply, bytes(texts), made[0]))
                except asyncio.TimeoutError as exc:
                    found.append(exc)
        finally:
            loop.set_task_factory(None)
            await worker.stop()
        return found

    return asyncio.run(main())


def test_a_reply_is_read_in_the_callers_task_with_its_texts() -> None:
    found = _call(b"{}", b"x" * 100_000, timeout=30.0)
    assert found == [({"length": 2}, b"row", 0), ({"length": 100_000}, b"row", 0)]  # no task made for a call


def test_a_worker_that_stops_answering_is_given_up_on_at_the_backstop() -> None:
    started = time.monotonic()
    (found,) = _call(b"hang", timeout=0.5)
    assert isinstance(found, asyncio.TimeoutError)
    assert time.monotonic() - started < 30.0  # not the worker's 60 s: the backstop ended the wait
