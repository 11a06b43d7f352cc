"""The host's end of one worker's pipes (``WorkerProcess``): a job's reply is awaited in the caller's own task,
under the job's backstop (stretched by the machine's load), a worker that stops answering is given up on when
the backstop ends, and a worker given up on starts again at its next job."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from refinelab.errors import InfrastructureError
from refinelab.sandbox import _workers
from refinelab.sandbox._bwrap import WorkerCommand
from refinelab.sandbox._worker import protocol as wire
from refinelab.sandbox._workers import WorkerProcess

# A stand-in worker: ready, then it answers each job with its length; for a job reading "hang", never; for one
# reading "slow", once the next frame has come.
FAKE = f"""
import json, struct, sys, time
head = struct.Struct(">I")
out, into = sys.stdout.buffer, sys.stdin.buffer
out.write({wire.READY!r}); out.flush()
while header := into.read(head.size):
    body = into.read(head.unpack(header)[0])
    if body == b"hang":
        time.sleep(60)  # bounded: the test gives up after 0.5 s and ends this process
    if body == b"slow":
        into.read(head.unpack(into.read(head.size))[0])
    reply = json.dumps({{"length": len(body)}}).encode() + b"\\nrow"
    out.write(head.pack(len(reply)) + reply); out.flush()
"""


def _fake() -> WorkerProcess:
    return WorkerProcess(WorkerCommand((sys.executable, "-c", FAKE), "none"))


def _call(*bodies: bytes, timeout: float) -> list[object]:
    """Each body's reply (its JSON, its texts, and how many tasks the call made), or the exception it ended
    in; the worker stopped after."""

    async def main() -> list[object]:
        worker = _fake()
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


@pytest.mark.parametrize(("load", "stretch"), [(0.2, 1.0), (1.0, 1.0), (4.0, 4.0), (1e9, wire.WALL_CEILING)])
def test_the_backstop_is_stretched_by_the_load_up_to_the_workers_own_ceiling(
    monkeypatch: pytest.MonkeyPatch, load: float, stretch: float
) -> None:
    monkeypatch.setattr(_workers, "_load", lambda: load)
    assert _workers._stretched(30.0) == pytest.approx(30.0 * stretch)


@pytest.mark.parametrize(
    ("text", "load"),
    [("3.00 2.00 1.00 9/500 1234\n", 4.0), ("12.50 2.00 1.00 3/500 1234\n", 6.25), ("garbled\n", 1.0), (None, 1.0)],
)
def test_the_load_is_runnable_tasks_per_core_now_or_over_the_last_minute(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str | None, load: float
) -> None:
    # 9 runnable now, the reading process among them: 8 on 2 cores; else the last minute's 12.5 on 2 cores.
    path = tmp_path / "loadavg"
    if text is not None:
        path.write_text(text)
    monkeypatch.setattr(_workers, "_LOADAVG", str(path))
    monkeypatch.setattr(_workers, "default_workers", lambda: 2)
    assert _workers._load() == load


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the stretch is decided at the backstop from Python 3.11")
def test_on_a_loaded_machine_a_job_is_waited_for_past_its_backstop(monkeypatch: pytest.MonkeyPatch) -> None:
    # The reply is held until the backstop (1 s) has run out and the wait was stretched (ten times, by the load):
    # the test writes the frame that releases it then, and the stretched wait takes it. 64 workers on 2 cores had
    # each job past its backstop given up on.
    monkeypatch.setattr(_workers, "_load", lambda: 1e9)
    stretched, asked, ran_out = _workers._stretched, [], asyncio.Event()

    def noted(timeout: float) -> float:
        asked.append(timeout)
        ran_out.set()
        return stretched(timeout)

    monkeypatch.setattr(_workers, "_stretched", noted)

    async def main() -> object:
        worker = _fake()
        await worker.start()
        try:
            call = asyncio.ensure_future(worker.call(b"slow", 1.0))
            await ran_out.wait()
            assert not call.done()
            assert worker.process is not None and worker.process.stdin is not None
            worker.process.stdin.write(wire.HEADER.pack(2) + b"go")
            reply, _ = await call
            return reply
        finally:
            await worker.stop()

    assert asyncio.run(main()) == {"length": 4}
    assert asked == [1.0]


def test_a_worker_that_ended_while_it_was_being_stopped_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    # Its end not yet seen when the wait ran out, then gone when terminated: asyncio says ProcessLookupError.
    # That had escaped stop(), left the worker without a process, and failed every later job of it.
    monkeypatch.setattr(_workers, "_STOP_WAIT", 0.05)

    class Ending:
        stdin = None

        def __init__(self) -> None:
            self.ended = asyncio.Event()

        async def wait(self) -> int:
            await self.ended.wait()
            return 0

        def terminate(self) -> None:
            self.ended.set()
            raise ProcessLookupError

        kill = terminate

    async def main() -> None:
        worker = _fake()
        worker.process = Ending()  # type: ignore[assignment]
        await asyncio.wait_for(worker.stop(), 30.0)
        assert worker.process is None

    asyncio.run(main())


def test_a_worker_given_up_on_starts_again_at_its_next_job() -> None:
    async def main() -> list[object]:
        worker = _fake()
        await worker.start()
        try:
            await worker.stop()
            assert worker.process is None
            reply, texts = await worker.call(b"{}", 30.0)
            return [reply, bytes(texts)]
        finally:
            await worker.stop()

    assert asyncio.run(main()) == [{"length": 2}, b"row"]


def test_a_worker_that_ended_before_its_start_was_read_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    # Its exit, its words and the end of its pipes are all in before start() reads: the read then returns without
    # a turn of the loop, and stop() let go of the process before the task draining its stderr had begun (a loaded
    # CI run; the error had said nothing, and Landlock's refusal went unrecognised).
    spawn = asyncio.create_subprocess_exec

    async def ended(*argv: Any, **options: Any) -> asyncio.subprocess.Process:
        process = await spawn(*argv, **options)
        await process.wait()  # the pipes closed too: every byte is in the readers
        return process

    monkeypatch.setattr(asyncio, "create_subprocess_exec", ended)
    says = "import sys; sys.stderr.write('refused: the reason'); sys.exit(3)"
    worker = WorkerProcess(WorkerCommand((sys.executable, "-c", says), "none"))
    with pytest.raises(InfrastructureError, match="refused: the reason"):
        asyncio.run(worker.start())
