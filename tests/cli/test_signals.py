"""SIGTERM handling around a command's work (``refinelab.cli._signals``)."""

from __future__ import annotations

import asyncio
import threading

from refinelab.cli import _signals


async def _answer() -> int:
    return 42


def test_a_command_run_off_the_main_thread_runs_its_work_without_a_signal_handler() -> None:
    # asyncio takes signal handlers on the main thread only: elsewhere adding one raised RuntimeError
    results: list[object] = []

    def command() -> None:
        try:
            results.append(asyncio.run(_signals.until_sigterm(_answer())))
        except Exception as exc:  # the test reports what went wrong
            results.append(exc)

    thread = threading.Thread(target=command)
    thread.start()
    thread.join()
    assert results == [42]


def test_on_the_main_thread_the_work_is_awaited_and_the_handler_removed() -> None:
    received = _signals.Received()
    assert asyncio.run(_signals.until_sigterm(_answer(), received)) == 42
    assert not received.sigterm
