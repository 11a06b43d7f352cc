"""Layers point one way: no module imports another package's private module, ``problems`` is pure
data, and ``metrics`` loads without the sandbox, the models or the fake server."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import refinelab

SOURCE = Path(refinelab.__file__).parent


def package_of(path: Path) -> str:
    """``sandbox`` for ``refinelab/sandbox/_pool.py``; ``errors`` for ``refinelab/errors.py``."""
    return path.relative_to(SOURCE).with_suffix("").parts[0]


def imported_modules(source: str, here: str = "refinelab") -> list[tuple[int, str]]:
    """``(line, module)`` for every import of refinelab in the source, at any depth (inside functions and
    ``TYPE_CHECKING`` blocks too). ``here`` is the package the source is in, for relative imports
    (``from ..sandbox import _pool`` in ``refinelab.experiment`` is ``refinelab.sandbox._pool``); a name
    imported from a module counts as that module, and as the submodule it may be."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parts = here.split(".")
            base = ".".join(parts[: len(parts) - node.level + 1] if node.level else [])
            module = ".".join(filter(None, [base, node.module or ""]))
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names if alias.name.startswith("_")]
    return sorted((line, name) for line, name in found if name.split(".")[0] == "refinelab")


def private_imports(package: str, source: str, here: str = "refinelab") -> list[str]:
    """Imports of another package's private module (``refinelab.<other>._x``). The root package's own
    private modules (``refinelab._progress``) are shared by every package and allowed."""
    bad = []
    for line, name in imported_modules(source, here):
        parts = name.split(".")
        private = [part for part in parts[2:] if part.startswith("_") and not part.startswith("__")]  # not dunders
        if len(parts) > 2 and parts[1] != package and private:
            bad.append(f"line {line}: {name}")
    return bad


def modules() -> list[Path]:
    return sorted(SOURCE.rglob("*.py"))


def package_path(path: Path) -> str:
    """The dotted package a module is in: ``refinelab.sandbox._worker`` for ``sandbox/_worker/child.py``."""
    return ".".join(("refinelab", *path.relative_to(SOURCE).parent.parts))


def test_no_module_imports_another_packages_private_module() -> None:
    bad = {
        str(path.relative_to(SOURCE)): found
        for path in modules()
        if (found := private_imports(package_of(path), path.read_text(encoding="utf-8"), package_path(path)))
    }
    assert not bad, bad


def test_the_scan_sees_private_imports_in_every_form() -> None:
    source = (
        "from refinelab.problems._humaneval import docstring_tests\n"
        "import refinelab.sandbox._worker.codec\n"
        "from refinelab.sandbox import Suite\n"
        "from refinelab._progress import ProgressHook\n"
        "from refinelab.experiment._spec import load_spec\n"
        "def f():\n    from refinelab.models._openai import OpenAIBackend\n"
        "from ..sandbox._pool import WorkerPool\n"
        "from ..sandbox import _judge\n"
        "from . import _store\n"
        "if TYPE_CHECKING:\n    from ..models._model import Model\n"
    )
    assert private_imports("experiment", source, "refinelab.experiment") == [
        "line 1: refinelab.problems._humaneval",
        "line 2: refinelab.sandbox._worker.codec",
        "line 7: refinelab.models._openai",
        "line 8: refinelab.sandbox._pool",
        "line 9: refinelab.sandbox._judge",
        "line 12: refinelab.models._model",
    ]


def test_problems_import_only_problems_and_the_shared_base() -> None:
    allowed = ("refinelab.problems", "refinelab.errors", "refinelab._")
    bad = [
        f"{path.name} {name}"
        for path in (SOURCE / "problems").glob("*.py")
        for _, name in imported_modules(path.read_text(encoding="utf-8"), package_path(path))
        if not name.startswith(allowed)
    ]
    assert not bad, bad


def loaded_after(statement: str) -> set[str]:
    code = f"import sys\n{statement}\nprint(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_metrics_load_without_the_sandbox_the_models_or_the_fake_server() -> None:
    loaded = loaded_after("import refinelab.metrics")
    assert "refinelab.metrics" in loaded
    forbidden = (
        "refinelab.sandbox",
        "refinelab.models",
        "refinelab.strategies",
        "refinelab.testing",
        "openai",
        "httpx",
    )
    assert not [name for name in loaded if name.startswith(forbidden)]


def test_problems_load_without_the_sandbox_or_the_models() -> None:
    loaded = loaded_after("import refinelab.problems")
    assert "refinelab.problems" in loaded
    assert not [name for name in loaded if name.startswith(("refinelab.sandbox", "refinelab.models"))]


def test_every_error_is_in_the_tree_drawn_in_refinelab_errors() -> None:
    """Every exception class refinelab defines lives in ``refinelab.errors`` and is drawn in its docstring
    (the CLI maps ``UserError`` to exit 2, so a user error defined elsewhere would be invisible there)."""
    import importlib
    import inspect
    import pkgutil

    from refinelab import errors

    found = {}
    for module in pkgutil.walk_packages(refinelab.__path__, "refinelab."):
        if module.name.endswith("__main__") or "._worker" in module.name:  # the worker: stdlib only, in the sandbox
            continue
        for name, value in vars(importlib.import_module(module.name)).items():
            error = inspect.isclass(value) and issubclass(value, Exception) and not issubclass(value, Warning)
            if error and value.__module__.startswith("refinelab"):
                found[name] = value.__module__
    assert {name: where for name, where in found.items() if where != "refinelab.errors"} == {}
    drawn = {name for name in found if re.search(rf"^ +(\W+ )?{name}\b", errors.__doc__ or "", re.MULTILINE)}
    assert drawn == set(found) and "BudgetExhausted" in drawn


def environment_names(source: str) -> list[str]:
    """The ``REFINELAB_*`` variables a module names to read (a string that is exactly such a name: prose and
    help texts that mention one are longer strings)."""
    return [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.fullmatch(r"REFINELAB_[A-Z_]+", node.value)
    ]


def test_refinelab_variables_are_read_in_one_place() -> None:
    """Settings come from ``refinelab.runtime`` (every setting's variable is a row of its table). Below it, only
    what is not a setting: the model layer's API key, a credential, and the download layer's transport (a
    mirror, offline mode, a manifest), both read from the environment they are handed."""
    assert environment_names('x.get("REFINELAB_STORE")\nhelp = "default: $REFINELAB_MODEL"\n') == ["REFINELAB_STORE"]
    found = {
        str(path.relative_to(SOURCE)): sorted(set(names))
        for path in modules()
        if (names := environment_names(path.read_text(encoding="utf-8")))
    }
    assert found == {
        "runtime/_settings.py": [
            "REFINELAB_CACHE",
            "REFINELAB_CACHE_DIR",
            "REFINELAB_CLUSTER",
            "REFINELAB_MODEL",
            "REFINELAB_SANDBOX",
            "REFINELAB_STORE",
            "REFINELAB_WORKERS",
        ],
        "runtime/_project.py": ["REFINELAB_CONFIG"],
        "models/_resolve.py": ["REFINELAB_API_KEY"],
        # the local backend's options under its per-model settings, and its model-file folder, read from the
        # environment open_model is handed (docs/design/runtime.md)
        "models/_local.py": ["REFINELAB_LOCAL_CONTEXT", "REFINELAB_LOCAL_THREADS"],
        "models/_local_files.py": ["REFINELAB_CACHE_DIR"],
        "_downloads/fetcher.py": ["REFINELAB_OFFLINE", "REFINELAB_RELEASE_URL"],
        "problems/_manifest.py": ["REFINELAB_BENCHMARK_MANIFEST"],
        "testing/_standin.py": ["REFINELAB_RELEASE_URL"],  # the stand-in hub writes it into the test's environment
        # not a setting: a diagnostic for bench/ (every sandbox job's times, read by bench/_predict.py)
        "sandbox/_trace.py": ["REFINELAB_JOB_TRACE"],
        # not a setting: how the host hands a landlock worker it starts that worker's policy
        "sandbox/_worker/confine.py": ["REFINELAB_CONFINE"],
    }


RUNTIME_DOC = Path(__file__).resolve().parents[1] / "docs" / "design" / "runtime.md"
SHARED_BASE = {"errors"}
"""Packages (besides the root's private modules) every layer may import."""


def documented_layers() -> list[list[str]]:
    """The layer order docs/design/runtime.md draws (``a`` → ``b``/``c`` → ...), lowest first; packages
    sharing a layer (``b``/``c``) are listed together."""
    text = RUNTIME_DOC.read_text(encoding="utf-8")
    found = re.search(r"The layers point one way: (.*?)\.\n\n", text, re.S)
    assert found is not None, "docs/design/runtime.md draws the layer order"
    order = " ".join(found.group(1).split())
    return [re.findall(r"`(\w+)`", layer) for layer in order.split("→")]


def test_the_documented_layer_order_is_the_code_s() -> None:
    """Every package is in the order docs/design/runtime.md draws, and imports only packages drawn before
    it (or the shared base): a package in a layer imports nothing from its own layer or a later one."""
    layers = documented_layers()
    rank = {package: i for i, layer in enumerate(layers) for package in layer}
    packages = {package_of(path) for path in modules()} - {"__init__", "__main__"}
    public = {p for p in packages if not p.startswith("_")} - SHARED_BASE
    assert public == set(rank), f"drawn but not a package, or a package not drawn: {public ^ set(rank)}"
    bad = []
    for path in modules():
        here = package_of(path)
        if here not in rank:
            continue
        for line, name in imported_modules(path.read_text(encoding="utf-8"), package_path(path)):
            other = name.split(".")[1] if "." in name else "refinelab"
            if other in (here, *SHARED_BASE) or other.startswith("_"):
                continue
            if other == "refinelab" or rank.get(other, len(layers)) >= rank[here]:
                bad.append(f"{path.relative_to(SOURCE)}:{line} imports {name}")
    assert not bad, bad


def test_the_layer_check_sees_an_upward_import() -> None:
    """The check above fails on an import that points up the order, or at the root package."""
    layers = documented_layers()
    rank = {package: i for i, layer in enumerate(layers) for package in layer}
    assert rank["problems"] < rank["sandbox"] < rank["store"] < rank["runtime"] < rank["cli"]
    assert (1, "refinelab") in imported_modules("from refinelab import __version__\n")
