"""``refinelab check`` from start to end, as a library: the sandbox a benchmark's programs need, the
problems, the samples (and generated tests) read against them, then scoring and, when asked, choosing
one program per task. The command line only parses its flags and prints what comes back."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from refinelab._progress import ProgressHook
from refinelab.check._samples import Sample, ScoredSample, Whole, score_samples
from refinelab.check._selection import (
    GeneratedTestSet,
    Selection,
    SelectionOptions,
    select_by_agreement,
)
from refinelab.errors import UserError
from refinelab.problems import BENCHMARKS, BenchmarkFiles, FetchOptions, Problem, dated, open_benchmark, window_text
from refinelab.runtime import NOT_GIVEN, NotGiven, SandboxChoice, SandboxRequest, choose_sandbox
from refinelab.sandbox import IsolationMode, Limits, Sandbox, SandboxSettings, prepare_benchmark


@dataclass(frozen=True, kw_only=True)
class CheckOptions:
    """Which benchmark a check runs on, and how its programs run."""

    benchmark: str
    """A registered benchmark name."""
    data: Path | None = None
    """The benchmark file (instead of the benchmark's pinned source, downloaded once and cached)."""
    release: str | None = None
    """The release as upstream spells it (``release_v5``, ``v4_v5``...); ``None``: the benchmark's default."""
    after: str | None = None
    """Only problems dated on or after this day (``YYYY-MM-DD``)."""
    before: str | None = None
    """Only problems dated before this day (``YYYY-MM-DD``)."""
    timeout: float | None = None
    """CPU seconds for every test; ``None``: the benchmark's own rule (HumanEval+ and MBPP+: evalplus's
    ``max(1, 4 x the reference's time)``; LiveCodeBench 6; else 4)."""
    test_details: bool = False
    """Run every test of every program; by default a program's tests stop at its first failure (its
    verdict is known; the rest are ``skipped``), as evalplus does."""
    isolation: IsolationMode | NotGiven = NOT_GIVEN
    """Sandbox mode (not given: ``auto``)."""
    allow_packages: tuple[str, ...] = ()
    """Packages candidates may import, beyond what the benchmark's grader offers."""
    agreement_timeout: float | None = None
    """CPU seconds per generated test when choosing by dual agreement; ``None``: CodeT's 0.1 s."""

    @property
    def missing_packages(self) -> tuple[str, ...]:
        """Packages the benchmark's own grader offers that are not installed here (programs importing
        them fail)."""
        return BENCHMARKS[self.benchmark].offered_packages()[1]

    def choice(self) -> SandboxChoice:
        """The sandbox, chosen as ``run`` and ``solve`` choose theirs (:func:`refinelab.runtime.choose_sandbox`):
        the benchmark's time rule unless a timeout is given."""
        given = SandboxRequest(
            isolation=self.isolation,
            timeout=NOT_GIVEN if self.timeout is None else self.timeout,
            allow_packages=self.allow_packages,
            test_details=self.test_details,
            agreement_timeout=NOT_GIVEN if self.agreement_timeout is None else self.agreement_timeout,
        )
        return choose_sandbox([self.benchmark], given)

    def limits(self) -> Limits:
        """The limits a check scores with: the benchmark's time rule unless a timeout is given, and every
        test run only with ``test_details`` (else a program stops at its first failure)."""
        return self.choice().hidden_limits()

    def sandbox(self) -> SandboxSettings:
        """The sandbox: the limits (:meth:`limits`), and what candidates may import (what is allowed plus
        what the benchmark's grader offers and is installed)."""
        return self.choice().sandbox_settings([self.benchmark], self.limits())

    def files(self, fetch: FetchOptions) -> BenchmarkFiles:
        """The benchmark's files: ``data``, or its release downloaded once into the cache."""
        return open_benchmark(self.benchmark, self.data, release=self.release, options=fetch)

    async def problems(
        self, files: BenchmarkFiles, sandbox: Sandbox, cache_dir: Path | None, progress: ProgressHook
    ) -> list[Problem]:
        """The problems of ``files`` in the date window (expected outputs computed in ``sandbox`` where the
        source lacks them); an empty window is a user error."""
        loaded = await prepare_benchmark(files, pool=sandbox, cache_dir=cache_dir, progress=progress)
        return self.in_window(loaded)

    def in_window(self, problems: Sequence[Problem]) -> list[Problem]:
        """The problems in the date window; an empty window is a user error."""
        kept = dated(list(problems), self.after, self.before)
        if not kept:
            raise UserError(f"{self.benchmark}: no problem is dated {window_text(self.after, self.before)}")
        return kept


@dataclass(frozen=True)
class CheckInputs:
    """The files a check scores, read against the benchmark's problems (:func:`read_any_samples`,
    :func:`read_generated_tests`)."""

    samples: list[Sample]
    """Every program to score, in file order."""
    unmatched: tuple[str, ...] = ()
    """CodeT records of the samples file that matched no task."""
    tests: GeneratedTestSet | None = None
    """The generated tests, when a file of them was given."""


@dataclass(frozen=True)
class CheckResult:
    """What a check found."""

    scored: list[ScoredSample]
    """Every sample with its hidden-test result, in file order."""
    selections: list[Selection] | None = None
    """The program chosen per task, when selection was asked for."""


NO_TESTS = GeneratedTestSet({}, "plain")
"""No generated tests (selection on the visible tests alone)."""


async def check_samples(
    inputs: CheckInputs,
    sandbox: Sandbox,
    selection: SelectionOptions | None,
    progress: ProgressHook,
    on_scored: Callable[[int, ScoredSample], None] | None = None,
    whole: Whole | None = None,
) -> CheckResult:
    """Score every sample on its problem's hidden tests (each given to ``on_scored`` as it is known, and each
    task's as soon as ``whole`` has its problem, when the samples were read against problems still loading:
    see :func:`score_samples`); with ``selection``, also choose one per task by dual agreement."""
    scored = await score_samples(inputs.samples, sandbox, progress=progress, on_scored=on_scored, whole=whole)
    if selection is None:
        return CheckResult(scored)
    chosen = await select_by_agreement(scored, inputs.tests or NO_TESTS, sandbox, selection, progress=progress)
    return CheckResult(scored, chosen)
