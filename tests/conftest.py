"""Shared fixtures: the shared data folder (skip when absent) and running async sandbox code."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from refinelab.sandbox import WorkerPool

T = TypeVar("T")
SHARED = Path(os.environ.get("REFINELAB_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
"""``../shared/data`` beside the checkout, or ``$REFINELAB_SHARED_DATA`` (a checkout elsewhere, e.g. a worktree)."""


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` beside the project; tests that need it skip with the reason when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"shared benchmark data not found at {SHARED} (only present in the project workspace)")
    return SHARED


def with_pool(body: Callable[[WorkerPool], Awaitable[T]], **options: object) -> T:
    """Start a sandbox pool, run ``body`` with it, stop the pool."""

    async def main() -> T:
        async with WorkerPool(**options) as pool:  # type: ignore[arg-type]
            return await body(pool)

    return asyncio.run(main())
