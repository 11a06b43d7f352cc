"""The public surface of ``refinelab.solve``, and ``import refinelab`` staying light."""

from __future__ import annotations

import importlib
import subprocess
import sys

SOLVE = importlib.import_module("refinelab.solve")  # the package (``refinelab.solve`` is also the function)


def test_solve_api() -> None:
    assert sorted(SOLVE.__all__) == sorted(
        [
            "Evidence",
            "GivenTest",
            "Solution",
            "SolveOptions",
            "SolveProgress",
            "TestCheck",
            "TestOrigin",
            "TestSet",
            "parse_io_pair",
            "parse_given_tests",
            "read_io_file",
            "solve",
            "solve_async",
        ]
    )
    for name in SOLVE.__all__:
        assert hasattr(SOLVE, name), name


def test_from_refinelab_import_solve_is_lazy_and_callable() -> None:
    code = (
        "import sys, refinelab\n"
        "print('refinelab.solve' in sys.modules)\n"
        "from refinelab import solve, solve_async, Solution\n"
        "print(callable(solve), solve.__name__, Solution.__name__)\n"
        "import refinelab.solve as package\n"
        "print(callable(package))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[:3] == ["False", "True solve Solution", "True"]
