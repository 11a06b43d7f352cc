"""Preparing benchmarks whose sources ship no expected outputs: HumanEval+ and MBPP+ (a step before scoring).

evalplus's releases ship inputs, not outputs (``problems`` reads the tasks as data): expected outputs
come from running the canonical solution on every input in the sandbox, once, and are cached (keyed by
the file's hash) so later loads are instant. The canonical solution's CPU time on each input is
measured and cached with them: a test's time limit may follow it (evalplus's rule,
:meth:`Limits.following_reference`). Times measured on one machine are used on another (or on a busier
one) after calibration: the cache records the CPU time of a fixed workload where the times were taken,
every load measures it again, and the times are scaled by the ratio (``reference_time_scale`` in each
problem's metadata). Memory stays bounded: outputs are computed in chunks whose replies stay small (a
chunk's reply carries at most one large value, see ``SMALL_ITEMS``), and large outputs are kept
compressed (:class:`~refinelab.sandbox.Packed`), packed in the sandbox where they were computed, so the
host stores what the workers send instead of decoding megabytes, encoding them again and compressing them.
Floats compare within the record's ``atol`` (default 1e-6), as evalplus does.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import os
import secrets
import sys
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from refinelab._progress import ProgressHook
from refinelab.errors import InfrastructureError, UserError
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
from refinelab.problems import benchmark as registered
from refinelab.sandbox._compare import DEFAULT_FLOAT_ATOL, holds_float
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._outcome import TestOutcome
from refinelab.sandbox._packed import PREVIEW, Packed
from refinelab.sandbox._protocol import Sandbox
from refinelab.sandbox._worker.codec import decode, encode_expected

Output = Packed | dict[str, object]
"""A computed output: ``{"value": encoded}``, ``{"error": verdict}``, or a large value kept :class:`Packed`."""
REFERENCE_LIMITS = Limits(cpu_seconds=20.0)
"""Generous limits for the canonical solutions."""
CHUNK = 1024
"""Inputs of a task a sandbox job evaluates at most while computing outputs (:data:`CHUNK_SECONDS` stops it
sooner)."""
CHUNK_SECONDS = 0.25
"""CPU seconds a chunk spends before it defers its other inputs to jobs of their own: a job costs about
11 ms of forking and loading, a third of HumanEval+'s reference CPU when every chunk had 64 inputs (2,077
jobs), so quick tasks go in one job each; a slow task's inputs are cut by what its first took."""
SMALL_ITEMS = 4096
"""A value with more parts than this (items of containers, 8 characters of a string) is large: it is packed
where it was computed, and the rest of its chunk goes to other jobs, so no reply carries two (the reference
solution is trusted code, so a wrapper around its value can run in the sandbox)."""
CHUNK_PARTS = 64 * SMALL_ITEMS
"""Parts of the values one chunk's reply carries at most (besides one large value): a chunk defers its later
inputs past this, so no reply carries more than a few MiB."""
_SMALL = "_refinelab_small_or_marker"
_SMALL_SOURCE = """
def {name}(value, marker, pack, limit={limit}):
    parts, stack = 0, [value] if limit is not None else []
    while stack:
        item = stack.pop()
        if isinstance(item, (str, bytes)):
            parts += 1 + len(item) // 8
        elif isinstance(item, (list, tuple, set, frozenset, dict)):
            parts += 1 + len(item)
            if parts <= limit:
                stack.extend(item.items() if isinstance(item, dict) else item)
        else:
            parts += 1
        if parts > limit:
            {name}.parts = parts
            return marker
    {name}.parts = parts
    try:
        packed = {packed}(value, marker, pack) if pack else None
    except Exception:  # memory, most likely: the host packs it, as before
        packed = None
    return value if packed is None else packed
"""
"""Defined beside the reference solution: ``marker`` when the value is large (more than ``limit`` parts:
counting them costs at most the limit, not the value's size); else the value, or, when its JSON is longer
than ``pack`` characters, the value packed where it was computed (:data:`_PACKED_SOURCE`). The parts it
counted are left in its ``parts``."""
_PACKED = "_refinelab_packed"
_PACKED_SOURCE = """
def {name}(value, marker, pack):
    import base64, json, sys, zlib
    codec = sys.modules.get("_worker.codec") or sys.modules.get("refinelab.sandbox._worker.codec")
    if codec is None:
        return None
    text = json.dumps(codec.encode(value))
    if len(text) <= pack or '{{"O": ' in text:
        return None
    head = value[:{preview}] if isinstance(value, (list, tuple)) and len(value) > {preview} else value
    limit = getattr(sys, "set_int_max_str_digits", None)  # the host's: a huge integer is not printed (quadratic)
    digits = sys.get_int_max_str_digits() if limit else 0
    if limit:
        limit({digits})
    try:
        preview = repr(head)
    except ValueError:
        preview = "<" + type(value).__name__ + " too large to print>"
    finally:
        if limit:
            limit(digits)
    preview = preview if len(preview) <= {preview} else preview[:{preview} - 3] + "..."
    def floats(item):
        return isinstance(item, float) or isinstance(item, (list, tuple)) and any(floats(i) for i in item)
    blob = base64.b64encode(zlib.compress(text.encode(), 1)).decode()
    return [marker + "-packed", blob, len(text), preview, floats(value)]
"""
"""The value's JSON as the worker encodes it, compressed in the sandbox, with its length, a preview and
whether it holds floats (what :class:`Packed` keeps): the host stores it as it comes instead of decoding
megabytes, encoding them again and compressing them (the reference solution is trusted code, so the
worker's codec can be called beside it: in a worker it is ``_worker.codec``, in a sandbox that runs
programs in this process, such as the tests' fake, ``refinelab.sandbox._worker.codec``). ``None`` for a
value the host cannot store (``O``: a type the codec does not carry), one small enough to keep as it is,
or where neither is loaded (the host then packs it, as before)."""
PACK_BYTES = 4 * 1024
"""Encoded outputs larger than this are kept compressed (see ``_packed``)."""
CACHE_FORMAT = 3
"""Version of the cache file's layout (part of its name): 3 added the reference's times and the
calibration header."""
_TIMED = "_refinelab_timed"
_TIMED_SOURCE = """
_refinelab_chunk = [0.0, 0]
def {name}(thunk, marker, pack=0, budget=None):
    import time
    if budget is not None and (_refinelab_chunk[0] > budget or _refinelab_chunk[1] > {parts}):
        return marker + "-later"
    start = time.process_time()
    value = thunk()
    spent = time.process_time() - start
    small = {small}(value, marker, pack)
    if small is marker and budget is not None:  # large: packed here, and the chunk's later inputs deferred
        small = {small}(value, marker, pack, None)
        _refinelab_chunk[1] = float("inf")
    cost = time.process_time() - start
    _refinelab_chunk[0] += cost
    _refinelab_chunk[1] += {small}.parts
    return [small, spent, cost]
"""
"""Runs one input's call and measures its CPU time (in the sandbox, on trusted code); the value is
checked for size as ``_SMALL_SOURCE`` says. With a ``budget`` (a chunk's), once the calls so far (checking
and packing their values included) have spent more CPU seconds than that in this child, or their values
hold more than :data:`CHUNK_PARTS` parts, each later call is ``marker + "-later"``, not run: deferred to
another job. A large value is packed where it was computed (no reply carries two), and the chunk's later
inputs are deferred."""
_WORKLOAD = """
def _refinelab_workload(n):
    total = 0
    for i in range(n):
        total = (total * 31 + i) % 1000003
    return total
"""
_WORKLOAD_CALL = "_refinelab_workload(200000)"
CALIBRATION_RUNS = 5
"""Runs of the fixed workload per calibration; the fastest counts (load only ever adds CPU time)."""


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
    reader = registered(benchmark.benchmark).tasks
    if reader is None:
        return read_benchmark(benchmark)
    if cache_dir is None:
        raise UserError(f"{benchmark.benchmark} needs a sandbox pool and a cache directory to compute expected outputs")
    return await load_humanevalplus(benchmark.paths[0], pool, cache_dir, progress, reader=reader)


Reader = Callable[[Path], Iterator[HumanEvalPlusTask]]
"""Reads the tasks of an evalplus release file (a benchmark record's ``tasks``)."""


async def load_humanevalplus(
    path: str | Path,
    pool: Sandbox,
    cache_dir: Path,
    progress: ProgressHook | None = None,
    *,
    reader: Reader = read_humanevalplus,
) -> list[Problem]:
    """Load HumanEval+ (or, with ``reader=read_mbppplus``, MBPP+) from an evalplus release file, computing
    expected outputs (and the reference's time on each input) in ``pool`` the first time.

    The outputs are cached in ``cache_dir`` as ``humanevalplus-<file hash>.v3.jsonl`` (``mbppplus-...``):
    a header line (the calibration), then one line per task in the file's order; problems are built from
    the source and the cache read side by side, one task at a time, so memory holds the problems and little
    else. The reference's times are scaled by how fast this machine runs the calibration workload now
    against when they were measured (see the module docstring).
    """
    source = Path(path)
    first = next(reader(source), None)
    if first is None:
        raise UserError(f"{source}: no {'mbpp' if reader is read_mbppplus else 'humaneval'}-plus problems in the file")
    digest = _digest(source)
    cache = cache_dir / f"{first.kind}-{digest}.v{CACHE_FORMAT}.jsonl"
    now = await calibrate(pool)
    problems = _from_cache(source, cache, reader, now)
    if problems is None:
        _write_cache(cache, now, await _compute(source, pool, progress or _quiet, reader))
        for old in (f"{first.kind}-{digest}.json", f"{first.kind}-{digest}.v2.jsonl"):  # earlier formats
            (cache_dir / old).unlink(missing_ok=True)
        problems = _from_cache(source, cache, reader, now)
        if problems is None:
            raise UserError(f"{cache}: the cache just written cannot be read back; is {cache_dir} writable?")
    return problems


def _quiet(what: str, done: int, total: int) -> None:
    """No progress display."""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


Computed = tuple[str, list[Output], list["float | None"]]
"""A task's id, its outputs and the reference's CPU seconds on each input."""


def _from_cache(source: Path, cache: Path, reader: Reader, calibration: float) -> list[Problem] | None:
    """The problems, with their outputs (and the reference's times, scaled to ``calibration``) from the
    cache; None when the cache is missing, unreadable or not this file's."""
    try:
        handle = cache.open(encoding="utf-8")
    except OSError:
        return None
    problems = []
    with handle:
        measured = _header(handle.readline())
        if measured is None:
            return None
        scale = calibration / measured
        for task in reader(source):
            cached = _cached_line(handle.readline())
            if cached is None or cached[0] != task.task_id:
                return None
            tests, dropped, seconds = _hidden_tests(task, cached[1], cached[2])
            problem = task.problem(tests, dropped)
            metadata = {**problem.metadata, "reference_time_scale": round(scale, 4)}
            problems.append(replace(problem, hidden_seconds=tuple(t * scale for t in seconds), metadata=metadata))
        if handle.readline():
            return None
    return problems


def _header(text: str) -> float | None:
    """The calibration recorded in a cache's first line."""
    try:
        entry = json.loads(text)
        measured = float(entry["calibration_seconds"])
    except (ValueError, KeyError, TypeError):
        return None
    return measured if measured > 0 else None


def _cached_line(text: str) -> Computed | None:
    try:
        entry = json.loads(text)
        outputs = [_from_json(item) for item in entry["outputs"]]
        seconds = [None if t is None else float(t) for t in entry["seconds"]]
    except (ValueError, KeyError, TypeError):
        return None
    return (str(entry["task_id"]), outputs, seconds) if len(seconds) == len(outputs) else None


def _write_cache(cache: Path, calibration: float, computed: list[Computed]) -> None:
    cache.parent.mkdir(parents=True, exist_ok=True)
    temporary = cache.with_suffix(".tmp")
    with temporary.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps({"format": CACHE_FORMAT, "calibration_seconds": calibration}) + "\n")
        for task_id, items, seconds in computed:
            line = {"task_id": task_id, "outputs": [_to_json(item) for item in items], "seconds": seconds}
            handle.write(json.dumps(line) + "\n")
    temporary.replace(cache)  # atomic: a half-written cache is never read


def _to_json(item: Output) -> dict[str, object]:
    return item.to_json() if isinstance(item, Packed) else item


def _from_json(item: dict[str, object]) -> Output:
    return Packed.from_json(item) if "packed" in item else item


async def _compute(source: Path, pool: Sandbox, progress: ProgressHook, reader: Reader) -> list[Computed]:
    """Every task's outputs and times, in the file's order (see :class:`_Chunks`)."""
    total = 0
    for task in reader(source):
        task.reference()  # every record checked before any work: a missing solution is an error now
        total += len(task.inputs)
    chunks = _Chunks(reader(source), pool, lambda done: progress("computing expected outputs", done, total))
    progress("computing expected outputs", 0, total)
    # Two chunks per worker: while the host decodes and packs one chunk's values, the worker runs another's.
    await asyncio.gather(*(chunks.work() for _ in range(2 * pool.size)))
    return chunks.computed()


@dataclass(frozen=True)
class _Chunk:
    """Inputs of one task evaluated in one sandbox job."""

    position: int
    """The task's position in the file."""
    task: HumanEvalPlusTask
    start: int
    """The first input's index."""
    expressions: list[str]
    """The inputs as source (``candidate(...)``), written once: a deferred tail is sent again as it is."""


class _Chunks:
    """The work of computing outputs, shared by concurrent :meth:`work` loops, each taking the next chunk.

    A task's inputs go in chunks of up to :data:`CHUNK`, across tasks, each taken by the first free loop,
    so a task with many inputs spreads over every worker (records are read as their first chunk is taken).
    A chunk stops taking inputs after :data:`CHUNK_SECONDS` of CPU in the sandbox; its deferred tail is cut
    by the time its inputs took into pieces of half that and queued ahead of fresh chunks, side by side.
    """

    def __init__(self, tasks: Iterator[HumanEvalPlusTask], pool: Sandbox, progress: Callable[[int], None]) -> None:
        self._fresh = _first_chunks(tasks)
        self._later: deque[_Chunk] = deque()
        self._pool, self._progress = pool, progress
        self._found: dict[int, tuple[str, list[Output | None], list[float | None]]] = {}
        self._running, self._done, self._failed = 0, 0, False
        self._wake = asyncio.Event()

    async def work(self) -> None:
        """Run chunks until none is left and none is running (or another loop failed)."""
        while not self._failed:
            chunk = self._later.popleft() if self._later else next(self._fresh, None)
            if chunk is None:
                if self._running == 0:
                    self._wake.set()
                    return
                self._wake.clear()
                await self._wake.wait()
                continue
            self._running += 1
            try:
                self._later.extendleft(reversed(await self._run(chunk)))
            except BaseException:
                self._failed = True
                raise
            finally:
                self._running -= 1
                self._wake.set()

    async def _run(self, chunk: _Chunk) -> list[_Chunk]:
        """Evaluate ``chunk``, store what it computed, and return the pieces of its deferred tail."""
        task, size = chunk.task, len(chunk.task.inputs)
        slots = self._found.setdefault(chunk.position, (task.task_id, [None] * size, [None] * size))
        outputs, seconds, spent = await _chunk_outputs(chunk, self._pool)
        slots[1][chunk.start : chunk.start + len(outputs)] = outputs
        slots[2][chunk.start : chunk.start + len(outputs)] = seconds
        self._done += len(outputs)
        self._progress(self._done)
        return _deferred(chunk, len(outputs), spent)

    def computed(self) -> list[Computed]:
        """Every task's outputs and times, in the file's order."""
        joined: list[Computed] = []
        for position in sorted(self._found):
            task_id, outputs, seconds = self._found[position]
            assert all(output is not None for output in outputs), "every input of a task is computed"
            joined.append((task_id, [output for output in outputs if output is not None], seconds))
        return joined


def _first_chunks(tasks: Iterator[HumanEvalPlusTask]) -> Iterator[_Chunk]:
    """Each task's chunks of :data:`CHUNK` inputs, in file order."""
    for position, task in enumerate(tasks):
        for start in range(0, len(task.inputs), CHUNK):
            yield _Chunk(position, task, start, task.expressions(start, start + CHUNK))


def _deferred(chunk: _Chunk, computed: int, spent: float) -> list[_Chunk]:
    """The pieces of the inputs ``chunk`` left (after its first ``computed``): each half of what it computed
    (it stopped at its CPU budget, its parts' budget or a large value), and at the CPU per input it spent,
    about half of :data:`CHUNK_SECONDS`."""
    rest = chunk.expressions[computed:]
    if not rest:
        return []
    by_time = int(CHUNK_SECONDS / 2 / (spent / computed)) if computed and spent > 0 else len(rest)
    size = max(1, min(len(rest), -(-computed // 2), by_time))
    return [
        _Chunk(chunk.position, chunk.task, chunk.start + computed + offset, rest[offset : offset + size])
        for offset in range(0, len(rest), size)
    ]


async def _chunk_outputs(chunk: _Chunk, pool: Sandbox) -> tuple[list[Output], list[float | None], float]:
    """Outputs of the canonical solution on the chunk's inputs (``{"error": ...}`` where it failed), its CPU
    seconds on each (``None`` where it failed), up to the first it deferred, and the CPU the sandbox spent on
    those (calls and packing: what :data:`CHUNK_SECONDS` bounds)."""
    task = chunk.task
    program, entry = task.reference(), task.entry_point
    marker = f"refinelab-large-value-{secrets.token_hex(8)}"
    packable = entry != "find_zero"
    pack = PACK_BYTES if packable else 0
    wrapped = [f"{_TIMED}(lambda: {expr}, {marker!r}, {pack}, {CHUNK_SECONDS})" for expr in chunk.expressions]
    values = await pool.values(program, wrapped, entry_point=entry, setup=_timed_setup(), limits=REFERENCE_LIMITS)
    outputs: list[Output] = []
    seconds: list[float | None] = []
    used = 0.0
    for timed in values:
        if timed == marker + "-later":
            break
        value, spent, cost = timed if isinstance(timed, list) and len(timed) == 3 else (timed, None, 0.0)
        packed = _packed_in_sandbox(value, marker, task.atol)
        outputs.append(packed or _output(value, task.atol, packable=packable))
        seconds.append(float(spent) if isinstance(spent, (int, float)) and not isinstance(value, TestOutcome) else None)
        used += float(cost) if isinstance(cost, (int, float)) and math.isfinite(cost) and cost > 0 else 0.0
    return outputs, seconds, used


def _timed_setup() -> str:
    return (
        _PACKED_SOURCE.format(name=_PACKED, preview=PREVIEW, digits=getattr(sys, "get_int_max_str_digits", int)())
        + _SMALL_SOURCE.format(name=_SMALL, limit=SMALL_ITEMS, packed=_PACKED)
        + _TIMED_SOURCE.format(name=_TIMED, small=_SMALL, parts=CHUNK_PARTS)
    )


def _packed_in_sandbox(value: object, marker: str, atol: float) -> Packed | None:
    """The :class:`Packed` a value packed in the sandbox stands for (see :data:`_PACKED_SOURCE`); ``None`` for
    any other value."""
    if not (isinstance(value, list) and len(value) == 5 and value[0] == marker + "-packed"):
        return None
    _, blob, size, preview, floats = value
    if not (isinstance(blob, str) and isinstance(size, int) and isinstance(preview, str)):
        return None
    tolerance = (atol or DEFAULT_FLOAT_ATOL) if atol or floats else None
    return Packed(base64.b64decode(blob), size, preview, tolerance)


async def calibrate(pool: Sandbox) -> float:
    """CPU seconds of a fixed workload in the sandbox (the fastest of :data:`CALIBRATION_RUNS` runs): how
    fast this machine runs Python now, to scale reference times measured elsewhere."""
    setup = _timed_setup()
    expressions = [f"{_TIMED}(lambda: {_WORKLOAD_CALL}, None)"] * CALIBRATION_RUNS
    values = await pool.values(_WORKLOAD, expressions, setup=setup, limits=REFERENCE_LIMITS)
    times = [v[1] for v in values if isinstance(v, list) and len(v) == 3 and isinstance(v[1], (int, float))]
    if not times:
        raise InfrastructureError(f"the sandbox could not run the calibration workload: {values[0]!r}")
    return max(float(min(times)), 1e-6)


def _output(value: object, atol: float, *, packable: bool) -> Output:
    if isinstance(value, TestOutcome):
        return {"error": value.verdict}
    encoded = encode_expected(value)
    if packable and len(text := json.dumps(encoded)) > PACK_BYTES:
        tolerance = (atol or DEFAULT_FLOAT_ATOL) if atol or holds_float(value) else None
        return Packed.of(encoded, value, text=text, atol=tolerance)
    return {"value": encoded}


def _hidden_tests(
    task: HumanEvalPlusTask, outputs: list[Output], seconds: list[float | None]
) -> tuple[list[Test], int, list[float]]:
    """The task's hidden tests from its outputs, and the reference's time on each; inputs without an
    output are dropped (and counted)."""
    tests: list[Test] = []
    times: list[float] = []
    dropped = 0
    for index, output, spent in zip(range(len(task.inputs)), outputs, seconds):
        if isinstance(output, Packed):  # large: compared (with its tolerance) when needed, see _packed
            tests.append(task.test(index, output, None))
        elif "value" not in output:
            dropped += 1
            continue
        else:
            expected = decode(output["value"])
            exact = task.entry_point != "find_zero" and not (task.atol or holds_float(expected))
            tests.append(task.test(index, expected, None if exact else task.atol or DEFAULT_FLOAT_ATOL))
        times.append(spent or 0.0)
    return tests, dropped, times
