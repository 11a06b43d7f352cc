"""Verified code for a prompt, in a terminal or a notebook: ``solve("...", model, tests=[...])``.

Generate, run the tests, feed the failures back, refine, until the code passes them or a budget runs
out; with no tests, the model's own generated tests stand in, and the result says so. One async core
(:func:`solve_async`) with a thin synchronous facade (:func:`solve`) that also works where an event loop
is already running (Jupyter). See docs/solve.md.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence

from refinelab.models import Model
from refinelab.problems import ProblemKind
from refinelab.solve._core import solve_async
from refinelab.solve._progress import SolveProgress
from refinelab.solve._solution import Evidence, Solution, TestCheck
from refinelab.solve._sync import run_sync
from refinelab.solve._task import SolveOptions
from refinelab.solve._tests import GivenTest, TestOrigin, TestSet, parse_io_pair, parse_tests, read_io_file

__all__ = [
    "Evidence",
    "GivenTest",
    "Solution",
    "SolveOptions",
    "SolveProgress",
    "TestCheck",
    "TestOrigin",
    "TestSet",
    "parse_io_pair",
    "parse_tests",
    "read_io_file",
    "solve",
    "solve_async",
]


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


class _CallableModule(types.ModuleType):
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


sys.modules[__name__].__class__ = _CallableModule
