"""Verified code for a prompt, in a terminal or a notebook: ``solve("...", model, tests=[...])``.

Generate, run the tests, feed the failures back, refine, until the code passes them or a budget runs
out; with no tests, the model's own generated tests stand in, and the result says so. One async core
(:func:`solve_async`) with a thin synchronous facade (:func:`solve`) that also works where an event loop
is already running (Jupyter). See docs/solve.md.
"""

from __future__ import annotations

import sys as _sys

from refinelab.solve._core import solve_async
from refinelab.solve._facade import CallableModule as _CallableModule
from refinelab.solve._facade import solve
from refinelab.solve._progress import SolveProgress
from refinelab.solve._solution import Evidence, Solution, TestCheck
from refinelab.solve._task import SolveOptions
from refinelab.solve._tests import GivenTest, TestOrigin, TestSet, parse_given_tests, parse_io_pair, read_io_file

__all__ = [
    "Evidence",
    "GivenTest",
    "Solution",
    "SolveOptions",
    "SolveProgress",
    "TestCheck",
    "TestOrigin",
    "TestSet",
    "parse_given_tests",
    "parse_io_pair",
    "read_io_file",
    "solve",
    "solve_async",
]

_sys.modules[__name__].__class__ = _CallableModule  # ``from refinelab import solve`` gives something callable
