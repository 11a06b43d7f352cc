"""The store: one SQLite file holding runs, problems, configurations, trajectories, attempts, critic
outputs, per-test outcomes, usage, timings and infrastructure failures.

Crash safety: a trajectory and everything under it is written in one transaction after it is fully
scored, so after ``kill -9`` a trajectory is either wholly there or not at all; WAL journaling keeps
the file consistent. The schema grows by named, append-only migrations (never edit a released one).
Every SQL statement of refinelab is in this package: this class writes; the readers beside it
(``_rows.py``, ``_details.py``, ``_generated.py``) turn rows into the records of ``_records.py``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from refinelab._words import counted
from refinelab.errors import UserError
from refinelab.records import ScoredAttempt, ScoredTrajectory
from refinelab.sandbox import RunResult
from refinelab.store._details import (
    ProblemInfo,
    TrajectoryDetail,
    fingerprint,
    problem_details,
    read_rows,
    trajectory_details,
    unit_of,
)
from refinelab.store._generated import generation_totals, read_selection, save_rows, with_selection
from refinelab.store._migrations import MIGRATIONS
from refinelab.store._process import ProcessId
from refinelab.store._records import (
    EndpointUse,
    Failure,
    RunHeader,
    RunInfo,
    RunListing,
    RunProblem,
    RunStatus,
    StoredConfiguration,
    StoredProblem,
    Unit,
)
from refinelab.store._rows import (
    ATTEMPTS_QUERY,
    EXPORT_QUERY,
    INSERT_ATTEMPT,
    INSERT_CRITIC,
    INSERT_RUN,
    RUN_COLUMNS,
    TRAJECTORIES_QUERY,
    UPSERT_PROBLEM,
    attempt_row,
    critic_row,
    endpoints_json,
    export_line,
    header_columns,
    run_info,
    scored_attempt,
    scored_trajectory,
    stored_json,
)
from refinelab.strategies import Trajectory

SCHEMA_VERSION = len(MIGRATIONS)
"""How many migrations a store written by this refinelab has applied."""


class Store:
    """One SQLite file; see the module docstring."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied REAL NOT NULL)")
        except sqlite3.DatabaseError as exc:
            raise UserError(f"{self.path}: not a refinelab store ({exc})") from None
        self._migrate()

    def close(self) -> None:
        """Close the file."""
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def applied(self) -> list[str]:
        """Names of the migrations applied, in order."""
        return [row[0] for row in self._db.execute("SELECT name FROM migrations ORDER BY name")]

    def _migrate(self) -> None:
        known = {name for name, _ in MIGRATIONS}
        newer = sorted(set(self.applied) - known)
        if newer:
            raise UserError(f"{self.path}: written by a newer refinelab (migration {newer[0]}); upgrade refinelab")
        for name, script in MIGRATIONS:
            if name not in self.applied:
                with self._transaction():  # DDL is transactional in SQLite: a migration applies whole or not at all
                    for statement in filter(str.strip, script.split(";")):
                        self._db.execute(statement)
                    self._db.execute("INSERT INTO migrations VALUES (?, ?)", (name, time.time()))

    # --- writing ---------------------------------------------------------------------------------

    def open_run(self, run_id: str, spec: Mapping[str, object], header: RunHeader) -> bool:
        """Record a run (its spec as plain data, its header) as running in this process; False when it
        already exists (a resume: its header stays the one it started with)."""
        me = ProcessId.current()
        owner = (me.host, me.pid, me.started)
        with self._transaction():
            if self._db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
                self._db.execute(
                    "UPDATE runs SET status = 'running', finished = NULL, note = NULL, host = ?, pid = ?, "
                    "pid_started = ? WHERE id = ?",
                    (*owner, run_id),
                )
                return False
            row = (run_id, str(spec.get("name", "")), time.time(), json.dumps(spec))
            self._db.execute(INSERT_RUN, (*row, *header_columns(header).values(), *owner))
        return True

    def record_endpoints(self, run_id: str, endpoints: Sequence[EndpointUse]) -> None:
        """Replace the endpoints a run records for its model roles (a resume that moved a role appends to
        what was there: see ``RunHeader.endpoints``)."""
        with self._transaction():
            self._db.execute("UPDATE runs SET endpoints = ? WHERE id = ?", (endpoints_json(endpoints), run_id))

    def add_configurations(self, run_id: str, configurations: Sequence[StoredConfiguration]) -> None:
        """Record the run's configurations, in spec order (idempotent)."""
        rows = [
            (run_id, c.key, c.strategy, c.params, c.actor, c.critic, i, c.effort, c.critic_effort)
            for i, c in enumerate(configurations)
        ]
        columns = "run_id, config, strategy, params, actor, critic, position, effort, critic_effort"
        with self._transaction():
            self._db.executemany(f"INSERT OR IGNORE INTO configs ({columns}) VALUES ({', '.join('?' * 9)})", rows)  # noqa: S608

    def add_problems(self, run_id: str, problems: Sequence[RunProblem]) -> None:
        """Record the run's problems (idempotent)."""
        rows = [
            (run_id, p.key, p.problem.kind, len(p.problem.visible_tests), len(p.problem.hidden_tests),
             stored_json(p.problem.metadata), p.problem.prompt)
            for p in problems
        ]  # fmt: skip
        with self._transaction():
            self._db.executemany(UPSERT_PROBLEM, rows)

    def save(self, run_id: str, unit: Unit, trajectory: Trajectory, hidden: Sequence[RunResult | None]) -> None:
        """Store one scored trajectory, all of it or nothing."""
        key = (run_id, unit.config, unit.problem, unit.repeat)
        with self._transaction():
            self._db.execute(
                "INSERT INTO trajectories VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*key, trajectory.stop_reason, trajectory.final, trajectory.budget_note,
                 stored_json(trajectory.params), time.time()),
            )  # fmt: skip
            for attempt, result in zip(trajectory.attempts, hidden):
                self._db.execute(INSERT_ATTEMPT, attempt_row(run_id, unit, attempt, result))
                if attempt.critic is not None:
                    self._db.execute(INSERT_CRITIC, critic_row(run_id, unit, attempt))
            save_rows(self._db, run_id, unit, trajectory)

    def record_failure(self, run_id: str, unit: Unit, kind: str, message: str) -> None:
        """Record an infrastructure failure of one unit."""
        with self._transaction():
            self._db.execute(
                "INSERT INTO infra_failures (run_id, config, problem, repeat, kind, message, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run_id, unit.config, unit.problem, unit.repeat, kind, message, time.time()),
            )

    def finish_run(self, run_id: str, status: RunStatus, note: str | None = None) -> None:
        """Mark the end of an invocation: complete, incomplete, interrupted or failed (``note``: why)."""
        self._db.execute(
            "UPDATE runs SET status = ?, finished = ?, note = ? WHERE id = ?", (status, time.time(), note, run_id)
        )

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    # --- reading ---------------------------------------------------------------------------------

    @contextmanager
    def snapshot(self) -> Iterator[Store]:
        """Read as of one moment: every read inside the block is one read transaction, so a running
        experiment's writes meanwhile are not seen by some reads and not others. Reads only."""
        self._db.execute("BEGIN DEFERRED")  # WAL: the snapshot is taken at the first read; writers go on
        try:
            yield self
        finally:
            self._db.execute("COMMIT")

    def done(self, run_id: str) -> set[Unit]:
        """Units with a stored trajectory."""
        rows = self._db.execute("SELECT config, problem, repeat FROM trajectories WHERE run_id = ?", (run_id,))
        return {Unit(c, p, int(r)) for c, p, r in rows}

    def runs(self) -> list[RunInfo]:
        """Every run, oldest first."""
        return [run_info(row) for row in self._rows(f"SELECT {RUN_COLUMNS} FROM runs ORDER BY created", ())]  # noqa: S608

    def listing(self) -> list[RunListing]:
        """Every run with its configuration count and units stored / in all, oldest first."""
        counts = dict(self._db.execute("SELECT run_id, COUNT(*) FROM trajectories GROUP BY run_id").fetchall())
        configs = dict(self._db.execute("SELECT run_id, COUNT(*) FROM configs GROUP BY run_id").fetchall())
        problems = dict(self._db.execute("SELECT run_id, COUNT(*) FROM problems GROUP BY run_id").fetchall())
        found = []
        for info in self.runs():
            total = configs.get(info.id, 0) * problems.get(info.id, 0) * info.repeats
            found.append(RunListing(info, configs.get(info.id, 0), counts.get(info.id, 0), total))
        return found

    def run(self, run_id: str | None = None) -> RunInfo:
        """One run by id or unique prefix; by default the newest experiment with stored results (the newest
        experiment when none has any): a solve is reached by its id only. A user error naming the known
        runs if there is no such run."""
        runs = self.runs()
        if not runs:
            raise UserError(f"{self.path}: no runs stored yet (run `refinelab run` first)")
        if run_id is None:
            return self._default_run(runs)
        matches = [r for r in runs if r.id == run_id] or [r for r in runs if r.id.startswith(run_id)]
        if len(matches) != 1:
            known = ", ".join(r.id for r in runs[-5:])
            raise UserError(f"{self.path}: no single run {run_id!r} (latest: {known})")
        return matches[0]

    def _default_run(self, runs: list[RunInfo]) -> RunInfo:
        experiments = [r for r in runs if r.kind == "experiment"]
        if not experiments:
            raise UserError(
                f"{self.path}: no experiment stored yet, only {counted(len(runs), 'solve')}: give a solve's id "
                "(`refinelab report --list` lists them), or run `refinelab run` first"
            )
        with_results = {row[0] for row in self._db.execute("SELECT DISTINCT run_id FROM trajectories")}
        return next((r for r in reversed(experiments) if r.id in with_results), experiments[-1])

    def trajectories(self, run_id: str) -> list[ScoredTrajectory]:
        """Every stored trajectory of a run, scored, in configuration then problem order."""
        attempts: dict[Unit, list[ScoredAttempt]] = {}
        for row in self._rows(ATTEMPTS_QUERY, (run_id,)):
            attempts.setdefault(unit_of(row), []).append(scored_attempt(row))
        tests = generation_totals(self._db, run_id)
        return [scored_trajectory(row, attempts, tests) for row in self._rows(TRAJECTORIES_QUERY, (run_id,))]

    def _rows(self, query: str, parameters: Sequence[object]) -> list[sqlite3.Row]:
        """The rows of ``query``, read by column name."""
        return read_rows(self._db, query, parameters)

    def configurations(self, run_id: str) -> list[StoredConfiguration]:
        """The configurations of a run, in spec order."""
        query = (
            "SELECT config, strategy, params, actor, critic, effort, critic_effort FROM configs WHERE run_id = ? "
            "ORDER BY position"
        )
        return [
            StoredConfiguration(
                key=row["config"],
                strategy=row["strategy"],
                params=row["params"],
                actor=row["actor"],
                critic=row["critic"],
                effort=row["effort"],
                critic_effort=row["critic_effort"],
            )
            for row in self._rows(query, (run_id,))
        ]

    def problems(self, run_id: str) -> list[StoredProblem]:
        """The problems of a run with their test counts."""
        query = "SELECT problem, kind, visible_tests, hidden_tests FROM problems WHERE run_id = ?"
        return [
            StoredProblem(
                key=row["problem"],
                kind=row["kind"],
                visible_tests=int(row["visible_tests"]),
                hidden_tests=int(row["hidden_tests"]),
            )
            for row in self._rows(query, (run_id,))
        ]

    def problem_details(self, run_id: str) -> list[ProblemInfo]:
        """Every problem of a run with its statement and difficulty (None where the store predates them)."""
        return problem_details(self._db, run_id)

    def trajectory_details(self, run_id: str, problem: str | None = None) -> list[TrajectoryDetail]:
        """Every trajectory of a run (or of one ``benchmark/id`` problem) with everything stored about it."""
        return trajectory_details(self._db, run_id, problem)

    def fingerprint(self, run_id: str) -> tuple[object, ...]:
        """Changes whenever a trajectory or a failure of the run is stored."""
        return fingerprint(self._db, run_id)

    def failures(self, run_id: str) -> list[Failure]:
        """Every infrastructure failure of a run, with whether a resume completed the unit since."""
        done = self.done(run_id)
        rows = self._db.execute(
            "SELECT config, problem, repeat, kind, message FROM infra_failures WHERE run_id = ? ORDER BY id", (run_id,)
        )
        return [Failure(Unit(c, p, int(r)), k, m, Unit(c, p, int(r)) in done) for c, p, r, k, m in rows]

    def export_rows(self, run_id: str) -> Iterator[dict[str, object]]:
        """One dict per attempt (the ``refinelab export`` line), in stored order."""
        selection = read_selection(self._db, run_id)
        cursor = self._db.execute(EXPORT_QUERY, (run_id,))
        names = [d[0] for d in cursor.description]
        first_origins: dict[tuple[object, ...], str] = {}  # rows come in attempt order: the first is idx 0
        for row in cursor:
            raw = dict(zip(names, row))
            first = first_origins.setdefault((raw["config"], raw["problem_id"], raw["repeat"]), str(raw["origin"]))
            line = export_line(raw, first)
            yield with_selection(
                line, selection.get(Unit(str(line["config"]), str(line["problem_id"]), int(str(line["repeat"]))))
            )


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` on any exception."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *_: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")
