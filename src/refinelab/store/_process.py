"""Which process is running a run, and whether it still is: a run whose process was killed with
``kill -9`` (or died with its machine) cannot mark itself stopped, so readers of the store check.

A process is named by host, PID and a start token (the kernel's start time of that PID, from
``/proc``), so a PID reused by another program is not mistaken for the run's process.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProcessId:
    """One process on one machine."""

    host: str
    """``socket.gethostname()``."""
    pid: int
    """Process id."""
    started: str | None
    """The kernel's start time of ``pid`` (``None`` where ``/proc`` is unavailable)."""

    @classmethod
    def current(cls) -> ProcessId:
        """This process."""
        return cls(socket.gethostname(), os.getpid(), start_token(os.getpid()))

    def gone(self) -> bool:
        """True when this is known to be a process of this machine that no longer runs; unknown
        (another host) counts as not gone."""
        if self.host != socket.gethostname():
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # alive, owned by someone else
            pass
        return self.started is not None and start_token(self.pid) != self.started


def start_token(pid: int, proc: Path = Path("/proc")) -> str | None:
    """Field 22 of ``/proc/PID/stat`` (start time in clock ticks since boot), or ``None``."""
    try:
        stat = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: fields after it follow the last ")"
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None
