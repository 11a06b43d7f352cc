"""The isolations the hostile suites run under: what this machine's ``auto`` gives (bubblewrap here),
and ``landlock`` (no namespace: the isolation containers, pods and CI runners get).

``auto`` is skipped where it would fall back to ``landlock`` itself (inside scripts/test-contained.sh's
wrapper, which removes user namespaces and capabilities as a container does): the ``landlock`` run is
that run. ``$REFINELAB_EXPECT_ISOLATION``, set by the CI scripts, names the isolation ``landlock`` must
come out as there (``landlock`` or ``landlock-uid``), so a pass meant to exercise one cannot quietly
exercise the other.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from refinelab.sandbox import IsolationLevel, IsolationMode, Limits
from refinelab.sandbox._bwrap import probe_bwrap
from refinelab.sandbox._landlock import probe_landlock

ISOLATIONS: tuple[IsolationMode, ...] = ("auto", "landlock")


@functools.cache
def unavailable(mode: IsolationMode) -> str | None:
    """Why ``mode`` does not work here (None: it does; ``none`` always does)."""
    if mode == "auto":
        return probe_bwrap(Limits())
    return probe_landlock() if mode == "landlock" else None


def choose(mode: IsolationMode) -> IsolationMode:
    """``mode`` for a test, or skip saying why it cannot run here."""
    reason = unavailable(mode)
    if mode == "auto" and reason is not None:
        pytest.skip(f"auto falls back to landlock here ({reason}): the landlock run covers it")
    if reason is not None:
        assert not os.environ.get("REFINELAB_EXPECT_ISOLATION"), f"this pass needs landlock, which failed: {reason}"
        pytest.skip(f"landlock is not available here: {reason}")
    return mode


def family(level: IsolationLevel) -> str:
    """``bwrap`` or ``landlock`` (with or without a private uid), or the level itself."""
    return level.removesuffix("-uid")


def check_expected(level: IsolationLevel) -> None:
    """The level a landlock run got is the one the CI script asked for, when it asked."""
    expected = os.environ.get("REFINELAB_EXPECT_ISOLATION")
    if expected and family(level) == "landlock":
        assert level == expected, f"this pass should run under {expected}, got {level}"


@contextlib.contextmanager
def reachable_tmp() -> Iterator[Path]:
    """An empty directory, removed after, that a worker under a private uid can reach: a test's ``tmp_path``
    lies in pytest's own directory (mode 0700), which ``landlock-uid`` workers (root, with a world-readable
    Python such as Debian's) cannot traverse, so a pool made there says its scratch is not writable."""
    path = Path(tempfile.mkdtemp(prefix="refinelab-test-", dir=tempfile.gettempdir()))
    try:
        path.chmod(0o755)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
