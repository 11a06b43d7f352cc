"""The store: one SQLite file holding runs, problems, configurations, trajectories, attempts, critic
outputs, per-test outcomes, usage, timings and infrastructure failures.

Crash safety: a trajectory and everything under it is written in one transaction after it is fully
scored, so after ``kill -9`` a trajectory is either wholly there or not at all; WAL journaling keeps
the file consistent. The schema grows by named, append-only migrations (never edit a released one).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from refinelab.errors import UserError
from refinelab.experiment._details import (
    ProblemInfo,
    StoredConfiguration,
    StoredProblem,
    TrajectoryDetail,
    fingerprint,
    problem_details,
    trajectory_details,
)
from refinelab.experiment._generated import Totals, generation_totals, read_selection, save_rows, with_selection
from refinelab.experiment._migrations import MIGRATIONS
from refinelab.experiment._process import ProcessId
from refinelab.experiment._spec import Configuration, ExperimentSpec
from refinelab.problems import Problem
from refinelab.records import ScoredAttempt, ScoredTrajectory, Spend, Usage
from refinelab.sandbox import RunResult
from refinelab.strategies import Attempt, Trajectory

SCHEMA_VERSION = len(MIGRATIONS)

Unit = tuple[str, str, int]
"""(configuration key, ``benchmark/problem_id``, repeat)."""

RunStatus = Literal["running", "complete", "incomplete", "interrupted", "failed"]
"""``running``; ``complete``; ``incomplete`` (infrastructure failures left to retry); ``interrupted``
(Ctrl-C, SIGTERM, or its process is gone: killed, crashed); ``failed`` (stopped by an error)."""


@dataclass(frozen=True)
class RunInfo:
    """A stored run's header."""

    id: str
    """Run id."""
    name: str
    """The spec's name."""
    created: float
    """Unix time the run started."""
    spec: ExperimentSpec
    """The run's spec, read back from the store."""
    versions: dict[str, str]
    """refinelab and Python versions."""
    isolation: str
    """Sandbox isolation level."""
    limits: dict[str, object]
    """Sandbox limits."""
    status: RunStatus
    """Where the run stands (see :data:`RunStatus`); a ``running`` run whose process is gone reads as
    ``interrupted``."""
    finished: float | None = None
    """Unix time the last invocation ended (``None`` while running, or when it was killed)."""
    note: str | None = None
    """Why it stopped, when it did not complete (the error, the signal, the process gone)."""
    process: ProcessId | None = None
    """The process that ran it last (``None`` for runs stored before refinelab recorded it)."""


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

    def open_run(self, run_id: str, spec: dict[str, object], header: Mapping[str, object]) -> bool:
        """Record a run (``header``: versions, isolation, limits) as running in this process; False when it
        already exists (a resume)."""
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
            row = (run_id, str(spec.get("name", "")), time.time(), json.dumps(spec), json.dumps(header["versions"]))
            self._db.execute(
                "INSERT INTO runs (id, name, created, spec, versions, isolation, limits, status, host, pid, "
                "pid_started) VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                (*row, str(header["isolation"]), json.dumps(header["limits"]), *owner),
            )
        return True

    def add_configurations(self, run_id: str, configurations: Sequence[Configuration]) -> None:
        """Record the run's configurations (idempotent)."""
        rows = [
            (run_id, c.key, c.strategy.name, c.strategy.arguments, c.actor, c.critic, i)
            for i, c in enumerate(configurations)
        ]
        with self._transaction():
            self._db.executemany("INSERT OR IGNORE INTO configs VALUES (?, ?, ?, ?, ?, ?, ?)", rows)

    def add_problems(self, run_id: str, problems: Sequence[tuple[str, Problem]]) -> None:
        """Record the run's problems as ``(benchmark/id, problem)`` (idempotent)."""
        rows = [
            (run_id, key, p.kind, len(p.visible_tests), len(p.hidden_tests), _json(p.metadata), p.prompt)
            for key, p in problems
        ]
        with self._transaction():
            self._db.executemany(_UPSERT_PROBLEM, rows)

    def save(self, run_id: str, unit: Unit, trajectory: Trajectory, hidden: Sequence[RunResult | None]) -> None:
        """Store one scored trajectory, all of it or nothing."""
        key = (run_id, *unit)
        with self._transaction():
            self._db.execute(
                "INSERT INTO trajectories VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    *key,
                    trajectory.stop_reason,
                    trajectory.final,
                    trajectory.budget_note,
                    _json(trajectory.params),
                    time.time(),
                ),
            )
            for attempt, result in zip(trajectory.attempts, hidden):
                self._db.execute(_INSERT_ATTEMPT, _attempt_row(key, attempt, result))
                if attempt.critic is not None:
                    self._db.execute(_INSERT_CRITIC, _critic_row(key, attempt))
            save_rows(self._db, key, trajectory)

    def record_failure(self, run_id: str, unit: Unit, kind: str, message: str) -> None:
        """Record an infrastructure failure of one unit."""
        with self._transaction():
            self._db.execute(
                "INSERT INTO infra_failures (run_id, config, problem, repeat, kind, message, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run_id, *unit, kind, message, time.time()),
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
        return {(c, p, int(r)) for c, p, r in rows}

    def runs(self) -> list[RunInfo]:
        """Every run, oldest first."""
        return [_run_info(row) for row in self._rows(f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY created", ())]  # noqa: S608

    def listing(self) -> list[RunListing]:
        """Every run with its configuration count and units stored / in all, oldest first."""
        counts = dict(self._db.execute("SELECT run_id, COUNT(*) FROM trajectories GROUP BY run_id").fetchall())
        configs = dict(self._db.execute("SELECT run_id, COUNT(*) FROM configs GROUP BY run_id").fetchall())
        problems = dict(self._db.execute("SELECT run_id, COUNT(*) FROM problems GROUP BY run_id").fetchall())
        found = []
        for info in self.runs():
            total = configs.get(info.id, 0) * problems.get(info.id, 0) * info.spec.repeats
            found.append(RunListing(info, configs.get(info.id, 0), counts.get(info.id, 0), total))
        return found

    def run(self, run_id: str | None = None) -> RunInfo:
        """One run by id or unique prefix; by default the newest run with stored results (the newest run
        when none has any). A user error naming the known runs if there is no such run."""
        runs = self.runs()
        if not runs:
            raise UserError(f"{self.path}: no runs stored yet (run `refinelab run` first)")
        if run_id is None:
            with_results = {row[0] for row in self._db.execute("SELECT DISTINCT run_id FROM trajectories")}
            return next((r for r in reversed(runs) if r.id in with_results), runs[-1])
        matches = [r for r in runs if r.id == run_id] or [r for r in runs if r.id.startswith(run_id)]
        if len(matches) != 1:
            known = ", ".join(r.id for r in runs[-5:])
            raise UserError(f"{self.path}: no single run {run_id!r} (latest: {known})")
        return matches[0]

    def trajectories(self, run_id: str) -> list[ScoredTrajectory]:
        """Every stored trajectory of a run, scored, in configuration then problem order."""
        attempts: dict[Unit, list[ScoredAttempt]] = {}
        for row in self._rows(_ATTEMPTS_QUERY, (run_id,)):
            attempts.setdefault((row["config"], row["problem"], int(row["repeat"])), []).append(_scored_attempt(row))
        tests = generation_totals(self._db, run_id)
        return [_scored_trajectory(row, attempts, tests) for row in self._rows(_TRAJECTORIES_QUERY, (run_id,))]

    def _rows(self, query: str, parameters: Sequence[object]) -> list[sqlite3.Row]:
        """The rows of ``query``, read by column name."""
        cursor = self._db.cursor()
        cursor.row_factory = sqlite3.Row
        return cursor.execute(query, parameters).fetchall()

    def configurations(self, run_id: str) -> list[StoredConfiguration]:
        """The configurations of a run, in spec order."""
        query = "SELECT config, strategy, params, actor, critic FROM configs WHERE run_id = ? ORDER BY position"
        return [
            StoredConfiguration(
                key=row["config"],
                strategy=row["strategy"],
                params=row["params"],
                actor=row["actor"],
                critic=row["critic"],
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
        return [Failure((c, p, int(r)), k, m, (c, p, int(r)) in done) for c, p, r, k, m in rows]

    def export_rows(self, run_id: str) -> Iterator[dict[str, object]]:
        """One dict per attempt (the ``refinelab export`` line), in stored order."""
        selection = read_selection(self._db, run_id)
        cursor = self._db.execute(_EXPORT_QUERY, (run_id,))
        names = [d[0] for d in cursor.description]
        for row in cursor:
            line = _export_line(dict(zip(names, row)))
            yield with_selection(
                line, selection.get((str(line["config"]), str(line["problem_id"]), int(str(line["repeat"]))))
            )


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` on any exception."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *_: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


def _json(value: object) -> str:
    return json.dumps(value, default=str)


def _attempt_row(key: tuple[str, str, str, int], attempt: Attempt, hidden: RunResult | None) -> tuple[object, ...]:
    usage, visible = attempt.usage, attempt.visible
    return (
        *key, attempt.index, attempt.origin, attempt.code, attempt.response, attempt.feedback, attempt.parse_error,
        attempt.confidence, usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens, int(usage.estimated),
        attempt.cost_usd, attempt.latency_seconds, int(attempt.cached),
        None if visible is None else int(visible.passed),
        None if visible is None else visible.pass_count,
        None if visible is None else _json([o.to_json() for o in visible.outcomes]),
        int(hidden is not None and hidden.passed),
        0 if hidden is None else hidden.pass_count,
        0 if hidden is None else len(hidden.outcomes),
        None if hidden is None else _json([o.to_json() for o in hidden.outcomes]),
        None if hidden is None else hidden.isolation,
    )  # fmt: skip


def _critic_row(key: tuple[str, str, str, int], attempt: Attempt) -> tuple[object, ...]:
    critic = attempt.critic
    assert critic is not None
    usage = critic.usage
    return (
        *key, attempt.index, critic.raw, critic.verdict, critic.critique, critic.parse_error, critic.confidence,
        usage.prompt_tokens, usage.completion_tokens, critic.cost_usd, critic.latency_seconds, int(critic.cached),
    )  # fmt: skip


_UPSERT_PROBLEM = """
INSERT INTO problems (run_id, problem, kind, visible_tests, hidden_tests, metadata, prompt)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (run_id, problem) DO UPDATE
SET metadata = COALESCE(problems.metadata, excluded.metadata), prompt = COALESCE(problems.prompt, excluded.prompt)
"""
_INSERT_ATTEMPT = "INSERT INTO attempts VALUES (" + ", ".join(["?"] * 26) + ")"  # noqa: S608 - placeholders only
_INSERT_CRITIC = "INSERT INTO critic_outputs VALUES (" + ", ".join(["?"] * 15) + ")"  # noqa: S608 - placeholders only
_TRAJECTORIES_QUERY = """
SELECT t.config, c.strategy, c.params, c.actor, c.critic, t.problem, t.repeat, t.final, t.stop_reason
FROM trajectories t JOIN configs c ON c.run_id = t.run_id AND c.config = t.config
WHERE t.run_id = ? ORDER BY c.position, t.problem, t.repeat
"""
_ATTEMPTS_QUERY = """
SELECT a.config, a.problem, a.repeat, a.idx, a.origin, a.hidden_passed, a.visible_passed,
       COALESCE(a.visible_pass_count, 0) AS visible_pass_count, k.idx AS critic_idx, k.verdict,
       a.prompt_tokens, a.completion_tokens, a.cost_usd, a.latency_s, a.confidence,
       k.prompt_tokens AS critic_prompt_tokens, k.completion_tokens AS critic_completion_tokens,
       k.cost_usd AS critic_cost_usd, k.latency_s AS critic_latency_s, k.confidence AS critic_confidence
FROM attempts a LEFT JOIN critic_outputs k
  ON k.run_id = a.run_id AND k.config = a.config AND k.problem = a.problem AND k.repeat = a.repeat AND k.idx = a.idx
WHERE a.run_id = ? ORDER BY a.config, a.problem, a.repeat, a.idx
"""
_EXPORT_QUERY = """
SELECT t.run_id, t.config, t.problem AS problem_id, c.strategy, c.params, c.actor, c.critic, t.repeat,
       a.idx AS iteration, a.origin, a.code, k.verdict AS critic_verdict, k.critique AS critic_critique,
       a.visible_passed, a.hidden_passed,
       a.hidden_pass_count, a.hidden_total, a.prompt_tokens, a.completion_tokens, a.cost_usd, a.latency_s,
       k.prompt_tokens AS critic_prompt_tokens, k.completion_tokens AS critic_completion_tokens,
       k.cost_usd AS critic_cost_usd, k.latency_s AS critic_latency_s, a.confidence,
       k.confidence AS critic_confidence, a.feedback, t.final = a.idx AS is_final, t.stop_reason,
       a.response AS raw_reply, a.parse_error, a.cached, k.raw AS critic_raw_reply,
       k.parse_error AS critic_parse_error, k.cached AS critic_cached, p.metadata AS difficulty,
       a.visible_outcomes, a.hidden_outcomes
FROM trajectories t
JOIN configs c ON c.run_id = t.run_id AND c.config = t.config
LEFT JOIN problems p ON p.run_id = t.run_id AND p.problem = t.problem
JOIN attempts a ON a.run_id = t.run_id AND a.config = t.config AND a.problem = t.problem AND a.repeat = t.repeat
LEFT JOIN critic_outputs k
  ON k.run_id = a.run_id AND k.config = a.config AND k.problem = a.problem AND k.repeat = a.repeat AND k.idx = a.idx
WHERE t.run_id = ? ORDER BY c.position, t.problem, t.repeat, a.idx
"""


def _scored_attempt(row: sqlite3.Row) -> ScoredAttempt:
    actor = Spend(Usage(int(row["prompt_tokens"]), int(row["completion_tokens"])), row["cost_usd"])
    critic = row["critic_idx"] is not None
    spend = actor + _critic_spend(row) if critic else actor
    return ScoredAttempt(
        int(row["idx"]),
        row["origin"],
        bool(row["hidden_passed"]),
        visible_passed=None if row["visible_passed"] is None else bool(row["visible_passed"]),
        visible_pass_count=int(row["visible_pass_count"]),
        critic_verdict=row["verdict"],
        spend=spend,
        actor_prompt_tokens=int(row["prompt_tokens"]),
        latency_seconds=float(row["latency_s"]) + (float(row["critic_latency_s"]) if critic else 0.0),
        confidence=row["confidence"],
        critic_confidence=row["critic_confidence"],
    )


def _critic_spend(row: sqlite3.Row) -> Spend:
    usage = Usage(int(row["critic_prompt_tokens"]), int(row["critic_completion_tokens"]))
    return Spend(usage, row["critic_cost_usd"])


def _scored_trajectory(
    row: sqlite3.Row, attempts: Mapping[Unit, list[ScoredAttempt]], tests: Mapping[Unit, Totals]
) -> ScoredTrajectory:
    unit = (row["config"], row["problem"], int(row["repeat"]))
    test_tokens, test_cost, generated, correct = tests.get(unit, (0, 0.0, 0, None))
    return ScoredTrajectory(
        config=row["config"],
        strategy=row["strategy"],
        params=row["params"],
        actor=row["actor"],
        critic=row["critic"],
        problem=row["problem"],
        repeat=int(row["repeat"]),
        attempts=tuple(attempts.get(unit, ())),
        final=row["final"],
        stop_reason=row["stop_reason"],
        test_tokens=test_tokens,
        test_cost_usd=test_cost,
        generated_tests=generated,
        generated_correct=correct,
    )


def _export_line(row: dict[str, object]) -> dict[str, object]:
    for flag in ("visible_passed", "hidden_passed", "is_final", "cached", "critic_cached"):
        if row[flag] is not None:
            row[flag] = bool(row[flag])
    for outcomes in ("visible_outcomes", "hidden_outcomes"):
        row[outcomes] = None if row[outcomes] is None else json.loads(str(row[outcomes]))
    metadata = json.loads(str(row["difficulty"])) if row["difficulty"] else {}
    row["difficulty"] = metadata.get("difficulty") or None  # None: the source has none, or the store predates it
    return row


_RUN_COLUMNS = "id, name, created, spec, versions, isolation, limits, status, finished, note, host, pid, pid_started"


def _run_info(row: sqlite3.Row) -> RunInfo:
    host, pid, status, note = row["host"], row["pid"], row["status"], row["note"]
    process = None if host is None or pid is None else ProcessId(str(host), int(pid), row["pid_started"])
    if status == "running" and process is not None and process.gone():
        status, note = "interrupted", f"its process ({process.pid} on {process.host}) ended without finishing it"
    return RunInfo(
        id=str(row["id"]),
        name=str(row["name"]),
        created=float(row["created"]),
        spec=ExperimentSpec.from_json(json.loads(row["spec"])),
        versions=json.loads(row["versions"]),
        isolation=str(row["isolation"]),
        limits=json.loads(row["limits"]),
        status=status,
        finished=row["finished"],
        note=note,
        process=process,
    )
