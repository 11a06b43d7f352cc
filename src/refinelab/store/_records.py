"""The store's run-level records: what identifies a unit of work, what a run records about itself when it
starts (its header), and what reading a run gives back.

Every record is frozen and named; nothing crosses the store's boundary as a tuple read by position.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Literal, cast

from refinelab._version import __version__
from refinelab.models import Role, RoleEndpoint
from refinelab.problems import Problem
from refinelab.records import configuration_label
from refinelab.sandbox import Limits, Sandbox
from refinelab.store._process import ProcessId

SOLVE_BENCHMARK = "solve"
"""The benchmark name ``refinelab solve`` records its one problem under: a run of it is a solve."""
RunKind = Literal["experiment", "solve"]
"""An experiment (``refinelab run``) or a solve (``refinelab solve``, one problem): told by the benchmark
the run names, so stores written before refinelab said so classify the same."""

RunStatus = Literal["running", "complete", "incomplete", "interrupted", "failed"]
"""``running``; ``complete``; ``incomplete`` (infrastructure failures left to retry); ``interrupted``
(Ctrl-C, SIGTERM, or its process is gone: killed, crashed); ``failed`` (stopped by an error)."""


@dataclass(frozen=True, order=True)
class Unit:
    """One strategy run on one problem: the grain the runner schedules, stores and resumes."""

    config: str
    """Configuration key."""
    problem: str
    """``benchmark/problem_id``."""
    repeat: int
    """Repetition number (0 for the first)."""


@dataclass(frozen=True)
class RunProblem:
    """A problem of a run, under the key the run stores it by."""

    key: str
    """``benchmark/problem_id``."""
    problem: Problem
    """The problem."""


@dataclass(frozen=True, kw_only=True)
class EndpointUse:
    """Where one model role of a run sent its requests, from when on."""

    endpoint: RoleEndpoint
    """The role, its model, the URL(s) and the setting that chose them."""
    since: float
    """Unix time the run took this endpoint for the role (its start, or the resume that moved it)."""
    fresh: bool = False
    """The role takes cached replies only from the endpoints the run recorded for it (a run started with
    ``--fresh`` because another server had answered the role before)."""

    def to_json(self) -> dict[str, object]:
        """As stored in the run's ``endpoints`` column."""
        return {**self.endpoint.to_json(), "since": self.since, "fresh": self.fresh}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> EndpointUse:
        """As :meth:`to_json` stored it."""
        urls, since = data.get("urls"), data.get("since")
        endpoint = RoleEndpoint(
            cast(Role, str(data.get("role"))),
            str(data.get("model")),
            tuple(str(url) for url in urls) if isinstance(urls, list) else (),
            str(data.get("chosen_by")),
        )
        when = float(since) if isinstance(since, (int, float)) else 0.0
        return cls(endpoint=endpoint, since=when, fresh=bool(data.get("fresh")))


@dataclass(frozen=True, kw_only=True)
class RunHeader:
    """What a run records about where it ran, beside its spec, when it starts.

    Adding a field: give it a default (older runs lack it), a column in a new migration, and a line each
    in ``header_columns`` and ``read_header`` (``store/_rows.py``). See docs/design/runtime.md.
    """

    versions: Mapping[str, str]
    """refinelab and Python versions (``{"refinelab": ..., "python": ...}``)."""
    isolation: str
    """The sandbox's isolation level."""
    limits: Mapping[str, object]
    """The sandbox's limits per test, as stored (a :class:`~refinelab.sandbox.Limits` as a table)."""
    endpoints: tuple[EndpointUse, ...] | None = None
    """Where each model role sent its requests, in the order the run took them (a role a resume moved has
    two entries); ``None`` for runs stored before refinelab recorded it."""

    @classmethod
    def of(
        cls, sandbox: Sandbox, *, limits: Limits | None = None, endpoints: tuple[EndpointUse, ...] = ()
    ) -> RunHeader:
        """The header of a run starting now, in this process, on ``sandbox``; ``limits``: what its hidden
        tests are scored under, when not the sandbox's own (``run`` stops them at a first failure);
        ``endpoints``: where its model roles are served."""
        versions = {"refinelab": __version__, "python": platform.python_version()}
        return cls(
            versions=versions, isolation=sandbox.isolation, limits=asdict(limits or sandbox.limits), endpoints=endpoints
        )

    def endpoints_now(self) -> dict[tuple[str, str], EndpointUse]:
        """The latest endpoint of each (role, model), from :attr:`endpoints` (empty when not recorded)."""
        return {(use.endpoint.role, use.endpoint.model): use for use in self.endpoints or ()}


@dataclass(frozen=True, kw_only=True)
class RunInfo:
    """A stored run: its id, its spec as stored, its header and where it stands."""

    id: str
    """Run id."""
    name: str
    """The spec's name."""
    created: float
    """Unix time the run started."""
    spec: Mapping[str, object]
    """The run's spec as stored (``ExperimentSpec.from_json`` reads it back)."""
    header: RunHeader
    """Versions, isolation and limits, recorded when the run started."""
    status: RunStatus
    """Where the run stands (see :data:`RunStatus`); a ``running`` run whose process is gone reads as
    ``interrupted``."""
    finished: float | None = None
    """Unix time the last invocation ended (``None`` while running, or when it was killed)."""
    note: str | None = None
    """Why it stopped, when it did not complete (the error, the signal, the process gone)."""
    process: ProcessId | None = None
    """The process that ran it last (``None`` for runs stored before refinelab recorded it)."""

    @property
    def kind(self) -> RunKind:
        """``solve`` for a ``refinelab solve``, else ``experiment``; a solve is never a default run."""
        benchmarks = self.spec.get("benchmarks")
        tables = benchmarks if isinstance(benchmarks, list) else []
        names = {table.get("name") for table in tables if isinstance(table, dict)}
        return "solve" if names == {SOLVE_BENCHMARK} else "experiment"

    @property
    def repeats(self) -> int:
        """Repetitions of each problem x configuration, as the stored spec says (1 when it does not)."""
        repeats = self.spec.get("repeats", 1)
        return repeats if isinstance(repeats, int) else 1


@dataclass(frozen=True)
class RunListing:
    """A run and how far it got (``refinelab report --list``)."""

    info: RunInfo
    """The run."""
    configurations: int
    """Configurations in its spec."""
    done: int
    """Units (configuration x problem x repeat) stored."""
    total: int
    """Units in the run (0 while its problems are not recorded yet)."""


@dataclass(frozen=True)
class Failure:
    """An infrastructure failure (endpoint, sandbox): recorded, kept out of the metrics, retried on resume."""

    unit: Unit
    """Which trajectory."""
    kind: str
    """Exception type."""
    message: str
    """What happened."""
    resolved: bool
    """The unit was completed later (on a resume)."""


@dataclass(frozen=True, kw_only=True)
class StoredConfiguration:
    """A configuration as stored with its run."""

    key: str
    """Configuration key."""
    strategy: str
    """Strategy name."""
    params: str
    """Its arguments as written (``max_iters=3, ...``)."""
    actor: str
    """Actor model."""
    critic: str | None
    """Critic model, for critic strategies."""
    effort: str | None = None
    """The actor's reasoning effort (``None``: none set, and every run from before efforts existed)."""
    critic_effort: str | None = None
    """The critic's reasoning effort."""

    @property
    def written(self) -> str:
        """The strategy as written: ``name(args)``, or the name alone without arguments."""
        return f"{self.strategy}({self.params})" if self.params else self.strategy

    @property
    def label(self) -> str:
        """How reports name it: ``strategy(args) · actor / critic``, then its effort when it has one."""
        return configuration_label(self.written, self.actor, self.critic, self.effort, self.critic_effort)


@dataclass(frozen=True, kw_only=True)
class StoredProblem:
    """A problem as stored with its run."""

    key: str
    """``benchmark/problem_id``."""
    kind: str
    """``function`` or ``stdio``."""
    visible_tests: int
    """Tests the strategies could see."""
    hidden_tests: int
    """Tests every attempt was scored on."""
