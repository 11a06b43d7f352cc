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
from dataclasses import dataclass, replace

from refinelab.models import NotSent
from refinelab.records import Origin, StopReason, Suggestion
from refinelab.sandbox import TestOutcome
from refinelab.store._generated import GenerationDetail, read_decisions, read_generations
from refinelab.store._records import Unit
from refinelab.strategies import Decision


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
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
    reasoning_tokens: int = 0
    """Thinking tokens of the critic call (part of ``completion_tokens``)."""
    reasoning: str | None = None
    """The critic's thinking, where its server returned it."""
    not_sent: tuple[NotSent, ...] = ()
    """Settings the critic call asked for that were not sent to the model."""


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
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
    reasoning_tokens: int = 0
    """Thinking tokens of the actor call (part of ``completion_tokens``)."""
    reasoning: str | None = None
    """The actor's thinking, where its server returned it (the code was read from the answer only)."""
    not_sent: tuple[NotSent, ...] = ()
    """Settings the actor call asked for that were not sent to the model (``temperature=0.0`` to a model that
    samples only at 1)."""


@dataclass(frozen=True, kw_only=True)
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
    generations: tuple[GenerationDetail, ...] = ()
    """The calls that wrote tests (``codet``, ``verified``), in order; empty for other strategies."""
    decisions: tuple[Decision, ...] = ()
    """Why a selecting strategy refined, kept, discarded and chose what it did, in order; empty for
    other strategies."""


def problem_details(db: sqlite3.Connection, run_id: str) -> list[ProblemInfo]:
    """Every problem of a run, in key order."""
    query = (
        "SELECT problem, kind, visible_tests, hidden_tests, metadata, prompt FROM problems WHERE run_id = ? "
        "ORDER BY problem"
    )
    return [_problem(row) for row in read_rows(db, query, (run_id,))]


def trajectory_details(db: sqlite3.Connection, run_id: str, problem: str | None = None) -> list[TrajectoryDetail]:
    """Every trajectory of a run (or of one problem) in full, in configuration, problem, repeat order."""
    args = (run_id, problem, problem)
    attempts: dict[Unit, list[AttemptDetail]] = {}
    for row in read_rows(db, _ATTEMPTS, args):
        attempts.setdefault(unit_of(row), []).append(_attempt(row))
    generations, decisions = read_generations(db, run_id, problem), read_decisions(db, run_id, problem)
    found = []
    for row in read_rows(db, _TRAJECTORIES, args):
        unit = unit_of(row)
        written, decided = tuple(generations.get(unit, ())), tuple(decisions.get(unit, ()))
        found.append(replace(_trajectory(row, attempts), generations=written, decisions=decided))
    return found


def read_rows(db: sqlite3.Connection, query: str, parameters: Sequence[object]) -> list[sqlite3.Row]:
    """The rows of ``query``, read by column name (every store read goes through here)."""
    cursor = db.cursor()
    cursor.row_factory = sqlite3.Row
    return cursor.execute(query, parameters).fetchall()


def unit_of(row: sqlite3.Row) -> Unit:
    """The unit of a row with ``config``, ``problem`` and ``repeat`` columns."""
    return Unit(str(row["config"]), str(row["problem"]), int(row["repeat"]))


def _trajectory(row: sqlite3.Row, attempts: dict[Unit, list[AttemptDetail]]) -> TrajectoryDetail:
    key = unit_of(row)
    return TrajectoryDetail(
        config=row["config"],
        problem=row["problem"],
        repeat=int(row["repeat"]),
        stop_reason=row["stop_reason"],
        final=row["final"],
        budget_note=row["budget_note"],
        recorded_params=json.loads(row["recorded_params"]),
        attempts=tuple(attempts.get(key, ())),
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
       a.reasoning_tokens, a.reasoning, a.not_sent,
       k.idx AS critic_idx, k.raw AS critic_raw, k.verdict AS critic_verdict, k.critique AS critic_critique,
       k.parse_error AS critic_parse_error, k.confidence AS critic_confidence,
       k.prompt_tokens AS critic_prompt_tokens, k.completion_tokens AS critic_completion_tokens,
       k.cost_usd AS critic_cost_usd, k.latency_s AS critic_latency_s, k.cached AS critic_cached,
       k.reasoning_tokens AS critic_reasoning_tokens, k.reasoning AS critic_reasoning, k.not_sent AS critic_not_sent
FROM attempts a LEFT JOIN critic_outputs k
  ON k.run_id = a.run_id AND k.config = a.config AND k.problem = a.problem AND k.repeat = a.repeat AND k.idx = a.idx
WHERE a.run_id = ? AND (? IS NULL OR a.problem = ?) ORDER BY a.config, a.problem, a.repeat, a.idx
"""


def _problem(row: sqlite3.Row) -> ProblemInfo:
    meta: dict[str, object] = json.loads(row["metadata"]) if row["metadata"] else {}
    difficulty = meta.get("difficulty")
    return ProblemInfo(
        key=str(row["problem"]),
        kind=str(row["kind"]),
        visible_tests=int(row["visible_tests"]),
        hidden_tests=int(row["hidden_tests"]),
        difficulty=None if difficulty in (None, "") else str(difficulty),
        prompt=row["prompt"],
        metadata=meta,
    )


def _attempt(row: sqlite3.Row) -> AttemptDetail:
    return AttemptDetail(
        index=int(row["idx"]),
        origin=row["origin"],
        code=row["code"],
        response=row["response"],
        feedback=row["feedback"],
        parse_error=row["parse_error"],
        confidence=row["confidence"],
        prompt_tokens=int(row["prompt_tokens"]),
        completion_tokens=int(row["completion_tokens"]),
        cached_tokens=int(row["cached_tokens"]),
        estimated=bool(row["estimated"]),
        cost_usd=row["cost_usd"],
        latency_seconds=float(row["latency_s"]),
        cached=bool(row["cached"]),
        visible=_visible(row),
        hidden=_test_run(row["hidden_passed"], row["hidden_pass_count"], row["hidden_total"], row["hidden_outcomes"]),
        critic=_critic(row),
        reasoning_tokens=int(row["reasoning_tokens"]),
        reasoning=row["reasoning"],
        not_sent=_not_sent(row["not_sent"]),
    )


def _visible(row: sqlite3.Row) -> TestRun | None:
    if row["visible_passed"] is None:
        return None
    outcomes = _outcomes(row["visible_outcomes"])
    count = row["visible_pass_count"]
    return _test_run(row["visible_passed"], count, _total(outcomes, count), row["visible_outcomes"])


def _test_run(passed: object, count: int | None, total: int, outcomes: str | None) -> TestRun:
    return TestRun(passed=bool(passed), pass_count=int(count or 0), total=int(total), outcomes=_outcomes(outcomes))


def _critic(row: sqlite3.Row) -> CriticDetail | None:
    if row["critic_idx"] is None:
        return None
    return CriticDetail(
        raw=row["critic_raw"],
        verdict=row["critic_verdict"],
        critique=row["critic_critique"],
        parse_error=row["critic_parse_error"],
        confidence=row["critic_confidence"],
        prompt_tokens=int(row["critic_prompt_tokens"]),
        completion_tokens=int(row["critic_completion_tokens"]),
        cost_usd=row["critic_cost_usd"],
        latency_seconds=float(row["critic_latency_s"]),
        cached=bool(row["critic_cached"]),
        reasoning_tokens=int(row["critic_reasoning_tokens"]),
        reasoning=row["critic_reasoning"],
        not_sent=_not_sent(row["critic_not_sent"]),
    )


def _not_sent(text: str | None) -> tuple[NotSent, ...]:
    """The records of a ``not_sent`` column (none for ``NULL``: everything was sent, or the row predates it)."""
    return tuple(NotSent.from_json(item) for item in json.loads(text)) if text else ()


def _outcomes(text: str | None) -> tuple[TestOutcome, ...] | None:
    if text is None:
        return None
    return tuple(TestOutcome(**item) for item in json.loads(text))


def _total(outcomes: tuple[TestOutcome, ...] | None, count: int | None) -> int:
    return len(outcomes) if outcomes is not None else int(count or 0)
