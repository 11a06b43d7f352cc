"""HumanEval+ (evalplus release file): the original problems with many more inputs.

The release ships inputs, not outputs: expected outputs come from running the canonical solution on
every input in the sandbox, once, and are cached (keyed by the file's hash) so later loads are instant.
Comparison follows evalplus: exact, except float results (tolerance ``atol``, default 1e-6), and
``find_zero`` (HumanEval/32), whose answer is checked by evaluating the polynomial.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from refinelab._errors import InputError
from refinelab.problems._humaneval import docstring_tests
from refinelab.problems._io import field, optional, read_jsonl
from refinelab.problems._literal import call_source, to_source
from refinelab.problems._model import AssertTest, CallTest, Problem, Test
from refinelab.sandbox import Limits, TestOutcome, WorkerPool
from refinelab.sandbox._compare import DEFAULT_FLOAT_ATOL, decode, encode_expected, holds_float

Where = tuple[Path, "int | None"]
REFERENCE_LIMITS = Limits(cpu_seconds=20.0)
"""Generous limits for the canonical solutions."""


async def load_humanevalplus(path: str | Path, pool: WorkerPool, cache_dir: Path) -> list[Problem]:
    """Load HumanEval+ from an evalplus release file, computing expected outputs in ``pool``."""
    source = Path(path)
    records = list(read_jsonl(source))
    cache = cache_dir / f"humanevalplus-{_digest(source)}.json"
    outputs = _read_cache(cache)
    if outputs is None:
        outputs = {}
        for line, record in records:
            outputs[str(record.get("task_id"))] = await _reference_outputs(record, (source, line), pool)
        cache.parent.mkdir(parents=True, exist_ok=True)
        temporary = cache.with_suffix(".tmp")
        temporary.write_text(json.dumps(outputs))
        temporary.replace(cache)  # atomic: a half-written cache is never read
    return [_problem(record, (source, line), outputs.get(str(record.get("task_id")), [])) for line, record in records]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _read_cache(cache: Path) -> dict[str, list[object]] | None:
    try:
        data = json.loads(cache.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _inputs(record: dict[str, object], where: Where) -> list[list[object]]:
    inputs = field(record, "base_input", list, where) + optional(record, "plus_input", list, where, [])
    for value in inputs:
        if not isinstance(value, list):
            raise InputError(where[0], where[1], "plus_input", "each input must be a list of arguments")
    return inputs


async def _reference_outputs(record: dict[str, object], where: Where, pool: WorkerPool) -> list[object]:
    """Encoded outputs of the canonical solution, or ``{"error": ...}`` where it failed."""
    program = field(record, "prompt", str, where) + field(record, "canonical_solution", str, where)
    exprs = [call_source(args) for args in _inputs(record, where)]
    values = await pool.values(
        program, exprs, entry_point=field(record, "entry_point", str, where), limits=REFERENCE_LIMITS
    )
    return [{"error": v.verdict} if isinstance(v, TestOutcome) else {"value": encode_expected(v)} for v in values]


def _problem(record: dict[str, object], where: Where, outputs: list[object]) -> Problem:
    prompt = field(record, "prompt", str, where)
    entry = field(record, "entry_point", str, where)
    atol = float(optional(record, "atol", float, where, 0.0))
    hidden, dropped = _hidden_tests(entry, _inputs(record, where), outputs, atol)
    return Problem(
        id=field(record, "task_id", str, where),
        prompt=prompt,
        kind="function",
        visible_tests=tuple(docstring_tests(prompt, entry)),
        hidden_tests=tuple(hidden),
        entry_point=entry,
        starter_code=prompt,
        reference=prompt + optional(record, "canonical_solution", str, where, ""),
        completion_prefix=prompt,
        metadata={"source": "humanevalplus", "inputs_without_reference_output": dropped},
    )


def _hidden_tests(entry: str, inputs: list[list[object]], outputs: list[object], atol: float) -> tuple[list[Test], int]:
    tests: list[Test] = []
    dropped = 0
    for args, output in zip(inputs, outputs):
        if not isinstance(output, dict) or "value" not in output:
            dropped += 1
            continue
        expected = decode(output["value"])
        if entry == "find_zero":
            tests.append(
                AssertTest(
                    f"assert abs(poly({to_source(args[0])}, {call_source(args)})) <= {atol or DEFAULT_FLOAT_ATOL}"
                )
            )
        elif atol or holds_float(expected):
            tests.append(CallTest(call_source(args), expected, atol=atol or DEFAULT_FLOAT_ATOL))
        else:
            tests.append(CallTest(call_source(args), expected))
    return tests, dropped
