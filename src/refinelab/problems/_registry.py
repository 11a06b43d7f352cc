"""Loading a benchmark by name (its record in :data:`~refinelab.problems.BENCHMARKS` says how), choosing
its problems (a release's part, a date window), and how task ids are spelled."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

from refinelab._downloads import FetchOptions
from refinelab.errors import UserError
from refinelab.problems._benchmarks import Reader, benchmark
from refinelab.problems._manifest import MBPP_SPLITS
from refinelab.problems._model import Problem
from refinelab.problems._source import BenchmarkFiles, open_benchmark


def read_benchmark(files: BenchmarkFiles) -> list[Problem]:
    """The problems in a benchmark's files (all but the computed ones: see :attr:`Benchmark.tasks`), only
    the release's part of them, never none."""
    name = files.benchmark
    read = _reader(name)
    problems = [problem for path in files.paths for problem in read(path)]
    return nonempty(subset(problems, files), name, files.paths[0] if files.given else None)


def subset(problems: list[Problem], files: BenchmarkFiles) -> list[Problem]:
    """The part of ``problems`` the release keeps (an APPS difficulty, an MBPP split by task id)."""
    if files.subset is None:
        return problems
    if files.subset in MBPP_SPLITS:
        low, high = MBPP_SPLITS[files.subset]
        numbers = ((p, p.id.rsplit("/", 1)[-1]) for p in problems)  # 11, or MBPP/11 in the HumanEval form
        return [p for p, n in numbers if n.isdigit() and low <= int(n) <= high]
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
    _reader(name)
    return read_benchmark(open_benchmark(name, path, release=release, options=options))


def _reader(name: str) -> Reader:
    """How ``name``'s files are read, or a user error for one whose outputs are computed in a sandbox."""
    read = benchmark(name).read
    if read is None:
        raise UserError(f"{name}'s expected outputs are computed in a sandbox: use refinelab.sandbox.prepare_benchmark")
    return read


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
