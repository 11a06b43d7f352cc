"""Preparing benchmarks whose sources ship no expected outputs: HumanEval+ and MBPP+ (a step before scoring).

evalplus's releases ship inputs, not outputs (``problems`` reads the tasks as data): expected outputs
come from running the canonical solution on every input in the sandbox, once, and are cached (keyed by
the file's hash) so later loads are instant. Memory stays bounded: outputs are computed in chunks whose
replies stay small (a large value is computed again on its own, see ``SMALL_ITEMS``), and large outputs
are kept compressed (:class:`~refinelab.sandbox.Packed`). Floats compare within the record's ``atol``
(default 1e-6), as evalplus does.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

from refinelab._progress import ProgressHook
from refinelab.errors import UserError
from refinelab.problems import (
    BenchmarkFiles,
    FetchOptions,
    HumanEvalPlusTask,
    Problem,
    Test,
    open_benchmark,
    read_benchmark,
    read_humanevalplus,
    read_mbppplus,
)
from refinelab.sandbox._compare import DEFAULT_FLOAT_ATOL, holds_float
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._outcome import TestOutcome
from refinelab.sandbox._packed import Packed
from refinelab.sandbox._protocol import Sandbox
from refinelab.sandbox._worker.codec import decode, encode_expected

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


async def prepare_benchmark(
    benchmark: str | BenchmarkFiles,
    path: str | Path | None = None,
    *,
    pool: Sandbox,
    cache_dir: Path | None = None,
    progress: ProgressHook | None = None,
) -> list[Problem]:
    """Load a benchmark's problems, computing in ``pool`` whatever its source does not ship.

    ``benchmark`` is a name (its files are ``path``, or its default source downloaded into
    ``cache_dir``; see :func:`refinelab.problems.open_benchmark`) or files already opened. HumanEval+'s
    and MBPP+'s expected outputs are computed the first time (``progress`` is told how far it got) and
    kept in ``cache_dir``; every other benchmark is read as :func:`refinelab.problems.read_benchmark`
    reads it.
    """
    if isinstance(benchmark, str):
        options = FetchOptions(cache_dir, os.environ, progress) if cache_dir is not None else None
        benchmark = open_benchmark(benchmark, path, options=options)
    reader = _READERS.get(benchmark.benchmark)
    if reader is None:
        return read_benchmark(benchmark)
    if cache_dir is None:
        raise UserError(f"{benchmark.benchmark} needs a sandbox pool and a cache directory to compute expected outputs")
    return await load_humanevalplus(benchmark.paths[0], pool, cache_dir, progress, reader=reader)


Reader = Callable[[Path], Iterator[HumanEvalPlusTask]]
"""Reads the tasks of an evalplus release file."""
_READERS: dict[str, Reader] = {"humaneval-plus": read_humanevalplus, "mbpp-plus": read_mbppplus}


async def load_humanevalplus(
    path: str | Path,
    pool: Sandbox,
    cache_dir: Path,
    progress: ProgressHook | None = None,
    *,
    reader: Reader = read_humanevalplus,
) -> list[Problem]:
    """Load HumanEval+ (or, with ``reader=read_mbppplus``, MBPP+) from an evalplus release file, computing
    expected outputs in ``pool`` the first time.

    The outputs are cached in ``cache_dir`` as ``humanevalplus-<file hash>.v2.jsonl`` (``mbppplus-...``),
    one line per task in the file's order; problems are built from the source and the cache read side by
    side, one task at a time, so memory holds the problems and little else.
    """
    source = Path(path)
    first = next(reader(source), None)
    if first is None:
        raise UserError(f"{source}: no {'mbpp' if reader is read_mbppplus else 'humaneval'}-plus problems in the file")
    digest = _digest(source)
    cache = cache_dir / f"{first.kind}-{digest}.v{CACHE_FORMAT}.jsonl"
    problems = _from_cache(source, cache, reader)
    if problems is None:
        _write_cache(cache, await _compute(source, pool, progress or _quiet, reader))
        (cache_dir / f"{first.kind}-{digest}.json").unlink(missing_ok=True)  # the first format's cache
        problems = _from_cache(source, cache, reader)
        if problems is None:
            raise UserError(f"{cache}: the cache just written cannot be read back; is {cache_dir} writable?")
    return problems


def _quiet(what: str, done: int, total: int) -> None:
    """No progress display."""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _from_cache(source: Path, cache: Path, reader: Reader) -> list[Problem] | None:
    """The problems, with their outputs from the cache; None when the cache is missing, unreadable or
    not this file's."""
    try:
        handle = cache.open(encoding="utf-8")
    except OSError:
        return None
    problems = []
    with handle:
        for task in reader(source):
            cached = _cached_line(handle.readline())
            if cached is None or cached[0] != task.task_id:
                return None
            problems.append(task.problem(*_hidden_tests(task, cached[1])))
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


async def _compute(
    source: Path, pool: Sandbox, progress: ProgressHook, reader: Reader
) -> list[tuple[str, list[Output]]]:
    """Every task's outputs, in the file's order, as many tasks at once as the pool has workers (records
    are read as they are needed)."""
    total = 0
    for task in reader(source):
        task.reference()  # every record checked before any work: a missing solution is an error now
        total += len(task.inputs)
    done = 0

    def advance(count: int) -> None:
        nonlocal done
        done += count
        progress("computing expected outputs", done, total)

    found: dict[int, tuple[str, list[Output]]] = {}
    pending = enumerate(reader(source))

    async def work() -> None:
        for position, task in pending:  # shared: each task goes to the first free worker
            found[position] = (task.task_id, await _reference_outputs(task, pool, advance))

    progress("computing expected outputs", 0, total)
    await asyncio.gather(*(work() for _ in range(pool.size)))
    return [found[position] for position in sorted(found)]


async def _reference_outputs(task: HumanEvalPlusTask, pool: Sandbox, advance: Callable[[int], None]) -> list[Output]:
    """Outputs of the canonical solution, or ``{"error": ...}`` where it failed, in chunks of inputs."""
    program, entry = task.reference(), task.entry_point
    marker = f"refinelab-large-value-{secrets.token_hex(8)}"
    setup = _SMALL_SOURCE.format(name=_SMALL, limit=SMALL_ITEMS)
    outputs: list[Output] = []
    exprs = task.expressions
    for start in range(0, len(exprs), CHUNK):
        chunk = exprs[start : start + CHUNK]
        wrapped = [f"{_SMALL}({expr}, {marker!r})" for expr in chunk]
        values = await pool.values(program, wrapped, entry_point=entry, setup=setup, limits=REFERENCE_LIMITS)
        for expr, value in zip(chunk, values):
            if value == marker:
                (value,) = await pool.values(program, [expr], entry_point=entry, limits=REFERENCE_LIMITS)
            outputs.append(_output(value, task.atol, packable=entry != "find_zero"))
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


def _hidden_tests(task: HumanEvalPlusTask, outputs: list[Output]) -> tuple[list[Test], int]:
    """The task's hidden tests from its outputs; inputs without an output are dropped (and counted)."""
    tests: list[Test] = []
    dropped = 0
    for index, output in zip(range(len(task.inputs)), outputs):
        if isinstance(output, Packed):  # large: compared (with its tolerance) when needed, see _packed
            tests.append(task.test(index, output, None))
        elif "value" not in output:
            dropped += 1
        else:
            expected = decode(output["value"])
            exact = task.entry_point != "find_zero" and not (task.atol or holds_float(expected))
            tests.append(task.test(index, expected, None if exact else task.atol or DEFAULT_FLOAT_ATOL))
    return tests, dropped
