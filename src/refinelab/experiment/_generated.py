"""Generated tests and selection decisions in the store (``codet``, ``verified``), and scoring generated
tests against a problem's reference solution (their accuracy: the share the reference passes)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass, field, replace

from refinelab.problems import Problem, Test
from refinelab.records import Spend, Usage
from refinelab.sandbox import Limits, Sandbox
from refinelab.strategies import Decision, TestGeneration, Trajectory
from refinelab.verification import test_accuracy, test_key

"""The store migration that adds generated tests and decisions (and counts test-writing calls as model
calls)."""

Key = tuple[str, str, str, int]


def test_json(test: Test) -> dict[str, object]:
    """A test as stored: its type and fields."""
    return {"type": type(test).__name__, **asdict(test)}


def save_rows(db: sqlite3.Connection, key: Key, trajectory: Trajectory) -> None:
    """Insert a trajectory's test generations and decisions (inside the caller's transaction)."""
    for index, generation in enumerate(trajectory.generations):
        db.execute(
            "INSERT INTO test_generations VALUES (" + ", ".join(["?"] * 14) + ")",  # noqa: S608 - placeholders only
            _generation_row(key, index, generation),
        )
    for seq, decision in enumerate(trajectory.decisions):
        db.execute(
            "INSERT INTO decisions VALUES (" + ", ".join(["?"] * 12) + ")",  # noqa: S608 - placeholders only
            _decision_row(key, seq, decision),
        )


def _generation_row(key: Key, index: int, generation: TestGeneration) -> tuple[object, ...]:
    usage = generation.usage
    reference = None if generation.reference_passed is None else json.dumps(list(generation.reference_passed))
    return (
        *key, index, generation.raw, json.dumps([test_json(t) for t in generation.tests], default=str),
        json.dumps(list(generation.rejected)), reference, usage.prompt_tokens, usage.completion_tokens,
        generation.cost_usd, generation.latency_seconds, int(generation.cached),
    )  # fmt: skip


def _decision_row(key: Key, seq: int, decision: Decision) -> tuple[object, ...]:
    return (
        *key, seq, decision.kind, decision.reason, decision.attempt, decision.parent, decision.known_passed,
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


def generation_totals(db: sqlite3.Connection, run_id: str) -> dict[tuple[str, str, int], Totals]:
    """Per unit: what the test-writing calls spent, the tests they generated, and how many of them the
    reference passes (``None`` when the problem has no reference)."""
    totals: dict[tuple[str, str, int], Totals] = {}
    rows = db.execute(
        "SELECT config, problem, repeat, prompt_tokens, completion_tokens, cost_usd, tests, reference_passed "
        "FROM test_generations WHERE run_id = ? ORDER BY config, problem, repeat, idx",
        (run_id,),
    )
    for config, problem, repeat, prompt, completion, cost, tests, reference in rows:
        unit = (str(config), str(problem), int(repeat))
        before = totals.get(unit, Totals())
        verdicts = None if reference is None else json.loads(reference)
        correct = None if verdicts is None else (before.correct or 0) + sum(bool(v) for v in verdicts)
        spent = Spend(Usage(int(prompt), int(completion)), None if cost is None else float(cost))
        totals[unit] = Totals(before.spend + spent, before.tests + len(json.loads(tests)), correct)
    return totals


async def with_reference_verdicts(
    trajectory: Trajectory, problem: Problem, pool: Sandbox, limits: Limits | None = None
) -> Trajectory:
    """The trajectory with each generated test judged by the problem's reference solution (unchanged
    when the problem has none or no tests were written): every distinct test once, in one sandbox call,
    under ``limits`` (the agreement's; see :func:`refinelab.verification.agreement_limits`)."""
    if problem.reference is None or not trajectory.generations:
        return trajectory
    distinct: dict[str, int] = {}
    tests: list[Test] = []
    for generation in trajectory.generations:
        for test in generation.tests:
            if distinct.setdefault(test_key(test), len(tests)) == len(tests):
                tests.append(test)
    accuracy = await test_accuracy(pool, tests, problem, limits=limits)
    correct = frozenset() if accuracy is None else accuracy.correct
    judged = [
        replace(g, reference_passed=tuple(distinct[test_key(t)] in correct for t in g.tests))
        for g in trajectory.generations
    ]
    return replace(trajectory, generations=tuple(judged))


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


def read_generations(
    db: sqlite3.Connection, run_id: str, problem: str | None
) -> dict[tuple[str, str, int], list[GenerationDetail]]:
    """The stored test-writing calls of a run (or of one ``benchmark/id`` problem), per unit, in order."""
    found: dict[tuple[str, str, int], list[GenerationDetail]] = {}
    query = (
        "SELECT config, problem, repeat, idx, raw, tests, rejected, reference_passed, prompt_tokens, "
        "completion_tokens, cost_usd, latency_s, cached FROM test_generations "
        "WHERE run_id = ? AND (? IS NULL OR problem = ?) ORDER BY config, problem, repeat, idx"
    )
    for row in db.execute(query, (run_id, problem, problem)):
        found.setdefault((str(row[0]), str(row[1]), int(row[2])), []).append(_generation(row[3:]))
    return found


def read_decisions(
    db: sqlite3.Connection, run_id: str, problem: str | None
) -> dict[tuple[str, str, int], list[Decision]]:
    """The stored decisions of a run (or of one ``benchmark/id`` problem), per unit, in the order taken."""
    found: dict[tuple[str, str, int], list[Decision]] = {}
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
        found.setdefault((str(config), str(key), int(repeat)), []).append(decision)
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


Selection = tuple[list[Decision], list[GenerationDetail]]
"""A trajectory's decisions and test-writing calls."""


def read_selection(db: sqlite3.Connection, run_id: str) -> dict[tuple[str, str, int], Selection]:
    """Per unit with any: its decisions and test-writing calls (for the export)."""
    decisions, generations = read_decisions(db, run_id, None), read_generations(db, run_id, None)
    return {unit: (decisions.get(unit, []), generations.get(unit, [])) for unit in {*decisions, *generations}}


def with_selection(line: dict[str, object], selection: Selection | None) -> dict[str, object]:
    """An export line with ``decisions`` (those about its attempt) and, on a trajectory's first attempt,
    ``trajectory_decisions`` and ``generated_tests`` (the whole trajectory's; ``None`` on the others)."""
    decisions, generations = selection or ([], [])
    first = line["iteration"] == 0
    line["decisions"] = [_decision_json(d) for d in decisions if d.attempt == line["iteration"]]
    line["trajectory_decisions"] = [_decision_json(d) for d in decisions] if first else None
    line["generated_tests"] = [asdict(g) for g in generations] if first else None
    return line


def _decision_json(decision: Decision) -> dict[str, object]:
    return {**asdict(decision), "members": list(decision.members)}
