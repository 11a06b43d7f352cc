"""Reading a stored run in full detail, for viewers: every attempt with its code, reply, critique and
per-test outcomes, and each problem with its statement and difficulty.

Every query the viewer needs lives here and returns frozen records, so a change of the store's
layout is adapted in one place. Stores written before ``m004_problem_details`` load too: what they
did not record (difficulty, statement) comes back as ``None``, shown as unknown.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from refinelab.sandbox import TestOutcome
from refinelab.strategies import Origin, StopReason, Suggestion


@dataclass(frozen=True)
class ProblemInfo:
    """One problem of a run, as stored."""

    key: str
    """``benchmark/problem_id``."""
    kind: str
    """``function`` or ``stdio``."""
    visible_tests: int
    """Tests the strategies could see."""
    hidden_tests: int
    """Tests every attempt was scored on."""
    difficulty: str | None
    """The source's difficulty (LiveCodeBench easy / medium / hard); None when the source has none or the
    store predates it."""
    prompt: str | None
    """The statement the model was shown; None when the store predates it."""
    metadata: dict[str, object]
    """Whatever else the source records (platform, contest date...); empty when unknown."""

    @property
    def benchmark(self) -> str:
        """The benchmark's name (the key's first part)."""
        return self.key.split("/", 1)[0]


@dataclass(frozen=True)
class CriticDetail:
    """What the critic said about one attempt."""

    raw: str
    """The reply as written."""
    verdict: Suggestion | None
    """pass, refine or redraft; None when the reply could not be read."""
    critique: str
    """The critique."""
    parse_error: str | None
    """Why the reply could not be read."""
    confidence: float | None
    """Stated confidence in the verdict."""
    prompt_tokens: int
    """Prompt tokens of the critic call."""
    completion_tokens: int
    """Completion tokens of the critic call."""
    cost_usd: float | None
    """Its price; None when unknown."""
    latency_seconds: float
    """Its wall time."""
    cached: bool
    """The reply came from the response cache."""


@dataclass(frozen=True)
class TestRun:
    """An attempt's result on one test suite."""

    passed: bool
    """Every test passed."""
    pass_count: int
    """Tests passed."""
    total: int
    """Tests run (0 when the attempt had no code)."""
    outcomes: tuple[TestOutcome, ...] | None
    """Each test's outcome, in test order; None when not recorded."""


@dataclass(frozen=True)
class AttemptDetail:
    """One attempt, with everything stored about it."""

    index: int
    """0 for the first attempt."""
    origin: Origin
    """draft, refine, redraft or sample."""
    code: str | None
    """The extracted program; None when none could be extracted."""
    response: str
    """The actor's reply as written."""
    feedback: str | None
    """The feedback the actor was given to write this attempt."""
    parse_error: str | None
    """Why no code could be extracted."""
    confidence: float | None
    """The actor's stated confidence."""
    prompt_tokens: int
    """Prompt tokens of the actor call."""
    completion_tokens: int
    """Completion tokens of the actor call."""
    cached_tokens: int
    """Prompt tokens the provider served from its prompt cache."""
    estimated: bool
    """Token counts were estimated (the server reported none)."""
    cost_usd: float | None
    """Price of the actor call; None when unknown."""
    latency_seconds: float
    """Wall time of the actor call."""
    cached: bool
    """The reply came from the response cache."""
    visible: TestRun | None
    """Result on the visible tests, when the strategy ran them."""
    hidden: TestRun
    """Result on the hidden tests (the truth every metric uses)."""
    critic: CriticDetail | None
    """The critic's view, when one was consulted."""


@dataclass(frozen=True)
class TrajectoryDetail:
    """One strategy run on one problem, in full."""

    config: str
    """Configuration key."""
    problem: str
    """``benchmark/problem_id``."""
    repeat: int
    """Repetition number."""
    stop_reason: StopReason
    """Why the strategy stopped."""
    final: int | None
    """Index of the returned attempt."""
    budget_note: str | None
    """Which budget ran out, for a budget stop."""
    recorded_params: dict[str, object]
    """The arguments the strategy recorded."""
    attempts: tuple[AttemptDetail, ...]
    """Every attempt, in order."""


def problem_details(db: sqlite3.Connection, run_id: str) -> list[ProblemInfo]:
    """Every problem of a run, in key order."""
    rows = db.execute(
        "SELECT problem, kind, visible_tests, hidden_tests, metadata, prompt FROM problems WHERE run_id = ? "
        "ORDER BY problem",
        (run_id,),
    )
    return [_problem(row) for row in rows]


def trajectory_details(db: sqlite3.Connection, run_id: str, problem: str | None = None) -> list[TrajectoryDetail]:
    """Every trajectory of a run (or of one problem) in full, in configuration, problem, repeat order."""
    args = (run_id, problem, problem)
    attempts: dict[tuple[str, str, int], list[AttemptDetail]] = {}
    for row in db.execute(_ATTEMPTS, args):
        attempts.setdefault((row[0], row[1], int(row[2])), []).append(_attempt(row[3:]))
    return [_trajectory(row, attempts) for row in db.execute(_TRAJECTORIES, args)]


def _trajectory(row: Sequence[Any], attempts: dict[tuple[str, str, int], list[AttemptDetail]]) -> TrajectoryDetail:
    config, problem, repeat, stop_reason, final, budget_note, params = row
    key = (config, problem, int(repeat))
    return TrajectoryDetail(
        config, problem, int(repeat), stop_reason, final, budget_note, json.loads(params), tuple(attempts.get(key, ()))
    )


def fingerprint(db: sqlite3.Connection, run_id: str) -> tuple[object, ...]:
    """What changes whenever anything is stored for the run (a viewer recomputes only then)."""
    stored = db.execute("SELECT COUNT(*), MAX(finished) FROM trajectories WHERE run_id = ?", (run_id,)).fetchone()
    failed = db.execute("SELECT COUNT(*) FROM infra_failures WHERE run_id = ?", (run_id,)).fetchone()
    return (*stored, *failed)


_TRAJECTORIES = """
SELECT t.config, t.problem, t.repeat, t.stop_reason, t.final, t.budget_note, t.recorded_params
FROM trajectories t JOIN configs c ON c.run_id = t.run_id AND c.config = t.config
WHERE t.run_id = ? AND (? IS NULL OR t.problem = ?) ORDER BY c.position, t.problem, t.repeat
"""
_ATTEMPTS = """
SELECT a.config, a.problem, a.repeat,
       a.idx, a.origin, a.code, a.response, a.feedback, a.parse_error, a.confidence, a.prompt_tokens,
       a.completion_tokens, a.cached_tokens, a.estimated, a.cost_usd, a.latency_s, a.cached,
       a.visible_passed, a.visible_pass_count, a.visible_outcomes,
       a.hidden_passed, a.hidden_pass_count, a.hidden_total, a.hidden_outcomes,
       k.idx, k.raw, k.verdict, k.critique, k.parse_error, k.confidence, k.prompt_tokens, k.completion_tokens,
       k.cost_usd, k.latency_s, k.cached
FROM attempts a LEFT JOIN critic_outputs k
  ON k.run_id = a.run_id AND k.config = a.config AND k.problem = a.problem AND k.repeat = a.repeat AND k.idx = a.idx
WHERE a.run_id = ? AND (? IS NULL OR a.problem = ?) ORDER BY a.config, a.problem, a.repeat, a.idx
"""


def _problem(row: Sequence[Any]) -> ProblemInfo:
    key, kind, visible, hidden, metadata, prompt = row
    meta: dict[str, object] = json.loads(metadata) if metadata else {}
    difficulty = meta.get("difficulty")
    return ProblemInfo(
        str(key), str(kind), int(visible), int(hidden), None if difficulty in (None, "") else str(difficulty),
        prompt, meta,
    )  # fmt: skip


def _attempt(row: Sequence[Any]) -> AttemptDetail:
    idx, origin, code, response, feedback, parse_error, confidence, prompt, completion, cached_tokens = row[:10]
    estimated, cost, latency, cached, v_passed, v_count, v_outcomes, h_passed, h_count, h_total, h_outcomes = row[10:21]
    visible_outcomes = _outcomes(v_outcomes)
    visible = None
    if v_passed is not None:
        visible = TestRun(bool(v_passed), int(v_count or 0), _total(visible_outcomes, v_count), visible_outcomes)
    return AttemptDetail(
        int(idx), origin, code, response, feedback, parse_error, confidence, int(prompt), int(completion),
        int(cached_tokens), bool(estimated), cost, float(latency), bool(cached), visible,
        TestRun(bool(h_passed), int(h_count), int(h_total), _outcomes(h_outcomes)), _critic(row[21:]),
    )  # fmt: skip


def _critic(row: Sequence[Any]) -> CriticDetail | None:
    idx, raw, verdict, critique, parse_error, confidence, prompt, completion, cost, latency, cached = row
    if idx is None:
        return None
    return CriticDetail(
        raw, verdict, critique, parse_error, confidence, int(prompt), int(completion), cost, float(latency),
        bool(cached),
    )  # fmt: skip


def _outcomes(text: str | None) -> tuple[TestOutcome, ...] | None:
    if text is None:
        return None
    return tuple(TestOutcome(**item) for item in json.loads(text))


def _total(outcomes: tuple[TestOutcome, ...] | None, count: int | None) -> int:
    return len(outcomes) if outcomes is not None else int(count or 0)
