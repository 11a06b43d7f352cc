"""Generated tests and selection decisions in the store (``codet``, ``verified``): the rows written for
them, and the records read back."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass, field

from refinelab.problems import Test
from refinelab.records import Spend, Usage
from refinelab.store._records import Unit
from refinelab.strategies import Decision, TestGeneration, Trajectory


def test_json(test: Test) -> dict[str, object]:
    """A test as stored: its type and fields."""
    return {"type": type(test).__name__, **asdict(test)}


def save_rows(db: sqlite3.Connection, run_id: str, unit: Unit, trajectory: Trajectory) -> None:
    """Insert a trajectory's test generations and decisions (inside the caller's transaction)."""
    key = (run_id, unit.config, unit.problem, unit.repeat)
    for index, generation in enumerate(trajectory.generations):
        db.execute(
            f"INSERT INTO test_generations ({_GENERATION_COLUMNS}) VALUES ({', '.join(['?'] * 15)})",  # noqa: S608 - placeholders only
            (*key, *_generation_columns(index, generation)),
        )
    for seq, decision in enumerate(trajectory.decisions):
        db.execute(
            "INSERT INTO decisions VALUES (" + ", ".join(["?"] * 12) + ")",  # noqa: S608 - placeholders only
            (*key, *_decision_columns(seq, decision)),
        )


_GENERATION_COLUMNS = (
    "run_id, config, problem, repeat, idx, raw, tests, rejected, reference_passed, prompt_tokens, "
    "completion_tokens, cost_usd, latency_s, cached, reasoning_tokens"
)
"""The ``test_generations`` columns a row fills, named (so migrations merged in any order agree)."""


def _generation_columns(index: int, generation: TestGeneration) -> tuple[object, ...]:
    """A ``test_generations`` row after its unit's key columns."""
    usage = generation.usage
    reference = None if generation.reference_passed is None else json.dumps(list(generation.reference_passed))
    return (
        index, generation.raw, json.dumps([test_json(t) for t in generation.tests], default=str),
        json.dumps(list(generation.rejected)), reference, usage.prompt_tokens, usage.completion_tokens,
        generation.cost_usd, generation.latency_seconds, int(generation.cached), usage.reasoning_tokens,
    )  # fmt: skip


def _decision_columns(seq: int, decision: Decision) -> tuple[object, ...]:
    """A ``decisions`` row after its unit's key columns."""
    return (
        seq, decision.kind, decision.reason, decision.attempt, decision.parent, decision.known_passed,
        decision.known_total, json.dumps(list(decision.members)),
    )  # fmt: skip


@dataclass(frozen=True)
class Totals:
    """What one trajectory's test-writing calls spent and wrote."""

    spend: Spend = field(default_factory=Spend)
    """Their tokens and dollars (dollars ``None`` once any price is unknown)."""
    tests: int = 0
    """Tests generated."""
    correct: int | None = None
    """How many of them the reference solution passes (``None``: the problem has no reference)."""


def generation_totals(db: sqlite3.Connection, run_id: str) -> dict[Unit, Totals]:
    """Per unit: what the test-writing calls spent, the tests they generated, and how many of them the
    reference passes (``None`` when the problem has no reference)."""
    totals: dict[Unit, Totals] = {}
    rows = db.execute(
        "SELECT config, problem, repeat, prompt_tokens, completion_tokens, cost_usd, tests, reference_passed, "
        "reasoning_tokens FROM test_generations WHERE run_id = ? ORDER BY config, problem, repeat, idx",
        (run_id,),
    )
    for config, problem, repeat, prompt, completion, cost, tests, reference, thought in rows:
        unit = Unit(str(config), str(problem), int(repeat))
        before = totals.get(unit, Totals())
        verdicts = None if reference is None else json.loads(reference)
        correct = None if verdicts is None else (before.correct or 0) + sum(bool(v) for v in verdicts)
        usage = Usage(int(prompt), int(completion), reasoning_tokens=int(thought))
        spent = Spend(usage, None if cost is None else float(cost))
        totals[unit] = Totals(before.spend + spent, before.tests + len(json.loads(tests)), correct)
    return totals


# --- reading back ------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class GeneratedTest:
    """One generated test as stored, for people to read."""

    kind: str
    """``CallTest``, ``AssertTest`` or ``StdioTest``."""
    text: str
    """The test as a person reads it (``f(2) == 4``, the assert's code, or its input and output)."""
    reference_passed: bool | None
    """Whether the problem's reference solution passes it; ``None`` when the problem has no reference."""


@dataclass(frozen=True, kw_only=True)
class GenerationDetail:
    """One stored test-writing call: the reply, the tests read from it, and what was rejected."""

    index: int
    """0 for the first test-writing call of the trajectory."""
    raw: str
    """The reply as written."""
    tests: tuple[GeneratedTest, ...]
    """The valid, distinct tests read from it, in reply order."""
    rejected: tuple[str, ...]
    """Why each rejected piece was rejected."""
    prompt_tokens: int
    """Prompt tokens of the call."""
    completion_tokens: int
    """Completion tokens of the call."""
    cost_usd: float | None
    """Its price; ``None`` when unknown."""
    latency_seconds: float
    """Its wall time."""
    cached: bool
    """The reply came from the response cache."""


def read_generations(db: sqlite3.Connection, run_id: str, problem: str | None) -> dict[Unit, list[GenerationDetail]]:
    """The stored test-writing calls of a run (or of one ``benchmark/id`` problem), per unit, in order."""
    found: dict[Unit, list[GenerationDetail]] = {}
    query = (
        "SELECT config, problem, repeat, idx, raw, tests, rejected, reference_passed, prompt_tokens, "
        "completion_tokens, cost_usd, latency_s, cached FROM test_generations "
        "WHERE run_id = ? AND (? IS NULL OR problem = ?) ORDER BY config, problem, repeat, idx"
    )
    for row in db.execute(query, (run_id, problem, problem)):
        found.setdefault(Unit(str(row[0]), str(row[1]), int(row[2])), []).append(_generation(row[3:]))
    return found


def read_decisions(db: sqlite3.Connection, run_id: str, problem: str | None) -> dict[Unit, list[Decision]]:
    """The stored decisions of a run (or of one ``benchmark/id`` problem), per unit, in the order taken."""
    found: dict[Unit, list[Decision]] = {}
    query = (
        "SELECT config, problem, repeat, kind, reason, attempt, parent, known_passed, known_total, members "
        "FROM decisions WHERE run_id = ? AND (? IS NULL OR problem = ?) ORDER BY config, problem, repeat, seq"
    )
    for config, key, repeat, kind, reason, attempt, parent, passed, total, members in db.execute(
        query, (run_id, problem, problem)
    ):
        decision = Decision(
            kind,
            reason,
            attempt=attempt,
            parent=parent,
            known_passed=passed,
            known_total=total,
            members=tuple(json.loads(members)),
        )
        found.setdefault(Unit(str(config), str(key), int(repeat)), []).append(decision)
    return found


def _generation(row: tuple[object, ...]) -> GenerationDetail:
    index, raw, tests, rejected, reference, prompt_tokens, completion_tokens, cost, latency, cached = row
    verdicts: list[object] = [] if reference is None else json.loads(str(reference))
    stored = json.loads(str(tests))
    return GenerationDetail(
        index=int(str(index)),
        raw=str(raw),
        tests=tuple(_generated_test(test, verdicts[i] if i < len(verdicts) else None) for i, test in enumerate(stored)),
        rejected=tuple(json.loads(str(rejected))),
        prompt_tokens=int(str(prompt_tokens)),
        completion_tokens=int(str(completion_tokens)),
        cost_usd=None if cost is None else float(str(cost)),
        latency_seconds=float(str(latency)),
        cached=bool(cached),
    )


def _generated_test(stored: dict[str, object], verdict: object) -> GeneratedTest:
    kind = str(stored.get("type", ""))
    if kind == "AssertTest":
        text = str(stored["code"])
    elif kind == "StdioTest":
        text = f"input:\n{stored['stdin']}\nexpected output:\n{stored['expected']}"
    else:
        text = f"{stored.get('expr')} == {stored.get('expected')!r}"
    return GeneratedTest(kind=kind, text=text, reference_passed=None if verdict is None else bool(verdict))


@dataclass(frozen=True)
class SelectionRecords:
    """A trajectory's decisions and test-writing calls, as its export lines show them."""

    decisions: list[Decision] = field(default_factory=list)
    """The decisions, in the order taken."""
    generations: list[GenerationDetail] = field(default_factory=list)
    """The test-writing calls, in order."""


def read_selection(db: sqlite3.Connection, run_id: str) -> dict[Unit, SelectionRecords]:
    """Per unit with any: its decisions and test-writing calls (for the export)."""
    decisions, generations = read_decisions(db, run_id, None), read_generations(db, run_id, None)
    return {
        unit: SelectionRecords(decisions.get(unit, []), generations.get(unit, []))
        for unit in {*decisions, *generations}
    }


def with_selection(line: dict[str, object], selection: SelectionRecords | None) -> dict[str, object]:
    """An export line with ``decisions`` (those about its attempt) and, on a trajectory's first attempt,
    ``trajectory_decisions`` and ``generated_tests`` (the whole trajectory's; ``None`` on the others)."""
    decisions, generations = (selection.decisions, selection.generations) if selection else ([], [])
    first = line["iteration"] == 0
    line["decisions"] = [_decision_json(d) for d in decisions if d.attempt == line["iteration"]]
    line["trajectory_decisions"] = [_decision_json(d) for d in decisions] if first else None
    line["generated_tests"] = [asdict(g) for g in generations] if first else None
    return line


def _decision_json(decision: Decision) -> dict[str, object]:
    return {**asdict(decision), "members": list(decision.members)}
