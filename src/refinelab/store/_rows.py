"""How the store's rows map to records and back: the rows written for attempts and critic outputs, the
queries the store reads with, and the records built from their rows by column name.

Written rows follow the tables' column order (migrations only append columns); read rows are taken by
column name, so a query may add or reorder columns freely.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence

from refinelab.models import NotSent
from refinelab.records import ScoredAttempt, ScoredTrajectory, Spend, Usage, configuration_label
from refinelab.sandbox import RunResult
from refinelab.store._details import unit_of
from refinelab.store._generated import Totals
from refinelab.store._process import ProcessId
from refinelab.store._records import EndpointUse, RunHeader, RunInfo, Unit
from refinelab.strategies import Attempt


def stored_json(value: object) -> str:
    """A JSON column's text (values JSON cannot hold stored as their ``str``)."""
    return json.dumps(value, default=str)


def not_sent_json(items: Sequence[NotSent]) -> str | None:
    """A ``not_sent`` column's text (``None`` when everything asked for was sent)."""
    return json.dumps([item.to_json() for item in items]) if items else None


def not_sent_read(text: str | None) -> tuple[NotSent, ...]:
    """The records of a ``not_sent`` column (none for ``NULL``, as every row from before it was written)."""
    return tuple(NotSent.from_json(item) for item in json.loads(text)) if text else ()


def attempt_row(run_id: str, unit: Unit, attempt: Attempt, hidden: RunResult | None) -> tuple[object, ...]:
    """The ``attempts`` row of one attempt and its hidden-test result, in :data:`ATTEMPT_COLUMNS` order."""
    usage, visible = attempt.usage, attempt.visible
    return (
        run_id, unit.config, unit.problem, unit.repeat,
        attempt.index, attempt.origin, attempt.code, attempt.response, attempt.feedback, attempt.parse_error,
        attempt.confidence, usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens, int(usage.estimated),
        attempt.cost_usd, attempt.latency_seconds, int(attempt.cached),
        None if visible is None else int(visible.passed),
        None if visible is None else visible.pass_count,
        None if visible is None else stored_json([o.to_json() for o in visible.outcomes]),
        int(hidden is not None and hidden.passed),
        0 if hidden is None else hidden.pass_count,
        0 if hidden is None else len(hidden.outcomes),
        None if hidden is None else stored_json([o.to_json() for o in hidden.outcomes]),
        None if hidden is None else hidden.isolation,
        None if hidden is None else hidden.node,
        usage.reasoning_tokens, attempt.reasoning, not_sent_json(attempt.not_sent),
    )  # fmt: skip


def critic_row(run_id: str, unit: Unit, attempt: Attempt) -> tuple[object, ...]:
    """The ``critic_outputs`` row of an attempt the critic judged, in :data:`CRITIC_COLUMNS` order."""
    critic = attempt.critic
    assert critic is not None
    usage = critic.usage
    return (
        run_id, unit.config, unit.problem, unit.repeat,
        attempt.index, critic.raw, critic.verdict, critic.critique, critic.parse_error, critic.confidence,
        usage.prompt_tokens, usage.completion_tokens, critic.cost_usd, critic.latency_seconds, int(critic.cached),
        usage.reasoning_tokens, critic.reasoning, not_sent_json(critic.not_sent),
    )  # fmt: skip


HEADER_COLUMNS = ("versions", "isolation", "limits", "endpoints")
"""The ``runs`` columns holding the :class:`RunHeader`, in the order :func:`header_columns` gives them."""
RUN_COLUMNS = "id, name, created, spec, status, finished, note, host, pid, pid_started, " + ", ".join(HEADER_COLUMNS)
"""What :func:`run_info` reads."""
INSERT_RUN = (
    f"INSERT INTO runs (id, name, created, spec, {', '.join(HEADER_COLUMNS)}, status, host, pid, pid_started) "  # noqa: S608
    f"VALUES (?, ?, ?, ?, {', '.join('?' * len(HEADER_COLUMNS))}, 'running', ?, ?, ?)"
)
"""A new run: id, name, created, spec, the header's columns, then the process that runs it."""


def header_columns(header: RunHeader) -> dict[str, object]:
    """The header as its ``runs`` columns (:data:`HEADER_COLUMNS`), in order."""
    return {
        "versions": json.dumps(header.versions),
        "isolation": header.isolation,
        "limits": json.dumps(header.limits),
        "endpoints": endpoints_json(header.endpoints),
    }


def endpoints_json(endpoints: Sequence[EndpointUse] | None) -> str | None:
    """The ``endpoints`` column: a JSON list, or NULL where they are not known."""
    return None if endpoints is None else json.dumps([use.to_json() for use in endpoints])


def read_header(row: sqlite3.Row) -> RunHeader:
    """The header of a ``runs`` row (no endpoints for runs stored before refinelab recorded them)."""
    stored = row["endpoints"]
    endpoints = None if stored is None else tuple(EndpointUse.from_json(use) for use in json.loads(stored))
    return RunHeader(
        versions=json.loads(row["versions"]),
        isolation=str(row["isolation"]),
        limits=json.loads(row["limits"]),
        endpoints=endpoints,
    )


def run_info(row: sqlite3.Row) -> RunInfo:
    """A run from its ``runs`` row (:data:`RUN_COLUMNS`); a ``running`` run whose process is gone reads as
    ``interrupted``."""
    host, pid, status, note = row["host"], row["pid"], row["status"], row["note"]
    process = None if host is None or pid is None else ProcessId(str(host), int(pid), row["pid_started"])
    if status == "running" and process is not None and process.gone():
        status, note = "interrupted", f"its process ({process.pid} on {process.host}) ended without finishing it"
    return RunInfo(
        id=str(row["id"]),
        name=str(row["name"]),
        created=float(row["created"]),
        spec=json.loads(row["spec"]),
        header=read_header(row),
        status=status,
        finished=row["finished"],
        note=note,
        process=process,
    )


UPSERT_PROBLEM = """
INSERT INTO problems (run_id, problem, kind, visible_tests, hidden_tests, metadata, prompt)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (run_id, problem) DO UPDATE
SET metadata = COALESCE(problems.metadata, excluded.metadata), prompt = COALESCE(problems.prompt, excluded.prompt)
"""
ATTEMPT_COLUMNS = (
    "run_id, config, problem, repeat, idx, origin, code, response, feedback, parse_error, confidence, prompt_tokens, "
    "completion_tokens, cached_tokens, estimated, cost_usd, latency_s, cached, visible_passed, visible_pass_count, "
    "visible_outcomes, hidden_passed, hidden_pass_count, hidden_total, hidden_outcomes, isolation, node, "
    "reasoning_tokens, reasoning, not_sent"
)
"""The ``attempts`` columns :func:`attempt_row` fills, named (so migrations merged in any order agree)."""
CRITIC_COLUMNS = (
    "run_id, config, problem, repeat, idx, raw, verdict, critique, parse_error, confidence, prompt_tokens, "
    "completion_tokens, cost_usd, latency_s, cached, reasoning_tokens, reasoning, not_sent"
)
"""The ``critic_outputs`` columns :func:`critic_row` fills."""
INSERT_ATTEMPT = f"INSERT INTO attempts ({ATTEMPT_COLUMNS}) VALUES ({', '.join(['?'] * 30)})"  # noqa: S608 - placeholders only
INSERT_CRITIC = f"INSERT INTO critic_outputs ({CRITIC_COLUMNS}) VALUES ({', '.join(['?'] * 18)})"  # noqa: S608 - placeholders only
TRAJECTORIES_QUERY = """
SELECT t.config, c.strategy, c.params, c.actor, c.critic, t.problem, t.repeat, t.final, t.stop_reason,
       t.recorded_params, c.effort, c.critic_effort
FROM trajectories t JOIN configs c ON c.run_id = t.run_id AND c.config = t.config
WHERE t.run_id = ? ORDER BY c.position, t.problem, t.repeat
"""
ATTEMPTS_QUERY = """
SELECT a.config, a.problem, a.repeat, a.idx, a.origin, a.hidden_passed, a.visible_passed,
       COALESCE(a.visible_pass_count, 0) AS visible_pass_count, k.idx AS critic_idx, k.verdict,
       a.prompt_tokens, a.completion_tokens, a.cost_usd, a.latency_s, a.confidence,
       k.prompt_tokens AS critic_prompt_tokens, k.completion_tokens AS critic_completion_tokens,
       k.cost_usd AS critic_cost_usd, k.latency_s AS critic_latency_s, k.confidence AS critic_confidence,
       a.reasoning_tokens, k.reasoning_tokens AS critic_reasoning_tokens, a.not_sent,
       k.not_sent AS critic_not_sent
FROM attempts a LEFT JOIN critic_outputs k
  ON k.run_id = a.run_id AND k.config = a.config AND k.problem = a.problem AND k.repeat = a.repeat AND k.idx = a.idx
WHERE a.run_id = ? ORDER BY a.config, a.problem, a.repeat, a.idx
"""
EXPORT_QUERY = """
SELECT t.run_id, t.config, t.problem AS problem_id, c.strategy, c.params, c.actor, c.critic,
       c.effort AS reasoning_effort, c.critic_effort AS critic_reasoning_effort, t.repeat,
       a.idx AS iteration, a.origin, a.code, k.verdict AS critic_verdict, k.critique AS critic_critique,
       a.visible_passed, a.hidden_passed,
       a.hidden_pass_count, a.hidden_total, a.prompt_tokens, a.completion_tokens, a.cost_usd, a.latency_s,
       k.prompt_tokens AS critic_prompt_tokens, k.completion_tokens AS critic_completion_tokens,
       k.cost_usd AS critic_cost_usd, k.latency_s AS critic_latency_s, a.confidence,
       k.confidence AS critic_confidence, a.feedback, t.final = a.idx AS is_final, t.stop_reason,
       a.response AS raw_reply, a.parse_error, a.cached, k.raw AS critic_raw_reply,
       k.parse_error AS critic_parse_error, k.cached AS critic_cached, p.metadata AS difficulty,
       a.visible_outcomes, a.hidden_outcomes, a.isolation, a.node,
       a.reasoning_tokens, k.reasoning_tokens AS critic_reasoning_tokens, a.reasoning, k.reasoning AS critic_reasoning,
       a.not_sent, k.not_sent AS critic_not_sent
FROM trajectories t
JOIN configs c ON c.run_id = t.run_id AND c.config = t.config
LEFT JOIN problems p ON p.run_id = t.run_id AND p.problem = t.problem
JOIN attempts a ON a.run_id = t.run_id AND a.config = t.config AND a.problem = t.problem AND a.repeat = t.repeat
LEFT JOIN critic_outputs k
  ON k.run_id = a.run_id AND k.config = a.config AND k.problem = a.problem AND k.repeat = a.repeat AND k.idx = a.idx
WHERE t.run_id = ? ORDER BY c.position, t.problem, t.repeat, a.idx
"""


def scored_attempt(row: sqlite3.Row) -> ScoredAttempt:
    """An attempt as the metrics see it, from an :data:`ATTEMPTS_QUERY` row (actor and critic spend added)."""
    thought = int(row["reasoning_tokens"])
    usage = Usage(int(row["prompt_tokens"]), int(row["completion_tokens"]), reasoning_tokens=thought)
    actor = Spend(usage, row["cost_usd"])
    critic = row["critic_idx"] is not None
    critic_spend = _critic_spend(row) if critic else Spend()
    critic_latency = float(row["critic_latency_s"]) if critic else 0.0
    return ScoredAttempt(
        int(row["idx"]),
        row["origin"],
        bool(row["hidden_passed"]),
        visible_passed=None if row["visible_passed"] is None else bool(row["visible_passed"]),
        visible_pass_count=int(row["visible_pass_count"]),
        critic_verdict=row["verdict"],
        spend=actor + critic_spend if critic else actor,
        actor_prompt_tokens=int(row["prompt_tokens"]),
        latency_seconds=float(row["latency_s"]) + critic_latency,
        confidence=row["confidence"],
        critic_confidence=row["critic_confidence"],
        critic_spend=critic_spend,
        critic_latency_seconds=critic_latency,
        not_sent=tuple(item.described for item in not_sent_read(row["not_sent"])),
        critic_not_sent=tuple(item.described for item in not_sent_read(row["critic_not_sent"])),
    )


def _critic_spend(row: sqlite3.Row) -> Spend:
    thought = int(row["critic_reasoning_tokens"] or 0)
    usage = Usage(int(row["critic_prompt_tokens"]), int(row["critic_completion_tokens"]), reasoning_tokens=thought)
    return Spend(usage, row["critic_cost_usd"])


def scored_trajectory(
    row: sqlite3.Row, attempts: Mapping[Unit, list[ScoredAttempt]], tests: Mapping[Unit, Totals]
) -> ScoredTrajectory:
    """A trajectory from a :data:`TRAJECTORIES_QUERY` row, with its attempts and its generated tests' totals."""
    unit = unit_of(row)
    written = tests.get(unit, Totals())
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
        test_spend=written.spend,
        generated_tests=written.tests,
        generated_correct=written.correct,
        critique_last=_critique_last(row["recorded_params"]),
        effort=row["effort"],
        critic_effort=row["critic_effort"],
    )


def _critique_last(recorded: str | None) -> bool | None:
    """The ``critique_last`` argument a critic strategy recorded; ``None`` when it recorded none (another
    strategy, or a run from before the argument existed, when the attempt at the cap was always judged)."""
    value = json.loads(recorded).get("critique_last") if recorded else None
    return value if isinstance(value, bool) else None


def _optional(value: object) -> str | None:
    return None if value is None else str(value)


def export_line(row: dict[str, object], first_origin: str) -> dict[str, object]:
    """An :data:`EXPORT_QUERY` row as its ``refinelab export`` line: flags as booleans, outcomes and difficulty
    read, the configuration's label beside its key, and ``refinement``: the refinements before this attempt,
    or ``None`` in a trajectory that begins with samples (``first_origin``: its first attempt's origin),
    whose attempt indices (``iteration``) count samples, not refinements."""
    params, strategy = str(row["params"] or ""), str(row["strategy"])
    name = f"{strategy}({params})" if params else strategy
    critic = None if row["critic"] is None else str(row["critic"])
    efforts = _optional(row["reasoning_effort"]), _optional(row["critic_reasoning_effort"])
    row["config_label"] = configuration_label(name, str(row["actor"]), critic, *efforts)
    for column in ("not_sent", "critic_not_sent"):
        items = not_sent_read(_optional(row[column]))
        row[column] = [{"setting": i.setting, "value": i.value, "reason": i.reason} for i in items]
    row["refinement"] = None if first_origin == "sample" else row["iteration"]
    for flag in ("visible_passed", "hidden_passed", "is_final", "cached", "critic_cached"):
        if row[flag] is not None:
            row[flag] = bool(row[flag])
    for outcomes in ("visible_outcomes", "hidden_outcomes"):
        row[outcomes] = None if row[outcomes] is None else json.loads(str(row[outcomes]))
    metadata = json.loads(str(row["difficulty"])) if row["difficulty"] else {}
    row["difficulty"] = metadata.get("difficulty") or None  # None: the source has none, or the store predates it
    return row
