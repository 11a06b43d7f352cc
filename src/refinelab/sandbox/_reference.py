"""Preparing benchmarks whose sources ship no expected outputs: HumanEval+ and MBPP+ (a step before scoring).

evalplus's releases ship inputs, not outputs (``problems`` reads the tasks as data): expected outputs
come from running the canonical solution on every input in the sandbox, once, and are cached (keyed by
the file's hash) so later loads are instant. The canonical solution's CPU time on each input is
measured and cached with them: a test's time limit may follow it (evalplus's rule,
:meth:`Limits.following_reference`). Times measured on one machine are used on another after calibration:
the cache records the CPU time of a fixed workload where the times were taken, and which machine that was
(:attr:`Sandbox.machine`); a load on another machine measures the workload again and scales the times by the
ratio (``reference_time_scale`` in each problem's metadata), a load on the same machine takes them as measured
(scale 1: there the ratio is noise, see ``_machine``). Memory stays bounded: outputs are computed in
chunks whose replies stay small, and large outputs are kept compressed (:class:`~refinelab.sandbox.Packed`),
packed in the sandbox where they were computed, so the host stores what the workers send instead of decoding
megabytes, encoding them again and compressing them (how a chunk runs: ``_outputs.py``).
Floats compare within the record's ``atol`` (default 1e-6), as evalplus does.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import itertools
import json
import operator
import os
import secrets
import shutil
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO, cast

from refinelab._progress import ProgressHook
from refinelab.errors import InfrastructureError, InputError, UserError
from refinelab.problems import (
    BenchmarkFiles,
    FetchOptions,
    HumanEvalPlusTask,
    Problem,
    Test,
    WrittenInputs,
    open_benchmark,
    read_benchmark,
    read_humanevalplus,
    read_mbppplus,
)
from refinelab.problems import benchmark as registered
from refinelab.sandbox._compare import DEFAULT_FLOAT_ATOL, NOT_FLOAT, holds_float
from refinelab.sandbox._loading import Loading
from refinelab.sandbox._outputs import REFERENCE_LIMITS, TIMED, Chunks, Computed, Finished, Output, timed_setup
from refinelab.sandbox._packed import Packed, Shelf
from refinelab.sandbox._protocol import Sandbox
from refinelab.sandbox._worker.codec import decode

CACHE_FORMAT = 6
"""Version of the cache file's layout (part of its name): 3 added the reference's times and the
calibration header; 4 times them on the thread's clock (3's read whole ticks of about 4 ms, most of them
0, and its calibration 8 to 20 ms for the same workload: see ``_outputs._TIMED_SOURCE``); 5 keeps the packed
values' compressed bytes in a file beside it, as they are (4 wrote them in base64 in the JSON: a warm load
read 127 MB of base64 text as JSON, then decoded it, a fifth of the driver's CPU in a warm check); 6 keeps them
there in base64, as the sandbox sends them, so that a cold load puts them there as they come, undecoded, and
every load leaves them there until a comparison needs one (``_packed.Shelf``)."""
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
    reads it. :func:`stream_benchmark` gives each problem as soon as it is loaded.
    """
    async with stream_benchmark(benchmark, path, pool=pool, cache_dir=cache_dir, progress=progress) as loading:
        return await loading.problems()


def stream_benchmark(
    benchmark: str | BenchmarkFiles,
    path: str | Path | None = None,
    *,
    pool: Sandbox,
    cache_dir: Path | None = None,
    progress: ProgressHook | None = None,
) -> Loading:
    """:func:`prepare_benchmark` as it goes: every problem without its hidden tests now, each whole as soon
    as its expected outputs are read or computed (see :class:`Loading`). Call it in a running event loop."""
    if isinstance(benchmark, str):
        options = FetchOptions(cache_dir, os.environ, progress) if cache_dir is not None else None
        benchmark = open_benchmark(benchmark, path, options=options)
    reader = registered(benchmark.benchmark).tasks
    if reader is None:
        return Loading(read_benchmark(benchmark))
    if cache_dir is None:
        raise UserError(f"{benchmark.benchmark} needs a sandbox pool and a cache directory to compute expected outputs")
    return stream_humanevalplus(benchmark.paths[0], pool, cache_dir, progress, reader=reader)


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
    """Every problem of :func:`stream_humanevalplus`, once all are loaded."""
    async with stream_humanevalplus(path, pool, cache_dir, progress, reader=reader) as loading:
        return await loading.problems()


def stream_humanevalplus(
    path: str | Path,
    pool: Sandbox,
    cache_dir: Path,
    progress: ProgressHook | None = None,
    *,
    reader: Reader = read_humanevalplus,
) -> Loading:
    """Load HumanEval+ (or, with ``reader=read_mbppplus``, MBPP+) from an evalplus release file, computing
    expected outputs (and the reference's time on each input) in ``pool`` the first time.

    The outputs are cached in ``cache_dir`` as ``humanevalplus-<file hash>.v6.jsonl`` (``mbppplus-...``), the
    large ones' compressed bytes in a file beside it (:func:`_write_cache`):
    a header line (the calibration, every task without its inputs), then one line per task in the file's order.
    A warm load reads only the release's first record (its kind names the cache) and its bytes' hash: the bare
    problems come from the tasks the header keeps, and each problem from its task and its line (the inputs
    written, the outputs) read one task at a time, so memory holds the problems and little else; each is
    published as soon as it is built (computed: as soon as its last input is in). The reference's times are
    scaled by how fast this machine runs the calibration workload now against when they were measured (see
    the module docstring).
    """
    source = Path(path)
    tasks = reader(source)
    first = next(tasks, None)
    if first is None:
        raise UserError(f"{source}: no {'mbpp' if reader is read_mbppplus else 'humaneval'}-plus problems in the file")
    kind, digest = first.kind, _digest(source)
    cache = cache_dir / f"{kind}-{digest}.v{CACHE_FORMAT}.jsonl"
    header = _read_header(cache)
    whole = header is not None and _blobs_path(cache, header.blobs).is_file()  # a warm load will most likely read it
    light = _light_tasks(header, source) if whole else None
    if light is not None:  # the cache keeps the tasks: the release is not read (but for its first record, above)
        _close(tasks)
        bare, shape = _bare(iter(light))
    else:  # where no whole cache is there, computing needs every input: this reading keeps them (not read again)
        bare, shape = _bare(itertools.chain([first], tasks), whole=not whole)

    async def load(loading: Loading) -> None:
        if await _from_cache(source, cache, Release(reader, shape.tasks), pool, loading.publish):
            if shape.whole is not None:
                shape.whole.clear()  # written meanwhile, by another check
            if light is None:  # a cache from before the tasks were kept (or with them damaged): it keeps them now
                await asyncio.to_thread(_keep_tasks, cache, shape.tasks)
            return
        measured = Measured(await calibrate(pool), pool.machine)

        inputs: dict[str, WrittenInputs] = {}  # the cache keeps them, so a warm load does not write them again

        def finished(
            task: HumanEvalPlusTask, outputs: list[Output], seconds: list[float | None], written: WrittenInputs
        ) -> None:
            inputs[task.task_id] = written
            loading.publish(_problem(task, outputs, seconds, 1.0, written))  # times measured now: scale 1

        shelf = _new_shelf(cache)  # the packed values go there as they come: the cache's file of them
        try:
            tasks = _taking(shape.whole) if shape.whole is not None else reader(source)
            computed = await _compute(tasks, pool, progress or _quiet, finished, shape, shelf.shelf)
            # Off the event loop: encoding the cache takes a while, and the workers are still scoring; the loop
            # keeps feeding them meanwhile (nothing it writes is changed any more).
            every = _every_task(shape, computed)
            write = functools.partial(_write_cache, inputs=inputs, shelf=shelf, tasks=shape.tasks)
            await asyncio.to_thread(write, cache, measured, every)
        except BaseException:
            _blobs_path(cache, shelf.token).unlink(missing_ok=True)  # what is open of it stays readable
            raise
        for old in (f"{kind}-{digest}.json", *(f"{kind}-{digest}.v{n}.jsonl" for n in (2, 3, 4, 5))):
            (cache_dir / old).unlink(missing_ok=True)

    return Loading(bare, load)


@dataclass(frozen=True)
class Shape:
    """What computing a release's outputs needs to know of its tasks before it starts (read with the bare
    problems, so the release is not read again for it)."""

    kind: str | None
    """Which evalplus release it is (its first task's :attr:`~refinelab.problems.HumanEvalPlusTask.kind`); None
    for a release without tasks."""
    sizes: list[tuple[str, int]]
    """Each task's id and number of inputs, in the file's order."""
    error: InputError | None
    """The first record without a whole reference solution: computing stops there before any work."""
    tasks: list[HumanEvalPlusTask]
    """Every task without its inputs (:meth:`~refinelab.problems.HumanEvalPlusTask.without_inputs`): what a warm
    load needs beside the inputs the cache kept written, so it does not read the release again."""
    whole: deque[HumanEvalPlusTask] | None = None
    """Every task whole, where the reading kept them for computing (no whole cache was there): taken from the
    front as computing reaches them (:func:`_taking`), so that the release is read once."""


def _bare(tasks: Iterator[HumanEvalPlusTask], *, whole: bool = False) -> tuple[list[Problem], Shape]:
    """Every task's problem without its hidden tests, and the release's :class:`Shape`, in one reading (with
    ``whole``, the tasks kept whole too)."""
    bare: list[Problem] = []
    sizes: list[tuple[str, int]] = []
    light: list[HumanEvalPlusTask] = []
    kept: deque[HumanEvalPlusTask] | None = deque() if whole else None
    error: InputError | None = None
    kind: str | None = None
    for task in tasks:
        kind = kind or task.kind
        bare.append(task.problem((), 0))
        sizes.append((task.task_id, len(task.inputs)))
        light.append(task.without_inputs())
        if kept is not None:
            kept.append(task)
        try:
            task.reference()
        except InputError as missing:
            error = error or missing
    return bare, Shape(kind, sizes, error, light, kept)


def _taking(whole: deque[HumanEvalPlusTask]) -> Iterator[HumanEvalPlusTask]:
    """The tasks, each let go of as it is given (its chunks keep what they need of it: see ``_first_chunks``)."""
    while whole:
        yield whole.popleft()


def _keep_tasks(cache: Path, tasks: list[HumanEvalPlusTask]) -> None:
    """Put ``tasks`` in ``cache``'s header (as :func:`_write_cache` does), so that later loads need not read the
    release; its lines (copied a block at a time) and values' file stay as they are. Nothing where the cache cannot
    be read or written (a directory shared read-only), or it was written again meanwhile (its header names another
    values' file); a writing that puts its own in place between that check and the renaming loses its place to
    this one, and the next load computes the outputs again (the values' file named is gone)."""
    temporary = cache.with_name(f"{cache.name}.{secrets.token_hex(8)}.tmp")
    try:
        with cache.open("rb") as source:
            first = source.readline()
            header, read = json.loads(first), _header(first.decode("utf-8"))
            if not (isinstance(header, dict) and read is not None and read.tasks is None and tasks):
                return
            with temporary.open("wb") as target:
                target.write(json.dumps(header | _tasks_header(tasks)).encode() + b"\n")
                shutil.copyfileobj(source, target)
        now = _read_header(cache)
        if now is not None and now.blobs == read.blobs:
            temporary.replace(cache)
    except (OSError, ValueError):
        return
    finally:
        temporary.unlink(missing_ok=True)


def _tasks_header(tasks: list[HumanEvalPlusTask]) -> dict[str, object]:
    """What a cache's header says of the release's tasks (:attr:`Header.tasks`); nothing for none."""
    if not tasks:
        return {}
    text = json.dumps([task.light_json() for task in tasks])
    return {"tasks": text, "tasks_sha256": _sha256(text)}


def _read_header(cache: Path) -> Header | None:
    """``cache``'s first line, read; None where there is none, or it does not read as a header."""
    try:
        with cache.open(encoding="utf-8") as handle:
            return _header(handle.readline())
    except (OSError, ValueError):
        return None


def _light_tasks(header: Header | None, source: Path) -> list[HumanEvalPlusTask] | None:
    """Every task of the release at ``source`` as the cache's ``header`` keeps them (without their inputs: see
    :meth:`~refinelab.problems.HumanEvalPlusTask.light_json`); None where it keeps none (a cache from before they
    were kept) or they do not read as tasks."""
    if header is None or header.tasks is None:
        return None
    try:
        found = json.loads(header.tasks)
        tasks = [HumanEvalPlusTask.of_light(data, source) for data in found] if isinstance(found, list) else []
    except (ValueError, RecursionError):
        return None
    return tasks or None


def _close(tasks: Iterator[HumanEvalPlusTask]) -> None:
    """Stop reading a release (its file is closed now, not when the reader is collected)."""
    close = getattr(tasks, "close", None)
    if callable(close):
        close()


def _every_task(shape: Shape, computed: list[Computed]) -> list[Computed]:
    """Every task's entry in the file's order: a task without inputs had nothing computed, and gets an empty
    one (no hidden tests), so the cache holds a line for each task."""
    found = iter(computed)
    return [next(found) if size else (task_id, [], []) for task_id, size in shape.sizes]


def _quiet(what: str, done: int, total: int) -> None:
    """No progress display."""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


@dataclass(frozen=True)
class Release:
    """A release's tasks as a warm load reads them: without their inputs (``light``, read with the bare
    problems), and whole from the file (``reader``) from the first task whose inputs the cache did not keep
    written (a cache from before they were kept)."""

    reader: Reader
    light: list[HumanEvalPlusTask]

    def whole_from(self, source: Path, index: int) -> Iterator[HumanEvalPlusTask]:
        """The tasks from ``index`` on, read whole from ``source``."""
        return itertools.islice(self.reader(source), index, None)


async def _from_cache(
    source: Path, cache: Path, release: Release, pool: Sandbox, publish: Callable[[Problem], None]
) -> bool:
    """Publish each problem with its outputs (and the reference's times, scaled to ``pool``'s machine:
    :func:`_scale`) from the cache, one task at a time, letting the event loop run between them (the pool's
    workers get the first tasks' programs meanwhile); False when the cache is missing, unreadable or not this
    file's (what was published stays: those lines were this file's, and computing gives the same outputs).
    Each task's inputs come written from the cache; the release is read again only from a task whose inputs it
    did not keep."""
    try:
        handle = cache.open(encoding="utf-8")
    except OSError:
        return False
    with handle:
        header = _header(handle.readline())
        shelf = _shelf(cache, header)
        if header is None or shelf is None:
            return False
        _remove_stale(cache, header, time.time())
        return await _published(handle, shelf, source, release, await _scale(header, pool), publish)


async def _scale(header: Header, pool: Sandbox) -> float:
    """What the cached reference times are multiplied by on ``pool``'s machine: 1 on the machine that measured
    them (a calibration run now would differ from theirs by noise alone), else how much longer the
    calibration workload takes there now than it took where they were measured."""
    if header.machine is not None and header.machine == pool.machine:
        return 1.0
    return await calibrate(pool) / header.calibration


async def _published(
    handle: TextIO, shelf: Shelf, source: Path, release: Release, scale: float, publish: Callable[[Problem], None]
) -> bool:
    """:func:`_from_cache`'s work once its files are open: each task's line read and its problem published."""
    whole: Iterator[HumanEvalPlusTask] | None = None
    for index, light in enumerate(release.light):
        task = light if whole is None else next(whole, None)
        entry = _cached_entry(handle.readline())
        cached = await _cached_line(entry, shelf)
        if task is None or cached is None or cached[0] != task.task_id or len(cached[1]) != len(task.inputs):
            return False  # a line with fewer outputs than inputs would drop hidden tests
        written = _cached_inputs(entry, task)
        if written is None and whole is None and task.inputs:  # not kept: the inputs are read and written again
            whole = release.whole_from(source, index)
            task = next(whole, None)
            if task is None or task.task_id != cached[0]:
                return False
        publish(_problem(task, cached[1], cached[2], scale, written))
        await asyncio.sleep(0)
    return not handle.readline()


def _problem(
    task: HumanEvalPlusTask,
    outputs: list[Output],
    seconds: list[float | None],
    scale: float,
    written: WrittenInputs | None = None,
) -> Problem:
    """The task's problem, from its outputs and the reference's times (scaled by ``scale``); ``written``:
    its inputs as computing the outputs wrote them, when they were (not written again)."""
    tests, dropped, measured = _hidden_tests(task, outputs, seconds, written)
    problem = task.problem(tests, dropped)
    metadata = {**problem.metadata, "reference_time_scale": round(scale, 4)}
    return replace(problem, hidden_seconds=tuple(t * scale for t in measured), metadata=metadata)


@dataclass(frozen=True)
class Measured:
    """Where the reference's times were measured, as a cache's header says it."""

    calibration: float
    """CPU seconds the calibration workload took there."""
    machine: str | None
    """That machine's identity (:attr:`Sandbox.machine`); None: several machines (a cluster), or not known (a
    cache from before it was kept: scaled by the calibration wherever it is read)."""


@dataclass(frozen=True)
class Header:
    """A cache's first line."""

    calibration: float
    """CPU seconds the calibration workload took when the reference's times were measured."""
    blobs: str
    """The token that names its packed values' file (:func:`_blobs_path`)."""
    machine: str | None = None
    """Where they were measured (:attr:`Measured.machine`)."""
    tasks: str | None = None
    """Every task as :meth:`~refinelab.problems.HumanEvalPlusTask.light_json` writes it, a JSON array as text,
    where the header's SHA-256 of it matches: a warm load makes the tasks from it instead of reading the
    release (HumanEval+'s 124,000 inputs). None: a cache from before they were kept, or the text is damaged."""


def _header(text: str) -> Header | None:
    """A cache's first line, read; None where it does not read as one."""
    try:
        entry = json.loads(text)
        measured, token, machine = float(entry["calibration_seconds"]), entry["blobs"], entry.get("machine")
        tasks, digest = entry.get("tasks"), entry.get("tasks_sha256")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if not (measured > 0 and isinstance(token, str) and token.isalnum()):
        return None
    kept = tasks if isinstance(tasks, str) and digest == _sha256(tasks) else None
    return Header(measured, token, machine if isinstance(machine, str) else None, kept)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _blobs_path(cache: Path, token: str) -> Path:
    """The file of a cache's packed values: named by a token its header holds (the cache's lines are renamed
    into place after that file is whole, so a cache is read with its own values: another writing's file has
    another name)."""
    return cache.with_name(f"{cache.stem}.{token}.blobs")


def _shelf(cache: Path, header: Header | None) -> Shelf | None:
    """The cache's packed values' file, open (it stays so while a value on it lives); None where the header
    names none or it cannot be opened."""
    if header is None:
        return None
    try:
        return Shelf.open(_blobs_path(cache, header.blobs))
    except OSError:
        return None


@dataclass(frozen=True)
class NewShelf:
    """A cache's new packed values' file, open, and the token that names it (see :func:`_blobs_path`)."""

    shelf: Shelf
    token: str


def _new_shelf(cache: Path) -> NewShelf:
    """A new packed values' file for ``cache``."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(8)
    return NewShelf(Shelf.create(_blobs_path(cache, token)), token)


def _cached_entry(text: str) -> dict[str, object] | None:
    try:
        entry = json.loads(text)
    except ValueError:
        return None
    return entry if isinstance(entry, dict) else None


async def _cached_line(entry: dict[str, object] | None, shelf: Shelf) -> Computed | None:
    """A cache line's task id, outputs and times (None where it does not read as one). The event loop runs
    between one packed value and the next: HumanEval/15's line holds 63 MB of them, read to check, which would
    otherwise hold up every worker that finished meanwhile."""
    outputs, seconds = (entry.get("outputs"), entry.get("seconds")) if entry is not None else (None, None)
    if entry is None or not (isinstance(outputs, list) and isinstance(seconds, list) and len(outputs) == len(seconds)):
        return None
    try:
        found = cast("list[Output]", list(outputs))  # a value the line holds is its dict as it is
        for index in itertools.compress(range(len(found)), map(operator.contains, outputs, itertools.repeat("at"))):
            found[index] = Packed.from_json(cast("dict[str, object]", found[index]), shelf)
            await asyncio.sleep(0)
        return (str(entry["task_id"]), found, [None if t is None else float(t) for t in seconds])
    except (ValueError, KeyError, TypeError):
        return None


def _cached_inputs(entry: dict[str, object] | None, task: HumanEvalPlusTask) -> WrittenInputs | None:
    """The task's inputs as the cache kept them (written when the outputs were computed), where it kept them
    whole for this task; ``None``: they are written again (a cache from before they were kept)."""
    expressions = entry.get("expressions") if entry is not None else None
    arguments = entry.get("arguments") if entry is not None else None
    if not _strings(expressions, len(task.inputs)):
        return None
    if task.json_inputs and not _strings(arguments, len(task.inputs)):
        return None
    kept = arguments if task.json_inputs else None
    return WrittenInputs(cast("list[str]", expressions), cast("list[str] | None", kept))


def _strings(value: object, count: int) -> bool:
    """Whether ``value`` is a list of ``count`` non-empty strings."""
    return isinstance(value, list) and len(value) == count and set(map(type, value)) <= {str} and "" not in value


def _write_cache(
    cache: Path,
    measured: Measured,
    computed: list[Computed],
    inputs: dict[str, WrittenInputs] | None = None,
    shelf: NewShelf | None = None,
    tasks: list[HumanEvalPlusTask] | None = None,
) -> None:
    """The cache: where the times were ``measured`` (the calibration, the machine) and every task without its
    inputs (``tasks``, as :class:`Header` keeps them), then each task's outputs and times, and its inputs as they
    were written (``inputs``; a warm load takes them from here instead of writing 124,000 again). Its packed
    values go to ``shelf`` (a new one where none is given), where those computed in the sandbox already are."""
    shelf = shelf or _new_shelf(cache)
    token = shelf.token
    temporary = cache.with_name(f"{cache.name}.{token}.tmp")
    with temporary.open("w", encoding="utf-8") as handle:
        header = {"format": CACHE_FORMAT, "calibration_seconds": measured.calibration, "blobs": token}
        header["machine"] = measured.machine
        header |= _tasks_header(tasks or [])
        handle.write(json.dumps(header) + "\n")
        for task_id, items, seconds in computed:
            line: dict[str, object] = {"task_id": task_id, "outputs": [_to_json(item, shelf.shelf) for item in items]}
            line["seconds"] = seconds
            line |= _inputs_json((inputs or {}).get(task_id))
            handle.write(json.dumps(line) + "\n")
    temporary.replace(cache)  # atomic: a half-written cache is never read, and names its values' file
    _remove_unnamed_blobs(cache)


def _remove_unnamed_blobs(cache: Path) -> None:
    """Remove the values' files the cache does not name: earlier writings', or one that stopped before its
    cache was whole. The name is read from the cache as it is now: a check writing the same cache beside
    this one may have put its own in place since (at worst, one such check's values are removed while it
    writes them, and the next load computes the outputs again)."""
    try:
        with cache.open(encoding="utf-8") as handle:
            header = _header(handle.readline())
    except OSError:
        return
    named = None if header is None else _blobs_path(cache, header.blobs)
    for other in cache.parent.glob(f"{cache.stem}.*.blobs"):
        if other != named:
            other.unlink(missing_ok=True)


STALE_SECONDS = 600.0
"""Seconds after which a cache writing's temporary lines or values' file, unchanged since and not the cache's
own, is one a killed check left: a writing puts HumanEval+'s whole cache (120 MB) in place in seconds."""


def _remove_stale(cache: Path, header: Header, now: float) -> None:
    """Remove what a killed cache writing left beside ``cache`` (its temporary lines and its values' file, 25
    and 95 MB for HumanEval+), once unchanged for :data:`STALE_SECONDS`: a writing still going on, here or on
    another machine sharing the directory, changed its files more recently than that."""
    own = _blobs_path(cache, header.blobs)
    for other in (*cache.parent.glob(f"{cache.name}.*.tmp"), *cache.parent.glob(f"{cache.stem}.*.blobs")):
        try:
            if other != own and now - other.stat().st_mtime > STALE_SECONDS:
                other.unlink()
        except OSError:  # removed meanwhile, or not ours to remove: left as it is
            continue


def _inputs_json(written: WrittenInputs | None) -> dict[str, object]:
    if written is None or not written.expressions:
        return {}
    kept: dict[str, object] = {"expressions": written.expressions}
    return kept | ({"arguments": written.arguments} if written.arguments is not None else {})


def _to_json(item: Output, shelf: Shelf) -> dict[str, object]:
    """An output as its cache line holds it: a packed value's bytes are on ``shelf``, the line says where."""
    return item.to_json(shelf) if isinstance(item, Packed) else item


async def _compute(
    tasks: Iterator[HumanEvalPlusTask],
    pool: Sandbox,
    progress: ProgressHook,
    finished: Finished,
    shape: Shape,
    shelf: Shelf | None = None,
) -> list[Computed]:
    """Every task's outputs and times, in the file's order (see :class:`~refinelab.sandbox._outputs.Chunks`),
    each task given to ``finished`` as soon as its outputs are in (a task without inputs as it is reached)."""
    if shape.error is not None:  # every record checked before any work: a missing solution is an error now
        raise shape.error
    total = sum(size for _, size in shape.sizes)
    count = lambda done: progress("computing expected outputs", done, total)  # noqa: E731
    chunks = Chunks(tasks, pool, count, finished, shelf)
    progress("computing expected outputs", 0, total)
    # Two chunks per worker: while the host decodes and packs one chunk's values, the worker runs another's.
    loops = [asyncio.ensure_future(chunks.work()) for _ in range(2 * pool.size)]
    try:
        await asyncio.gather(*loops)
    finally:  # one failed: the others stop now, not after the pool has closed
        for loop in loops:
            loop.cancel()
    return chunks.computed()


async def calibrate(pool: Sandbox) -> float:
    """CPU seconds of a fixed workload in the sandbox (the fastest of :data:`CALIBRATION_RUNS` runs): how
    fast this machine runs Python now, to scale reference times measured elsewhere."""
    setup = timed_setup()
    expressions = [f"{TIMED}(lambda: {_WORKLOAD_CALL}, None)"] * CALIBRATION_RUNS
    values = await pool.values(_WORKLOAD, expressions, setup=setup, limits=REFERENCE_LIMITS)
    times = [v[1] for v in values if isinstance(v, list) and len(v) == 4 and isinstance(v[1], (int, float))]
    if not times:
        raise InfrastructureError(f"the sandbox could not run the calibration workload: {values[0]!r}")
    return max(float(min(times)), 1e-6)


_VALUE_OF = operator.itemgetter("value")


def _plain_values(outputs: list[Output]) -> list[object] | None:
    """Each output's value, where every output is a value (none failed, none packed) of a type in
    :data:`~refinelab.sandbox._compare.NOT_FLOAT`; else ``None``."""
    try:
        values: list[object] = list(map(_VALUE_OF, cast("list[dict[str, object]]", outputs)))
    except (KeyError, TypeError):  # an output that failed (no value), or a packed one
        return None
    return values if set(map(type, values)) <= NOT_FLOAT else None


def _hidden_tests(
    task: HumanEvalPlusTask, outputs: list[Output], seconds: list[float | None], written: WrittenInputs | None = None
) -> tuple[list[Test], int, list[float]]:
    """The task's hidden tests from its outputs, and the reference's time on each; inputs without an
    output are dropped (and counted)."""
    exact = task.entry_point != "find_zero" and not task.atol  # else every value gets a tolerance
    atol = task.atol or DEFAULT_FLOAT_ATOL
    count = min(len(task.inputs), len(outputs), len(seconds))
    plain = _plain_values(outputs[:count])
    if plain is not None:  # most tasks (90 of HumanEval+'s 164): every value a scalar, read at C speed
        times = [spent or 0.0 for spent in seconds[:count]]
        return task.tests(range(count), plain, [None if exact else atol] * count, written), 0, times
    indices: list[int] = []
    expected: list[object] = []
    tolerances: list[float | None] = []
    times = []
    for index, output, spent in zip(range(len(task.inputs)), outputs, seconds):
        if isinstance(output, Packed):  # large: compared (with its tolerance) when needed, see _packed
            value: object = output
            tolerance = None
        elif "value" not in output:
            continue
        elif type(value := output["value"]) in NOT_FLOAT:  # most values: themselves, and no float in them
            tolerance = None if exact else atol
        else:
            value = decode(value)
            tolerance = None if exact and not holds_float(value) else atol
        indices.append(index)
        expected.append(value)
        tolerances.append(tolerance)
        times.append(spent or 0.0)
    dropped = min(len(task.inputs), len(outputs), len(seconds)) - len(indices)
    return task.tests(indices, expected, tolerances, written), dropped, times
