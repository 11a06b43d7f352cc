"""``scripts/install.sh`` (a user's install) and ``scripts/test.sh`` (a developer's: the tools, then the
checks) as a user with sudo on a machine that lacks bubblewrap and Chromium, with every system command
replaced by a recording stand-in: nothing is installed, nothing runs, nothing leaves the temporary folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FAKES = {
    # a non-root user
    "id": '#!/bin/sh\n[ "$1" = -u ] && echo 1000 || /usr/bin/id "$@"\n',
    # sudo resets the environment, as Debian's default sudoers does (env_reset)
    "sudo": '#!/bin/sh\necho "sudo $*" >> "$LOG"\nexec /usr/bin/env -i PATH="$PATH" LOG="$LOG" "$@"\n',
    "apt-get": '#!/bin/sh\necho "apt-get DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-unset} $*" >> "$LOG"\n',
    # the interpreter: has venv; as the virtualenv's python, records the pip install
    "python3": '#!/bin/sh\necho "python3 $*" >> "$LOG"\n',
    # a C++ compiler, so scripts/local-wheel.sh goes on to "build" (the stand-in pip records it)
    "g++": "#!/bin/sh\nexit 0\n",
}
TOOLS = ("dirname", "env", "bash", "grep", "cut", "tr", "sort", "sha256sum", "uname", "head", "mkdir", "rm", "mv")
"""Real tools the scripts use (scripts/local-wheel.sh: the machine's key, its cache directory)."""


def fake_path(folder: Path) -> Path:
    """A PATH holding the stand-ins and a few plain tools (:data:`TOOLS`), and neither bwrap, uv nor chromium."""
    folder.mkdir()
    for name, script in FAKES.items():
        (folder / name).write_text(script)
        (folder / name).chmod(0o755)
    for tool in TOOLS:
        (folder / tool).symlink_to(f"/usr/bin/{tool}")
    return folder


NO_VENV_PYTHON = """#!/bin/sh
case "$*" in
  *"import ensurepip"*) exit 1 ;;
  *version_info*) echo python3.12-venv ;;
  *) echo "python3.12 $*" >> "$LOG" ;;
esac
"""
"""An interpreter whose distribution split its venv module out (Ubuntu's python3.12 without python3.12-venv)."""


def install(
    tmp_path: Path, *, sudo: bool = True, python: str | None = None, script: str = "install.sh"
) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    """Run ``script`` with the stand-ins; the result, the log of calls and the virtualenv it reused."""
    bin_dir, log, venv = fake_path(tmp_path / "bin"), tmp_path / "log", tmp_path / "venv"
    if not sudo:
        (bin_dir / "sudo").unlink()
    if python is not None:
        (bin_dir / "python3").write_text(python)
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(bin_dir / "python3")  # an existing virtualenv is reused
    done = subprocess.run(
        ["/bin/bash", str(ROOT / "scripts" / script)],
        env={
            "PATH": str(bin_dir),
            "LOG": str(log),
            "REFINELAB_VENV": str(venv),
            "REFINELAB_WHEEL_CACHE": str(tmp_path / "wheels"),
        },
        capture_output=True,
        text=True,
        check=False,
    )
    return done, log, venv


def test_as_a_user_with_sudo_it_installs_bubblewrap_without_questions_and_says_how_to_run(tmp_path: Path) -> None:
    done, log, venv = install(tmp_path)
    assert done.returncode == 0, done.stderr
    calls = log.read_text().splitlines()
    installs = [line for line in calls if line.startswith("apt-get") and " install " in line]
    assert installs[0] == "apt-get DEBIAN_FRONTEND=noninteractive install -y -qq bubblewrap"
    assert all("DEBIAN_FRONTEND=noninteractive" in line for line in installs)  # sudo's env_reset did not drop it
    assert any(line.startswith("sudo ") and "apt-get install -y -qq bubblewrap" in line for line in calls)
    assert "python3 -m pip install --quiet --disable-pip-version-check -e .[view]" in calls
    assert done.stdout.strip().endswith(f"run {venv}/bin/refinelab, or first: source {venv}/bin/activate")


def test_the_users_install_installs_refinelab_with_the_viewer_and_nothing_for_developers(tmp_path: Path) -> None:
    done, log, _ = install(tmp_path)
    assert done.returncode == 0, done.stderr
    calls = log.read_text()
    assert "chromium" not in calls and ".[dev]" not in calls  # no browser, no development tools
    assert [line for line in calls.splitlines() if "pip install" in line] == [
        "python3 -m pip install --quiet --disable-pip-version-check -e .[view]"
    ]


def test_the_test_command_installs_the_development_tools_before_the_checks(tmp_path: Path) -> None:
    done, log, _ = install(tmp_path, script="test.sh")
    assert done.returncode == 0, done.stderr
    calls = log.read_text().splitlines()
    dev = calls.index("python3 -m pip install --quiet --disable-pip-version-check -e .[dev]")
    chromium = next(i for i, line in enumerate(calls) if line.endswith("install -y -qq chromium"))
    wheel = next(i for i, line in enumerate(calls) if "pip wheel" in line and "llama-cpp-python==" in line)
    local = next(i for i, line in enumerate(calls) if "--only-binary llama-cpp-python" in line)
    checks = [calls.index(f"python3 -m {tool}") for tool in ("ruff check src tests bench", "mypy", "pytest")]
    assert dev < chromium < wheel < local < min(checks) and checks == sorted(checks)
    assert calls[local].endswith(f"-e {ROOT}[local]")  # llama-cpp-python from the wheel cache, never compiled twice
    assert "bubblewrap" not in "".join(calls)  # the user's install did that


def test_the_test_command_can_skip_the_tools_and_needs_the_install_first(tmp_path: Path) -> None:
    bin_dir, log = fake_path(tmp_path / "bin"), tmp_path / "log"
    env = {"PATH": str(bin_dir), "LOG": str(log), "REFINELAB_VENV": str(tmp_path / "none")}
    done = subprocess.run(["/bin/bash", str(ROOT / "scripts" / "test.sh")], env=env, capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.strip().endswith("run: bash scripts/install.sh")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(bin_dir / "python3")
    env |= {"REFINELAB_VENV": str(venv), "REFINELAB_SKIP_DEV_TOOLS": "1"}
    done = subprocess.run(
        ["/bin/bash", str(ROOT / "scripts" / "test.sh"), "-x"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    calls = log.read_text().splitlines()
    assert calls == ["python3 -m ruff check src tests bench", "python3 -m ruff format --check src tests bench",
                     "python3 -m mypy", "python3 -m pytest -x"]  # fmt: skip


def test_ci_runs_exactly_the_readmes_two_commands() -> None:
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [line for line in run if line and not line.startswith(("#", "set ", "cd "))]
    assert commands == ["bash scripts/install.sh", "bash scripts/test.sh"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# refinelab\n\n```bash\nbash scripts/install.sh ") and "\nbash scripts/test.sh " in readme


def test_as_a_user_without_sudo_it_says_what_needs_root(tmp_path: Path) -> None:
    done, log, _ = install(tmp_path, sudo=False)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "install.sh: installing bubblewrap needs root: run this as root, or install sudo, or install them first"
    )
    assert "apt-get" not in (log.read_text() if log.exists() else "")


def test_the_venv_package_matches_the_chosen_interpreter(tmp_path: Path) -> None:
    done, log, _ = install(tmp_path, python=NO_VENV_PYTHON)
    assert done.returncode == 0, done.stderr
    installs = [line for line in log.read_text().splitlines() if line.startswith("apt-get") and " install " in line]
    assert installs[0] == "apt-get DEBIAN_FRONTEND=noninteractive install -y -qq bubblewrap python3.12-venv"
