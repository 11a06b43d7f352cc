"""HumanEval+ (evalplus release file): the original problems with many more inputs.

The release ships inputs, not outputs: expected outputs come from running the canonical solution on
every input in the sandbox, once, and are cached (keyed by the file's hash) so later loads are instant.
Memory stays bounded: outputs are computed in chunks whose replies stay small (a large value is computed
again on its own, see ``SMALL_REPR``), and large outputs are kept compressed (``_packed``).
Comparison follows evalplus: exact, except float results (tolerance ``atol``, default 1e-6), and
``find_zero`` (HumanEval/32), whose answer is checked by evaluating the polynomial.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from collections.abc import Callable
from pathlib import Path

from refinelab._progress import ProgressHook
from refinelab.errors import InputError, UserError
from refinelab.problems._humaneval import docstring_tests
from refinelab.problems._io import field, optional, read_jsonl
from refinelab.problems._literal import call_source, to_source
from refinelab.problems._model import AssertTest, CallTest, Problem, Test
from refinelab.problems._packed import Packed
from refinelab.sandbox import Limits, TestOutcome, WorkerPool
from refinelab.sandbox._compare import DEFAULT_FLOAT_ATOL, holds_float
from refinelab.sandbox._worker.codec import decode, encode_expected

Where = tuple[Path, "int | None"]
Output = Packed | dict[str, object]
"""A computed output: ``{"value": encoded}``, ``{"error": verdict}``, or a large value kept :class:`Packed`."""
REFERENCE_LIMITS = Limits(cpu_seconds=20.0)
"""Generous limits for the canonical solutions."""
CHUNK = 64
"""Inputs evaluated per sandbox job while computing outputs."""
SMALL_ITEMS = 4096
"""Inside a chunk, a value with more parts than this (items of containers, 8 characters of a string)
comes back as a marker and is computed again on its own, so no reply carries more than a few MiB (the
reference solution is trusted code, so a wrapper around its value can run in the sandbox)."""
_SMALL = "_refinelab_small_or_marker"
_SMALL_SOURCE = """
def {name}(value, marker):
    parts, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (str, bytes)):
            parts += 1 + len(item) // 8
        elif isinstance(item, (list, tuple, set, frozenset, dict)):
            parts += 1 + len(item)
            if parts <= {limit}:
                stack.extend(item.items() if isinstance(item, dict) else item)
        else:
            parts += 1
        if parts > {limit}:
            return marker
    return value
"""
"""Defined beside the reference solution: the value, or ``marker`` when it is large (cost bounded by the
limit, not by the value's size)."""
PACK_BYTES = 4 * 1024
"""Encoded outputs larger than this are kept compressed (see ``_packed``)."""
CACHE_FORMAT = 2
"""Version of the cache file's layout (part of its name)."""


async def load_humanevalplus(
    path: str | Path, pool: WorkerPool, cache_dir: Path, progress: ProgressHook | None = None
) -> list[Problem]:
    """Load HumanEval+ from an evalplus release file, computing expected outputs in ``pool`` the first time.

    The outputs are cached in ``cache_dir`` as ``humanevalplus-<file hash>.v2.jsonl``, one line per task
    in the file's order; problems are built from the source and the cache read side by side, one task at
    a time, so memory holds the problems and little else.
    """
    source = Path(path)
    digest = _digest(source)
    cache = cache_dir / f"humanevalplus-{digest}.v{CACHE_FORMAT}.jsonl"
    problems = _from_cache(source, cache)
    if problems is None:
        _write_cache(cache, await _compute(source, pool, progress or _quiet))
        (cache_dir / f"humanevalplus-{digest}.json").unlink(missing_ok=True)  # the first format's cache
        problems = _from_cache(source, cache)
        if problems is None:
            raise UserError(f"{cache}: the cache just written cannot be read back; is {cache_dir} writable?")
    return problems


def _quiet(what: str, done: int, total: int) -> None:
    """No progress display."""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _from_cache(source: Path, cache: Path) -> list[Problem] | None:
    """The problems, with their outputs from the cache; None when the cache is missing, unreadable or
    not this file's."""
    try:
        handle = cache.open(encoding="utf-8")
    except OSError:
        return None
    problems = []
    with handle:
        for line, record in read_jsonl(source):
            where = (source, line)
            cached = _cached_line(handle.readline())
            if cached is None or cached[0] != str(record.get("task_id")):
                return None
            problems.append(_problem(record, where, _inputs(record, where), cached[1]))
        if handle.readline():
            return None
    return problems


def _cached_line(text: str) -> tuple[str, list[Output]] | None:
    try:
        entry = json.loads(text)
        return str(entry["task_id"]), [_from_json(item) for item in entry["outputs"]]
    except (ValueError, KeyError, TypeError):
        return None


def _write_cache(cache: Path, outputs: list[tuple[str, list[Output]]]) -> None:
    cache.parent.mkdir(parents=True, exist_ok=True)
    temporary = cache.with_suffix(".tmp")
    with temporary.open("w", encoding="utf-8") as handle:
        for task_id, items in outputs:
            handle.write(json.dumps({"task_id": task_id, "outputs": [_to_json(item) for item in items]}) + "\n")
    temporary.replace(cache)  # atomic: a half-written cache is never read


def _to_json(item: Output) -> dict[str, object]:
    return item.to_json() if isinstance(item, Packed) else item


def _from_json(item: dict[str, object]) -> Output:
    return Packed.from_json(item) if "packed" in item else item


def _inputs(record: dict[str, object], where: Where) -> list[list[object]]:
    inputs = field(record, "base_input", list, where) + optional(record, "plus_input", list, where, [])
    for value in inputs:
        if not isinstance(value, list):
            raise InputError(where[0], where[1], "plus_input", "each input must be a list of arguments")
    return inputs


def _checked(record: dict[str, object], where: Where) -> int:
    """Check what computing a record's outputs needs (before any work); its number of inputs."""
    for name in ("task_id", "prompt", "canonical_solution", "entry_point"):
        field(record, name, str, where)
    return len(_inputs(record, where))


async def _compute(source: Path, pool: WorkerPool, progress: ProgressHook) -> list[tuple[str, list[Output]]]:
    """Every task's outputs, in the file's order, as many tasks at once as the pool has workers (records
    are read as they are needed)."""
    total = sum(_checked(record, (source, line)) for line, record in read_jsonl(source))
    done = 0

    def advance(count: int) -> None:
        nonlocal done
        done += count
        progress("computing expected outputs", done, total)

    found: dict[int, tuple[str, list[Output]]] = {}
    pending = enumerate(read_jsonl(source))

    async def work() -> None:
        for position, (line, record) in pending:  # shared: each record goes to the first free worker
            where = (source, line)
            outputs = await _reference_outputs(record, where, _inputs(record, where), pool, advance)
            found[position] = (str(record["task_id"]), outputs)

    progress("computing expected outputs", 0, total)
    await asyncio.gather(*(work() for _ in range(pool.size)))
    return [found[position] for position in sorted(found)]


async def _reference_outputs(
    record: dict[str, object],
    where: Where,
    inputs: list[list[object]],
    pool: WorkerPool,
    advance: Callable[[int], None],
) -> list[Output]:
    """Outputs of the canonical solution, or ``{"error": ...}`` where it failed, in chunks of inputs."""
    program = field(record, "prompt", str, where) + field(record, "canonical_solution", str, where)
    entry = field(record, "entry_point", str, where)
    atol = float(optional(record, "atol", float, where, 0.0))
    marker = f"refinelab-large-value-{secrets.token_hex(8)}"
    setup = _SMALL_SOURCE.format(name=_SMALL, limit=SMALL_ITEMS)
    outputs: list[Output] = []
    exprs = [call_source(args) for args in inputs]
    for start in range(0, len(exprs), CHUNK):
        chunk = exprs[start : start + CHUNK]
        wrapped = [f"{_SMALL}({expr}, {marker!r})" for expr in chunk]
        values = await pool.values(program, wrapped, entry_point=entry, setup=setup, limits=REFERENCE_LIMITS)
        for expr, value in zip(chunk, values):
            if value == marker:
                (value,) = await pool.values(program, [expr], entry_point=entry, limits=REFERENCE_LIMITS)
            outputs.append(_output(value, atol, packable=entry != "find_zero"))
        advance(len(chunk))
    return outputs


def _output(value: object, atol: float, *, packable: bool) -> Output:
    if isinstance(value, TestOutcome):
        return {"error": value.verdict}
    encoded = encode_expected(value)
    if packable and len(text := json.dumps(encoded)) > PACK_BYTES:
        tolerance = (atol or DEFAULT_FLOAT_ATOL) if atol or holds_float(value) else None
        return Packed.of(encoded, value, text=text, atol=tolerance)
    return {"value": encoded}


def _problem(record: dict[str, object], where: Where, inputs: list[list[object]], outputs: list[Output]) -> Problem:
    prompt = field(record, "prompt", str, where)
    entry = field(record, "entry_point", str, where)
    atol = float(optional(record, "atol", float, where, 0.0))
    hidden, dropped = _hidden_tests(entry, inputs, outputs, atol)
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


def _hidden_tests(entry: str, inputs: list[list[object]], outputs: list[Output], atol: float) -> tuple[list[Test], int]:
    tests: list[Test] = []
    dropped = 0
    for args, output in zip(inputs, outputs):
        if isinstance(output, Packed):  # large: compared (with its tolerance) when needed, see _packed
            tests.append(CallTest(call_source(args), output))
            continue
        if "value" not in output:
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
