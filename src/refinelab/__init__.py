"""refinelab: generate code with LLMs under test-time strategies, and measure what each buys."""

from __future__ import annotations

from typing import TYPE_CHECKING

from refinelab._version import __version__

if TYPE_CHECKING:
    from refinelab.solve import Solution, solve, solve_async

__all__ = ["Solution", "__version__", "solve", "solve_async"]


def __getattr__(name: str) -> object:
    """``from refinelab import solve`` loads the solve package on first use, so ``import refinelab`` stays fast."""
    if name in ("Solution", "solve", "solve_async"):
        import importlib

        module = importlib.import_module("refinelab.solve")  # sets ``solve`` here to the package; replaced below
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'refinelab' has no attribute {name!r}")
