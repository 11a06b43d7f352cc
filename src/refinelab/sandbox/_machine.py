"""Which machine a sandbox's programs run on: an identity that stays while the machine and its Python do.

HumanEval+'s and MBPP+'s reference times are cached with the CPU time of a calibration workload, and a load
on another machine scales them by that workload's time there (``_reference``). On the machine that measured
them, the ratio is noise, not speed: on this project's 2-core VMs a calibration (the workload's fastest of
five runs) read 16.3 to 24.8 ms, 18 of them in three pools within a minute, and a warm check right after the
cold one scaled every limit above the 1 s floor by 0.746. A cache whose identity is the pool's is read at scale 1,
as the cold run that wrote it judged.
"""

from __future__ import annotations

import functools
import hashlib
import platform
import sys
from pathlib import Path

_MACHINE_IDS = (Path("/etc/machine-id"), Path("/var/lib/dbus/machine-id"))
_CPUINFO = Path("/proc/cpuinfo")


@functools.cache
def this_machine() -> str:
    """This machine's identity: its machine id and host name, its CPU's model, and the Python that runs the
    sandbox's children (the workers run this interpreter); any of them changed, it is another machine."""
    parts = (_machine_id(), platform.node(), _cpu_model(), platform.machine(), sys.implementation.name, sys.version)
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _machine_id() -> str:
    for path in _MACHINE_IDS:
        try:
            found = path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if found:
            return found
    return ""


def _cpu_model() -> str:
    """The first ``model name`` in ``/proc/cpuinfo`` (else what ``platform`` says of the processor)."""
    try:
        lines = _CPUINFO.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            return value.strip()
    return platform.processor()
