"""The sandbox starts wherever refinelab is installed, and candidates never see any site-packages.

Each test builds an interpreter of one install shape in a temporary place (a virtualenv with links
or copies, in /tmp, /var/tmp or the home directory; a conda-like prefix whose python is a real binary
with its site-packages inside; a system Python; a ``pip --user`` site), makes refinelab importable
there, and runs a probe in a fresh process: start a pool, run a program that lists every
site-packages directory of that interpreter it can see and tries ``import refinelab``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

import refinelab
from refinelab.sandbox._bwrap import base_interpreter, bwrap_path

pytestmark = [pytest.mark.slow, pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap is not installed")]

SYSTEM_PYTHON = Path("/usr/bin/python3")
SOURCE = Path(refinelab.__file__).resolve().parents[1]
DEPENDENCIES = Path(sysconfig.get_paths()["purelib"])

PROBE = r"""
import asyncio, glob, json, site, sys
from refinelab.problems import StdioTest
from refinelab.sandbox import Suite, WorkerPool

# This interpreter's site directories, and every system one (Debian's dist-packages included).
system = [p for root in ("/usr/lib", "/usr/local/lib") for p in glob.glob(f"{root}/python3*/*-packages")]
site_dirs = sorted({*site.getsitepackages(), site.getusersitepackages(), *system, *sys.argv[1:]})
identity = [sys.version, sys.base_prefix]
program = (
    "import json, os, sys\n"
    f"found = [p for p in {site_dirs!r} if os.path.isdir(p) and os.listdir(p)]\n"
    "try:\n    import refinelab\n    found.append('import refinelab works')\nexcept ImportError:\n    pass\n"
    "print(json.dumps(found))\n"
    "print(json.dumps([sys.version, sys.prefix]))\n"  # the interpreter the worker really runs
)


async def main():
    async with WorkerPool(workers=1, isolation="bwrap") as pool:
        expected = "[]\n" + json.dumps(identity) + "\n"
        result = await pool.run(program, Suite.of([StdioTest("", expected)], kind="stdio"))
    outcome = result.outcomes[0]
    print(json.dumps({"verdict": outcome.verdict, "seen": outcome.actual, "message": outcome.message,
                      "prefix": sys.prefix, "site_dirs": site_dirs, "identity": identity}))

asyncio.run(main())
"""


def probe(python: Path, env: Mapping[str, str] | None = None, *extra_site_dirs: Path) -> dict[str, object]:
    """Run the probe with ``python``; refinelab must already be importable there."""
    done = subprocess.run(
        [str(python), "-c", PROBE, *map(str, extra_site_dirs)],
        env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def assert_clean(report: dict[str, object]) -> None:
    assert report["verdict"] == "pass", report
    assert report["site_dirs"], report  # the probe looked for something


def importable_from(site_packages: Path) -> None:
    """Make refinelab and its dependencies importable from an interpreter's own site directory."""
    site_packages.mkdir(parents=True, exist_ok=True)
    (site_packages / "refinelab-test.pth").write_text(f"{SOURCE}\n{DEPENDENCIES}\n")
    marker = site_packages / "marker_package"
    marker.mkdir(exist_ok=True)
    (marker / "__init__.py").write_text("SECRET = 'hidden tests could live here'\n")


def venv_site(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


@pytest.fixture(params=["tmp", "var-tmp", "home"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A directory in /tmp, /var/tmp or the home directory."""
    if request.param == "tmp":
        yield tmp_path
        return
    parent = Path("/var/tmp") if request.param == "var-tmp" else Path.home() / ".cache"
    parent.mkdir(parents=True, exist_ok=True)
    directory = Path(tempfile.mkdtemp(prefix="refinelab-test-", dir=parent))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.parametrize("copies", [False, True], ids=["links", "copies"])
def test_a_virtualenv_anywhere(place: Path, copies: bool) -> None:
    venv = place / "venv"
    subprocess.run(
        [base_interpreter(), "-m", "venv", "--without-pip", *(["--copies"] if copies else []), str(venv)], check=True
    )
    importable_from(venv_site(venv))
    assert_clean(probe(venv / "bin" / "python", None, venv_site(venv)))


def test_a_pipx_style_virtualenv_under_the_home_directory(tmp_path: Path) -> None:
    venv = tmp_path / "home" / ".local" / "pipx" / "venvs" / "refinelab"
    subprocess.run([base_interpreter(), "-m", "venv", "--without-pip", str(venv)], check=True)
    importable_from(venv_site(venv))
    assert_clean(probe(venv / "bin" / "python", {"HOME": str(tmp_path / "home")}, venv_site(venv)))


@pytest.mark.skipif(not SYSTEM_PYTHON.exists(), reason="no system Python at /usr/bin/python3")
def test_a_conda_style_prefix_with_a_real_interpreter_binary(tmp_path: Path) -> None:
    """A relocatable prefix (conda, pyenv, python-build-standalone): the binary and its standard
    library copied out of /usr, with site-packages inside the prefix, under a private (0700) directory
    as pyenv's is under /root. The worker must run this prefix's Python, not fall back to /usr's."""
    real = Path(os.path.realpath(SYSTEM_PYTHON))
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    prefix = private / "miniconda3"
    (prefix / "bin").mkdir(parents=True)
    shutil.copy2(real, prefix / "bin" / real.name)
    stdlib = Path("/usr/lib") / real.name
    shutil.copytree(stdlib, prefix / "lib" / real.name, ignore=shutil.ignore_patterns("test", "__pycache__"))
    report = probe(prefix / "bin" / real.name, {"PYTHONPATH": f"{SOURCE}:{DEPENDENCIES}"})
    assert report["prefix"] == str(prefix)
    assert isinstance(report["site_dirs"], list)
    site_dirs = [Path(p) for p in report["site_dirs"]]
    inside = [p for p in site_dirs if prefix in p.parents]
    assert inside
    for directory in inside:
        importable_from(directory)
    assert_clean(probe(prefix / "bin" / real.name, {"PYTHONPATH": f"{SOURCE}:{DEPENDENCIES}"}))


@pytest.mark.skipif(not SYSTEM_PYTHON.exists(), reason="no system Python at /usr/bin/python3")
def test_the_system_python_and_a_pip_user_site(tmp_path: Path) -> None:
    user_base = tmp_path / "userbase"
    version = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import sys; print(f'python{sys.version_info[0]}.{sys.version_info[1]}')"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    user_site = user_base / "lib" / version / "site-packages"
    importable_from(user_site)
    report = probe(SYSTEM_PYTHON, {"PYTHONUSERBASE": str(user_base)}, user_site)
    assert_clean(report)
    assert str(user_site) in report["site_dirs"]  # type: ignore[operator]


def uv_command() -> str | None:
    """uv on PATH, or beside the running interpreter (the dev extra installs it into the .venv)."""
    beside = Path(sys.executable).parent / "uv"
    return shutil.which("uv") or (str(beside) if beside.is_file() else None)


@pytest.mark.skipif(uv_command() is None, reason="uv is not installed (pip install uv to run this test)")
def test_a_uv_virtualenv(tmp_path: Path) -> None:
    venv = tmp_path / "uv-venv"
    uv = uv_command()
    assert uv is not None
    subprocess.run([uv, "venv", "--quiet", "--python", base_interpreter(), str(venv)], check=True)
    importable_from(venv_site(venv))
    assert_clean(probe(venv / "bin" / "python", None, venv_site(venv)))


def test_the_running_interpreter(tmp_path: Path) -> None:
    """Whatever runs this suite (the project's .venv in CI) passes the same probe."""
    assert_clean(probe(Path(sys.executable), {"PYTHONPATH": str(SOURCE)}, DEPENDENCIES))
