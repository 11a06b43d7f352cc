"""The sandbox a command's programs run in and the limits they run under, decided in one place.

``run`` (from flags and from a spec file), ``check`` and ``solve`` each hand :func:`choose_sandbox` what
their layers say (:class:`SandboxRequest`: the command's flags first, then a spec file's ``[sandbox]``
table) and the benchmarks they run; what no layer says comes from the benchmarks' own graders: their
longest time per test (LiveCodeBench's 6 s, else 4 s) and, for HumanEval+ and MBPP+, evalplus's rule
(each test ``max(1, 4 x`` its reference's time ``)``), which a timeout given at any layer replaces. The
answer, a :class:`SandboxChoice`, is what a run records in its spec (it is part of the run id), so a run
started from flags and one from a spec file that say the same thing record the same limits and get the
same id. Where programs run (workers, a cluster) is a setting, not part of the choice's results.

The ``sandbox`` setting (``--sandbox``, ``$REFINELAB_SANDBOX``, ``sandbox`` in ``refinelab.toml``) names the
sandbox in one string, ``kind[:config]``, read by :func:`parse_sandbox` alone: an isolation kind (``auto``,
``bwrap``, ``landlock``, ``none``) or ``cluster:ADDRESS`` (a Ray cluster whose nodes run the programs). The
older spellings mean the same: ``--isolation KIND`` is ``--sandbox KIND``, and ``--cluster ADDRESS``
(``$REFINELAB_CLUSTER``, ``[sandbox] cluster``) is ``cluster:ADDRESS``.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Literal

from refinelab._validate import is_seconds
from refinelab.errors import UserError
from refinelab.problems import benchmark
from refinelab.runtime._given import NOT_GIVEN, NotGiven
from refinelab.sandbox import ISOLATION_MODES, IsolationMode, Limits, SandboxSettings, cluster_problem
from refinelab.verification import AGREEMENT_SECONDS, agreement_limits

SandboxKind = Literal["auto", "bwrap", "landlock", "none", "cluster"]
"""What the ``sandbox`` setting names: an isolation mode (how each program is confined), or ``cluster``."""
SANDBOX_KINDS: tuple[SandboxKind, ...] = typing.get_args(SandboxKind)
"""Every kind, in the order messages list them."""


WORKER_MEMORY = 16 * 2**20
"""Memory one idle sandbox worker holds at least (a Python interpreter: about 22 MiB proportional set
size measured under bwrap, landlock and none alike); the widest pool this machine can hold is its
memory over this, whatever its cores."""


def workers_problem(count: int) -> str | None:
    """What is wrong with a width of ``count`` workers in this machine's pool (``None``: nothing): more
    than its memory can hold (:data:`WORKER_MEMORY` each) would only swap it to a halt. More workers than
    cores is allowed (it only adds contention); a cluster's nodes do not use it (one per Ray CPU)."""
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    most = max(1, memory // WORKER_MEMORY)
    if count <= most:
        return None
    return (
        f"{count:,} sandbox workers would not fit in this machine's memory ({memory / 2**30:.1f} GiB holds at "
        f"most {most:,}, each at least {WORKER_MEMORY // 2**20} MiB); more workers than cores only adds contention"
    )


@dataclass(frozen=True)
class SandboxSetting:
    """The ``sandbox`` setting, parsed (see the module docstring)."""

    kind: SandboxKind
    """An isolation mode, or ``cluster``."""
    config: str | None = None
    """What follows the colon: a cluster's address (``auto``, ``ray://HOST:PORT``, ``HOST:PORT``)."""

    def __str__(self) -> str:
        return self.kind if self.config is None else f"{self.kind}:{self.config}"

    @property
    def isolation(self) -> IsolationMode | NotGiven:
        """The isolation it names (:data:`NOT_GIVEN` for a cluster: its nodes confine programs as the other
        layers say)."""
        return NOT_GIVEN if self.kind == "cluster" else self.kind

    @property
    def cluster(self) -> str | None:
        """The cluster's address, for ``cluster:ADDRESS``."""
        return self.config if self.kind == "cluster" else None


def sandbox_problem(text: str) -> str | None:
    """What is wrong with a ``sandbox`` setting (``None``: nothing)."""
    kind, colon, config = text.partition(":")
    if kind not in SANDBOX_KINDS:
        return f"sandbox {text!r}: unknown kind {kind!r}; choose {', '.join(ISOLATION_MODES)} or cluster:ADDRESS"
    if kind != "cluster":
        return f"sandbox {text!r}: {kind} takes no ':' setting" if colon else None
    if not config:
        return f"sandbox {text!r}: name the cluster, cluster:auto, cluster:ray://HOST:PORT or cluster:HOST:PORT"
    return cluster_problem(config)


def parse_sandbox(text: str) -> SandboxSetting:
    """The ``sandbox`` setting ``kind[:config]`` (``landlock``, ``cluster:ray://HOST:10001``), or a user error
    saying what is wrong with it: the one place it is read."""
    problem = sandbox_problem(text)
    if problem is not None:
        raise UserError(problem)
    kind, _, config = text.partition(":")
    return SandboxSetting(typing.cast(SandboxKind, kind), config or None)


DEFAULT_TIMEOUT = Limits().cpu_seconds
"""CPU seconds per test when neither a layer nor a benchmark says otherwise."""


@dataclass(frozen=True)
class SandboxChoice:
    """How generated code runs: what a run records (see the module docstring)."""

    isolation: IsolationMode = "auto"
    """``auto``, ``bwrap``, ``landlock`` or ``none`` (``auto``: bubblewrap, else landlock, else refuse)."""
    timeout: float = DEFAULT_TIMEOUT
    """CPU seconds per test."""
    workers: int | None = None
    """Sandbox workers (default: the number of cores). Does not change results."""
    allow_packages: tuple[str, ...] = ()
    """Packages candidates may import (e.g. numpy)."""
    follow_reference: bool = False
    """Tests whose reference solution's time is known (HumanEval+) get evalplus's ``max(1, 4 x t)`` CPU
    seconds instead of ``timeout`` (set when no layer gives a timeout and a benchmark follows the rule)."""
    test_details: bool = False
    """Run every hidden test of every attempt (the viewer then shows each one's outcome); by default an
    attempt's hidden tests stop at its first failure, which is all the metrics and reports use."""
    agreement_timeout: float = AGREEMENT_SECONDS
    """CPU seconds per generated test in dual agreement (``codet``, ``verified``,
    ``sampling(select=dual-agreement)``, ``check --select``): CodeT's 0.1 s."""

    def visible_limits(self) -> Limits:
        """Limits for running programs on tests whose every outcome is wanted (visible tests, self-tests)."""
        limits = Limits(cpu_seconds=self.timeout)
        return limits.following_reference() if self.follow_reference else limits

    def hidden_limits(self) -> Limits:
        """Limits for scoring: a program's tests stop at its first failure unless ``test_details``."""
        return replace(self.visible_limits(), stop_at_failure=not self.test_details)

    def agreement_limits(self) -> Limits:
        """Limits for generated tests in dual agreement: ``agreement_timeout`` each, every verdict wanted."""
        return agreement_limits(self.agreement_timeout, self.visible_limits())

    def packages(self, benchmarks: Sequence[str]) -> tuple[str, ...]:
        """What candidates may import: what is allowed, plus what each benchmark's grader offers and is
        installed here."""
        offered = {package for name in benchmarks for package in benchmark(name).offered_packages()[0]}
        return tuple(sorted({*self.allow_packages, *offered}))

    def sandbox_settings(
        self, benchmarks: Sequence[str], limits: Limits, *, workers: int | None = None
    ) -> SandboxSettings:
        """The sandbox to open: this isolation, ``limits`` as the pool's own, the packages
        (:meth:`packages`), and ``workers`` (else this choice's; else the settings' or one per core)."""
        chosen = workers or self.workers
        return SandboxSettings(
            isolation=self.isolation, limits=limits, workers=chosen, packages=self.packages(benchmarks)
        )


@dataclass(frozen=True, kw_only=True)
class SandboxRequest:
    """What one layer (a command's flags, a spec file's ``[sandbox]`` table, a library call) says about the
    sandbox; :data:`~refinelab.runtime.NOT_GIVEN` leaves a field to the layers below."""

    isolation: IsolationMode | NotGiven = NOT_GIVEN
    """Sandbox mode."""
    timeout: float | NotGiven = NOT_GIVEN
    """CPU seconds for every test (replaces the benchmarks' rules, evalplus's included)."""
    workers: int | NotGiven = NOT_GIVEN
    """Sandbox workers."""
    allow_packages: tuple[str, ...] | NotGiven = NOT_GIVEN
    """Packages candidates may import."""
    test_details: bool | NotGiven = NOT_GIVEN
    """Run every hidden test of every program."""
    agreement_timeout: float | NotGiven = NOT_GIVEN
    """CPU seconds per generated test in dual agreement."""


def choose_sandbox(benchmarks: Sequence[str], *layers: SandboxRequest) -> SandboxChoice:
    """The sandbox for programs of ``benchmarks`` (registered names; none for ``solve``): each field from
    the first of ``layers`` that gives it, else the benchmarks' graders' (see the module docstring), else
    the default."""
    given = {}
    for field in fields(SandboxRequest):
        value = next((v for layer in layers if not isinstance(v := getattr(layer, field.name), NotGiven)), NOT_GIVEN)
        if not isinstance(value, NotGiven):
            given[field.name] = value
    for name in ("timeout", "agreement_timeout"):
        if name in given and not is_seconds(given[name]):
            raise UserError(f"{name} must be a positive number of seconds, not {given[name]:g}")
    graders = [benchmark(name) for name in benchmarks]
    if "timeout" not in given:
        given["timeout"] = max((grader.cpu_seconds for grader in graders), default=DEFAULT_TIMEOUT)
        given["follow_reference"] = any(grader.follows_reference for grader in graders)
    return SandboxChoice(**given)
