"""The processes a hostile test's programs leave behind, found by a marker in their command line (tests
only ever end processes they started: these, by PID)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def processes_with(marker: str) -> list[int]:
    """The PIDs whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def end_processes(pids: list[int]) -> None:
    """SIGKILL each of ``pids`` (gone already is fine)."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def outliving(marker: str, grace: float = 30.0) -> list[int]:
    """The processes with ``marker`` still running ``grace`` seconds after the run ended (ended, then
    returned). A PID namespace's processes die after its first process has exited, not with it, and a
    loaded machine takes a while to reap 50 of them; the marked programs sleep for 700 s or more, so
    one that truly outlived its sandbox is still here when the grace is over."""
    deadline = time.monotonic() + grace
    left = processes_with(marker)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = processes_with(marker)
    end_processes(left)
    return left
