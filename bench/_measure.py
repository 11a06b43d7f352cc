"""Timing a whole command and the peak memory of its whole process tree, for the side-by-side benches.

Memory is sampled every 0.2 s over the command and every process it started (sandbox workers and their
children, a peer's process pools), as the sum of proportional set sizes (PSS: a page shared by N processes
counts 1/N in each, so forked children are not counted N times) and, beside it, the sum of resident sizes
(RSS, which overcounts shared pages). Sampling can miss a peak shorter than 0.2 s. The wall time ends when
the command exits, not at the next sample: the wait between samples ends early on the command's exit.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

INTERVAL = 0.2


@dataclass(frozen=True)
class Measured:
    """One command's run."""

    wall: float
    """Seconds from start to exit."""
    pss_mib: float
    """Peak of the summed PSS of the process tree."""
    rss_mib: float
    """Peak of the summed RSS of the process tree."""
    returncode: int
    """The command's exit status."""
    cpu: float = 0.0
    """CPU seconds of the whole tree (the command and every process it waited for), as the kernel counts."""
    main_cpu: float = 0.0
    """CPU seconds of the command's own process (its last sample, at most 0.2 s before it ended)."""
    serial_cpu: float = 0.0
    """CPU seconds the command's own process spent before any other process of its tree was seen (its last
    sample alone: at most what it spent alone). Nothing else of the command can have run meanwhile: work
    that no worker count shortens (evalplus computes HumanEval+'s expected outputs so, before its pool)."""

    def line(self, name: str) -> str:
        return f"{name:<34} {self.wall:8.1f} s   peak tree PSS {self.pss_mib:7.0f} MiB (RSS {self.rss_mib:6.0f})"


def _children() -> dict[int, list[int]]:
    found: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            parent = int(Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        found.setdefault(parent, []).append(int(name))
    return found


def _tree(root: int) -> list[int]:
    children, tree = _children(), [root]
    for pid in tree:
        tree += children.get(pid, [])
    return tree


def _memory(pid: int) -> tuple[int, int]:
    """(PSS, RSS) in KiB."""
    pss = rss = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1])
            elif line.startswith("Rss:"):
                rss = int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return pss, rss


def measure(
    command: Sequence[str], *, env: dict[str, str] | None = None, cwd: Path | None = None, log: Path | None = None
) -> Measured:
    """Run ``command`` and measure it (see the module docstring); its output goes to ``log`` (else nowhere)."""
    start = time.perf_counter()
    with open(log or os.devnull, "wb") as sink:
        process = subprocess.Popen(list(command), env=env, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT)
        return _follow(process, start)


def _follow(process: subprocess.Popen[bytes], start: float) -> Measured:
    """Sample the tree's memory (and the command's own CPU) until the command ends; reap it with its
    resource usage."""
    peak_pss = peak_rss = 0
    main_cpu = serial_cpu = 0.0
    alone = True
    exited = os.pidfd_open(process.pid)  # readable once the command has exited: the wait below ends then
    try:
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid != 0:
                break
            own = _own_cpu(process.pid)  # read before the tree: if the command is alone in it, it was then
            tree = _tree(process.pid)
            totals = [_memory(pid) for pid in tree]
            peak_pss = max(peak_pss, sum(p for p, _ in totals))
            peak_rss = max(peak_rss, sum(r for _, r in totals))
            main_cpu = max(main_cpu, own)
            alone = alone and len(tree) == 1
            serial_cpu = own if alone else serial_cpu
            select.select([exited], [], [], INTERVAL)
    finally:
        os.close(exited)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return Measured(
        wall, peak_pss / 1024, peak_rss / 1024, process.returncode, cpu=cpu, main_cpu=main_cpu, serial_cpu=serial_cpu
    )


def _own_cpu(pid: int) -> float:
    """User and system CPU seconds of process ``pid`` itself (0 if it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ratio(mine: float, theirs: float) -> str:
    """``0.42x`` (refinelab's time over the peer's; below 1 is faster)."""
    return f"{mine / theirs:.2f}x" if theirs > 0 else "n/a"
