"""Whether a model file can be loaded here: its size against the memory this process may use (the
system's available memory, the cgroup's limit, the address-space limit), checked before llama.cpp tries,
so a model that does not fit is a one-line user error, not a crash or a machine swapping for minutes."""

from __future__ import annotations

import resource
from pathlib import Path

from refinelab.errors import UserError

_OVERHEAD = 256 << 20
"""Room for llama.cpp's buffers and the KV cache of a few thousand tokens, beyond the weights."""


def needed_bytes(path: Path, context: int) -> int:
    """About what loading ``path`` with a ``context``-token window takes: the weights (mapped whole), a tenth
    more for compute buffers, and the KV cache (well under 64 KB a token for models up to 8B)."""
    return int(path.stat().st_size * 1.1) + _OVERHEAD + context * (64 << 10)


def sequences_that_fit(path: Path, kv_bytes: int, wanted: int, *, given: bool, root: Path = Path("/")) -> int:
    """How many sequences to decode together: ``wanted``, or as many as fit when their KV caches
    (``kv_bytes`` each) and the weights exceed the memory available (at least one). When the user asked
    for ``wanted`` (``given``), too many is a user error instead of a quiet reduction."""
    have = available_bytes(root)
    if have is None:
        return wanted
    fit = max(0, have - needed_bytes(path, 0)) // max(kv_bytes, 1)
    if fit >= wanted:
        return wanted
    if given:
        raise UserError(
            f"{path.name}: {wanted} sequences decoded together need {wanted * kv_bytes / 2**30:.1f} GiB of KV "
            f"cache beside the weights and {have / 2**30:.1f} GiB are available; set the model's concurrency "
            f"to {max(fit, 1)} or lower, or its context lower"
        )
    return max(1, fit)


def available_bytes(root: Path = Path("/")) -> int | None:
    """The least of: MemAvailable, the cgroup's memory.max less its current use, and the address-space
    limit less what is mapped now; ``None`` when none can be read (then nothing is checked)."""
    found = [v for v in (_meminfo(root), _cgroup(root), _address_space()) if v is not None]
    return min(found) if found else None


def check_fits(path: Path, context: int, root: Path = Path("/")) -> None:
    """A user error when the model clearly cannot be loaded in the memory available."""
    need, have = needed_bytes(path, context), available_bytes(root)
    if have is not None and need > have:
        raise UserError(
            f"{path.name} does not fit in memory: loading it takes about {need / 2**30:.1f} GiB and "
            f"{have / 2**30:.1f} GiB are available; use a smaller model or quantisation, or free memory"
        )


def _meminfo(root: Path) -> int | None:
    try:
        for line in (root / "proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup(root: Path) -> int | None:
    """The cgroup v2 limit left, for the cgroup this process is in."""
    try:
        relative = (root / "proc/self/cgroup").read_text().strip().splitlines()[0].split("::", 1)[1].lstrip("/")
        group = root / "sys/fs/cgroup" / relative
        limit = (group / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return int(limit) - int((group / "memory.current").read_text())
    except (OSError, ValueError, IndexError):
        return None


def _address_space() -> int | None:
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        mapped = int(Path("/proc/self/statm").read_text().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        mapped = 0
    return soft - mapped
