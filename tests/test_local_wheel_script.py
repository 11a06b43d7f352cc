"""``scripts/local-wheel.sh`` with a stand-in pip that "builds" a wheel instantly: it builds once into a cache
keyed by version, architecture and CPU flags, reuses it afterwards, installs only from it, and leaves no
half-built directory behind when the build fails."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FAKE_PYTHON = """#!/bin/sh
echo "python $*" >> "$LOG"
case "$*" in
  *"pip --version"*) exit 0 ;;
  *"pip wheel"*)
    [ -n "$FAIL_BUILD" ] && exit 1
    while [ "$1" != "-w" ]; do shift; done
    touch "$2/llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl" ;;
esac
"""


def run(tmp_path: Path, *args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    if not bin_dir.exists():
        bin_dir.mkdir()
        (bin_dir / "python3").write_text(FAKE_PYTHON)
        (bin_dir / "python3").chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "LOG": str(tmp_path / "log"),
        "REFINELAB_WHEEL_CACHE": str(tmp_path / "wheels"),
        "HOME": str(tmp_path),
        **variables,
    }
    return subprocess.run(
        ["/bin/bash", str(ROOT / "scripts/local-wheel.sh"), *args], env=env, capture_output=True, text=True, check=False
    )


def calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "log"
    return log.read_text().splitlines() if log.exists() else []


def test_it_builds_once_into_a_cache_keyed_to_this_machine(tmp_path: Path) -> None:
    first = run(tmp_path)
    assert first.returncode == 0, first.stderr
    wheel = Path(first.stdout.strip())
    assert wheel.name == "llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl" and wheel.is_file()
    assert wheel.parent.parent == tmp_path / "wheels"
    assert wheel.parent.name.startswith(f"llama-cpp-python-0.3.36-{os.uname().machine}-cpu")
    builds = [c for c in calls(tmp_path) if "pip wheel" in c]
    assert builds == [
        "python -m pip wheel --quiet --disable-pip-version-check --no-deps llama-cpp-python==0.3.36 -w "
        + builds[0].split(" -w ")[1]
    ]
    again = run(tmp_path)
    assert again.stdout == first.stdout and len([c for c in calls(tmp_path) if "pip wheel" in c]) == 1
    other = run(tmp_path, CMAKE_ARGS="-DGGML_NATIVE=OFF")  # another build configuration is another wheel
    assert other.stdout != first.stdout and len([c for c in calls(tmp_path) if "pip wheel" in c]) == 2


def test_a_failed_build_leaves_nothing_in_the_cache(tmp_path: Path) -> None:
    done = run(tmp_path, FAIL_BUILD="1")
    assert done.returncode != 0
    assert not (tmp_path / "wheels").exists() or not list((tmp_path / "wheels").iterdir())


def test_install_uses_only_the_cached_wheel(tmp_path: Path) -> None:
    venv_python = tmp_path / "venv-python"
    venv_python.write_text(FAKE_PYTHON)
    venv_python.chmod(0o755)
    done = run(tmp_path, "--install", str(venv_python))
    assert done.returncode == 0, done.stderr
    install = [c for c in calls(tmp_path) if "pip install" in c]
    wheel_dir = Path(done.stdout.strip()).parent
    assert install == [
        f"python -m pip install --quiet --disable-pip-version-check --find-links {wheel_dir} --only-binary "
        f"llama-cpp-python llama-cpp-python==0.3.36 -e {ROOT}[local]"
    ]


def test_adopt_checks_what_it_keeps(tmp_path: Path) -> None:
    stray = tmp_path / "other-1.0-py3-none-any.whl"
    stray.write_text("")
    refused = run(tmp_path, "--adopt", str(stray))
    assert refused.returncode == 2 and "is not a llama-cpp-python 0.3.36 wheel" in refused.stderr
    built = tmp_path / "llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl"
    built.write_text("wheel")
    kept = run(tmp_path, "--adopt", str(built))
    assert kept.returncode == 0 and Path(kept.stdout.strip()).read_text() == "wheel"
    assert not [c for c in calls(tmp_path) if "pip wheel" in c]
