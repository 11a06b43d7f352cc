"""The synchronous :func:`solve`, and the package made callable as it."""

from __future__ import annotations

import types
from collections.abc import Sequence

from refinelab.models import Model
from refinelab.problems import ProblemKind
from refinelab.solve._core import solve_async
from refinelab.solve._solution import Solution
from refinelab.solve._sync import run_sync
from refinelab.solve._task import SolveOptions


def solve(
    prompt: str,
    model: str | Model,
    *,
    tests: str | Sequence[str] = (),
    io: Sequence[tuple[str, str]] = (),
    kind: ProblemKind | None = None,
    options: SolveOptions | None = None,
) -> Solution:
    """:func:`solve_async` for synchronous code: scripts, and notebooks whose loop is already running.

    Ctrl-C (a kernel interrupt) returns the best attempt so far, its stop reason ``interrupted``.

    Example::

        from refinelab import solve
        solution = solve("def fib(n): return the first n Fibonacci numbers", "ollama:qwen2.5-coder:7b",
                         tests=["fib(1) == [0]", "fib(5) == [0, 1, 1, 2, 3]"])
        solution.verified, solution.code
    """
    return run_sync(lambda: solve_async(prompt, model, tests=tests, io=io, kind=kind, options=options))


class CallableModule(types.ModuleType):
    """This package, callable as :func:`solve`: after ``import refinelab.solve``, the name ``solve`` in
    ``refinelab`` is the package (Python's import sets it), and ``from refinelab import solve`` must still
    give something to call."""

    def __call__(
        self,
        prompt: str,
        model: str | Model,
        *,
        tests: str | Sequence[str] = (),
        io: Sequence[tuple[str, str]] = (),
        kind: ProblemKind | None = None,
        options: SolveOptions | None = None,
    ) -> Solution:
        return solve(prompt, model, tests=tests, io=io, kind=kind, options=options)
