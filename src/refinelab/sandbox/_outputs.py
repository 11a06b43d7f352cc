"""Running a trusted reference solution on a task's inputs in the sandbox: each input's value and CPU time.

A task's inputs go in chunks (:data:`CHUNK`), each a sandbox job, taken by concurrent loops across tasks
(:class:`Chunks`). Beside the reference runs trusted code of ours (``_TIMED_SOURCE``): it times each call,
checks its value's size, packs a large value where it was computed, and stops a chunk once it has spent
:data:`CHUNK_SECONDS` of CPU, holds :data:`CHUNK_PARTS` parts of values, or carries one large value; the
host cuts what the chunk left into pieces (:func:`deferred`) that go ahead of fresh chunks, side by side.
So quick tasks take one job each (a job costs about 11 ms before its first input), slow ones spread over
every worker, and no reply carries more than a few MiB.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import operator
import secrets
import sys
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import cast

from refinelab.errors import InfrastructureError
from refinelab.problems import HumanEvalPlusTask, WrittenInputs
from refinelab.sandbox._compare import DEFAULT_FLOAT_ATOL, holds_float
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._outcome import TestOutcome
from refinelab.sandbox._packed import NANS, PREVIEW, Packed, Shelf, from_base64, is_encoding_digest, read_digest
from refinelab.sandbox._protocol import Sandbox
from refinelab.sandbox._worker.codec import JSON_TEXT, decode, encode_expected, holds_opaque

Output = Packed | dict[str, object]
"""A computed output: ``{"value": encoded}``, ``{"error": verdict}``, or a large value kept :class:`Packed`."""
REFERENCE_LIMITS = Limits(cpu_seconds=20.0, after_timeout="continue")
"""Generous limits for the canonical solutions; after an input that timed out, the chunk goes on with the
next in a fresh process (the input is dropped, as evalplus drops it; the others are not)."""
CHUNK = 1024
"""Inputs of a task a sandbox job evaluates at most while computing outputs (:data:`CHUNK_SECONDS` stops it
sooner)."""
PIECE = 64
"""Inputs of a deferred tail's piece at least, unless the CPU its inputs took says fewer."""
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
    {name}.short = False
    parts, stack = 0, [value] if limit is not None else []
    while stack:
        item = stack.pop()
        if isinstance(item, (str, bytes)):
            parts += 1 + len(item) // 8
        elif isinstance(item, (list, tuple, set, frozenset, dict)):
            parts += 1 + len(item)
            if parts <= limit:
                stack.extend(item.items() if isinstance(item, dict) else item)
        elif isinstance(item, int):
            parts += 1 + item.bit_length() // 64
        else:
            parts += 1
        if parts > limit:
            {name}.parts = parts
            return marker
    {name}.parts = parts
    {packed}.short = False
    try:
        packed = {packed}(value, marker, pack) if pack else None
    except Exception:  # memory, most likely: the host packs it, as before
        packed = None
    {name}.short = packed is None and {packed}.short is True
    return value if packed is None else packed
"""
"""Defined beside the reference solution: ``marker`` when the value is large (more than ``limit`` parts:
counting them costs at most the limit, not the value's size); else the value, or, when its JSON is longer
than ``pack`` characters, the value packed where it was computed (:data:`_PACKED_SOURCE`). The parts it
counted are left in its ``parts``; in its ``short``, whether the value's JSON was written here and is at most
``pack`` characters, none of it a type the codec does not carry (the host then stores it as it comes, without
writing it again: :func:`_chunk_outputs`)."""
_PACKED = "_refinelab_packed"
_PACKED_SOURCE = """
def {name}(value, marker, pack):
    import base64, hashlib, json, sys, zlib
    codec = sys.modules.get("_worker.codec") or sys.modules.get("refinelab.sandbox._worker.codec")
    if codec is None:
        return None
    text = json.dumps(codec.encode(value))
    if '{{"O": ' in text:
        return None
    if len(text) <= pack:
        {name}.short = True
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
    data = text.encode()
    blob = base64.b64encode(zlib.compress(data, 1)).decode()
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest() if type(value) is str else None
    encoding = "" if any(nan in text for nan in {nans!r}) else hashlib.sha256(data).hexdigest()
    return [marker + "-packed", blob, len(text), preview, floats(value), digest, encoding]
"""
"""The value's JSON as the worker encodes it, compressed in the sandbox, with its length, a preview,
whether it holds floats, for a string its digest, and the digest of that JSON ("" where it holds a NaN): what
:class:`Packed` keeps, so that a first comparison need not undo the compression. The host stores it as it
comes instead of decoding megabytes, encoding them again and compressing them (the reference solution is
trusted code, so the worker's codec can be called beside it: in a worker it is ``_worker.codec``, in a sandbox
that runs programs in this process, such as the tests' fake, ``refinelab.sandbox._worker.codec``). ``None`` for a
value the host cannot store (``O``: a type the codec does not carry), one small enough to keep as it is,
or where neither is loaded (the host then packs it, as before)."""
PACK_BYTES = 4 * 1024
"""Encoded outputs larger than this are kept compressed (see ``_packed``)."""

TIMED = "_refinelab_timed"
_TIMED_SOURCE = """
_refinelab_chunk = [0.0, 0]
def {name}(thunk, marker, pack=0, budget=None):
    import time
    if budget is not None and (_refinelab_chunk[0] > budget or _refinelab_chunk[1] > {parts}):
        return marker + "-later"
    start = time.thread_time()
    try:
        value = thunk()
        spent = time.thread_time() - start
        small = {small}(value, marker, pack)
        if small is marker and budget is not None:  # large: packed here, and the chunk's later inputs deferred
            small = {small}(value, marker, pack, None)
            _refinelab_chunk[1] = float("inf")
        _refinelab_chunk[1] += {small}.parts
    finally:  # an input that raised spent its time too
        cost = time.thread_time() - start
        _refinelab_chunk[0] += cost
    return [small, spent, cost, {small}.short]
"""
"""Runs one input's call and measures its CPU time (in the sandbox, on trusted code) on the thread's clock:
the process's clock moves in whole ticks (4 ms here) while a process CPU limit is set, as in every child
(the kernel then reads it from a total it updates at each tick), so most calls read 0 and the calibration
workload 8, 12 or 20 ms. The value is checked for size as ``_SMALL_SOURCE`` says. With a ``budget`` (a
chunk's), once the calls so far (checking and packing their values included) have spent more CPU seconds
than that in this child, or their values hold more than :data:`CHUNK_PARTS` parts, each later call is
``marker + "-later"``, not run: deferred to another job. A large value is packed where it was computed (no
reply carries two), and the chunk's later inputs are deferred."""

_TIMED_CANDIDATE = """
_refinelab_reference = candidate
def candidate(*args):
    return {timed}(lambda: _refinelab_reference(*args), {marker!r}, {pack}, {budget})
"""
"""Makes every call of ``candidate`` a timed one (see ``_TIMED_SOURCE``), so that an input's arguments can
be read, not compiled (see :attr:`~refinelab.problems.CallTest.args`); ``candidate(...)`` with the input's
literals, which a sandbox that does not read arguments evaluates, goes the same way."""

Computed = tuple[str, list[Output], list["float | None"]]
"""A task's id, its outputs and the reference's CPU seconds on each input."""
Finished = Callable[[HumanEvalPlusTask, list[Output], list["float | None"], WrittenInputs], None]
"""Told of a task whose every output is in: the task, its outputs, the reference's CPU seconds on each input,
and its inputs as the chunks wrote them."""


@dataclass(frozen=True)
class Chunk:
    """Inputs of one task evaluated in one sandbox job."""

    position: int
    """The task's position in the file."""
    task: HumanEvalPlusTask
    start: int
    """The first input's index."""
    expressions: list[str]
    """The inputs as source (``candidate(...)``), written once: a deferred tail is sent again as it is."""
    arguments: list[str] | None = None
    """The inputs as JSON (:attr:`~refinelab.problems.CallTest.args`), written once with ``expressions``;
    None where the task's inputs are not as JSON gives them, or (a chunk made by hand) not written yet."""


class Chunks:
    """The work of computing outputs, shared by concurrent :meth:`work` loops, each taking the next chunk.

    A task's inputs go in chunks of up to :data:`CHUNK`, across tasks, each taken by the first free loop,
    so a task with many inputs spreads over every worker (records are read as their first chunk is taken).
    A chunk stops taking inputs after :data:`CHUNK_SECONDS` of CPU in the sandbox; its deferred tail is cut
    by the time its inputs took into pieces of half that and queued ahead of fresh chunks, side by side.
    ``finished`` is given each task, with what was computed for it and its inputs as the chunks wrote them
    (its tests need them too), as soon as its last input is in (its problem can be scored while other
    tasks' outputs are still being computed).
    """

    def __init__(
        self,
        tasks: Iterator[HumanEvalPlusTask],
        pool: Sandbox,
        progress: Callable[[int], None],
        finished: Finished | None = None,
        shelf: Shelf | None = None,
    ) -> None:
        self._fresh = _first_chunks(tasks, self._empty)
        self._later: deque[Chunk] = deque()
        self._pool, self._progress, self._finished = pool, progress, finished
        self._shelf = shelf
        """Where values packed in the sandbox go as they come (the cache's file of them); None: held decoded."""
        self._found: dict[int, tuple[str, list[Output | None], list[float | None]]] = {}
        self._left: dict[int, int] = {}
        """Each task's inputs not computed yet."""
        self._written: dict[int, WrittenInputs] = {}
        """Each task's inputs as its chunks wrote them, kept until the task is finished."""
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

    async def _run(self, chunk: Chunk) -> list[Chunk]:
        """Evaluate ``chunk``, store what it computed, and return the pieces of its deferred tail."""
        task, size = chunk.task, len(chunk.task.inputs)
        slots = self._found.setdefault(chunk.position, (task.task_id, [None] * size, [None] * size))
        self._left.setdefault(chunk.position, size)
        outputs, seconds, per_input = await _chunk_outputs(chunk, self._pool, self._shelf)
        if not outputs:  # a job's first input always runs: a reply without it would come back forever
            raise InfrastructureError(f"the sandbox computed none of {task.task_id}'s inputs from {chunk.start}")
        slots[1][chunk.start : chunk.start + len(outputs)] = outputs
        slots[2][chunk.start : chunk.start + len(outputs)] = seconds
        self._keep_written(chunk, len(outputs))
        self._done += len(outputs)
        self._left[chunk.position] -= len(outputs)
        self._progress(self._done)
        if self._left[chunk.position] == 0 and self._finished is not None:
            _, done, times = _joined(*slots)
            self._finished(task, done, times, self._written.pop(chunk.position))
        return deferred(chunk, len(outputs), per_input)

    def _empty(self, task: HumanEvalPlusTask) -> None:
        """A task without inputs is finished as soon as it is reached: it has no hidden tests."""
        if self._finished is not None:
            self._finished(task, [], [], WrittenInputs([], None))

    def _keep_written(self, chunk: Chunk, computed: int) -> None:
        """Keep how ``chunk`` wrote its first ``computed`` inputs (only when someone is told of finished tasks)."""
        if self._finished is None:
            return
        size, stop = len(chunk.task.inputs), chunk.start + computed
        written = self._written.get(chunk.position)
        if written is None:
            written = WrittenInputs([""] * size, [""] * size if chunk.arguments is not None else None)
            self._written[chunk.position] = written
        written.expressions[chunk.start : stop] = chunk.expressions[:computed]
        if written.arguments is not None and chunk.arguments is not None:
            written.arguments[chunk.start : stop] = chunk.arguments[:computed]

    def computed(self) -> list[Computed]:
        """Every task's outputs and times, in the file's order."""
        return [_joined(*self._found[position]) for position in sorted(self._found)]


def _joined(task_id: str, outputs: list[Output | None], seconds: list[float | None]) -> Computed:
    """A task's outputs and times, once every input's output is in."""
    done = [output for output in outputs if output is not None]
    if len(done) != len(outputs):
        raise InfrastructureError(f"{task_id}: {len(outputs) - len(done)} inputs were never computed")
    return task_id, done, seconds


def _first_chunks(tasks: Iterator[HumanEvalPlusTask], empty: Callable[[HumanEvalPlusTask], None]) -> Iterator[Chunk]:
    """Each task's chunks of :data:`CHUNK` inputs, in file order (each input written as source and as JSON
    once, as its task's first chunk is taken, and the task's inputs then let go of: its chunks carry them
    written); a task without inputs is given to ``empty`` as it is reached."""
    for position, whole in enumerate(tasks):
        if not whole.inputs:
            empty(whole)
            continue
        written = whole.written(JSON_TEXT)
        task = whole.without_inputs() if written.arguments is not None else whole
        del whole
        for start in range(0, len(task.inputs), CHUNK):
            arguments = written.arguments[start : start + CHUNK] if written.arguments is not None else None
            yield Chunk(position, task, start, written.expressions[start : start + CHUNK], arguments)


def deferred(chunk: Chunk, computed: int, per_input: float) -> list[Chunk]:
    """The pieces of the inputs ``chunk`` left (after its first ``computed``, which took ``per_input`` CPU
    seconds each): at that, about half of :data:`CHUNK_SECONDS` each; and (where it stopped at its parts'
    budget or a large value) half of what it computed, but at least :data:`PIECE` inputs."""
    rest = chunk.expressions[computed:]
    if not rest:
        return []
    by_time = int(CHUNK_SECONDS / 2 / per_input) if per_input > 0 else len(rest)
    size = max(1, min(len(rest), by_time, max(-(-computed // 2), PIECE)))
    written = chunk.arguments[computed:] if chunk.arguments is not None else None
    return [
        Chunk(
            chunk.position,
            chunk.task,
            chunk.start + computed + offset,
            rest[offset : offset + size],
            written[offset : offset + size] if written is not None else None,
        )
        for offset in range(0, len(rest), size)
    ]


async def _chunk_outputs(chunk: Chunk, pool: Sandbox, shelf: Shelf | None = None) -> Read:
    """Outputs of the canonical solution on the chunk's inputs (``{"error": ...}`` where it failed), its CPU
    seconds on each (``None`` where it failed), up to the first it deferred, and the CPU the sandbox spent on
    each of those that returned (the call and packing its value: what :data:`CHUNK_SECONDS` bounds; one that
    raised counts there too, but its reply has no figure). A value packed in the sandbox goes on ``shelf`` as it
    came, where one is given."""
    task = chunk.task
    program, entry = task.reference(), task.entry_point
    marker = f"refinelab-large-value-{secrets.token_hex(8)}"
    packable = entry != "find_zero"
    pack = PACK_BYTES if packable else 0
    given = range(chunk.start, chunk.start + len(chunk.expressions))
    arguments = chunk.arguments
    if arguments is None and task.json_inputs:  # a chunk made by hand
        arguments = [json.dumps(task.inputs[index]) for index in given]
    setup = timed_setup() + _TIMED_CANDIDATE.format(timed=TIMED, marker=marker, pack=pack, budget=CHUNK_SECONDS)
    values = await pool.values(
        program,
        chunk.expressions,
        entry_point=entry,
        setup=setup,
        limits=REFERENCE_LIMITS,
        arguments=arguments,
        encoded=True,
    )
    later = marker + "-later"
    rows = values[: values.index(later)] if later in values else values
    return _rows_read(rows, marker, task.atol, packable, shelf) or _rows_read_one_by_one(
        rows, marker, task.atol, packable, shelf
    )


Read = tuple[list[Output], list["float | None"], float]
"""A chunk's outputs, the reference's CPU seconds on each, and the sandbox's mean CPU seconds an input."""


def _rows_read(rows: list[object], marker: str, atol: float, packable: bool, shelf: Shelf | None) -> Read | None:
    """:func:`_rows_read_one_by_one` at C speed, where every row is ``[value, spent, cost, short]`` with finite
    float times (every row a value, as a chunk's reply has them): a step per value only for those not written
    short in the sandbox (packed there, mostly); ``None`` for rows of any other shape."""
    if not rows or set(map(type, rows)) != {list} or set(map(len, cast("list[list[object]]", rows))) != {4}:
        return None
    found, spent, cost, short = zip(*cast("list[list[object]]", rows))
    if not set(map(type, spent)) | set(map(type, cost)) <= {float}:
        return None
    costs = cast("tuple[float, ...]", cost)
    if not (math.isfinite(total := sum(costs)) and min(costs) >= 0):
        return None
    outputs: list[Output] = [{"value": value} for value in found]
    for index in itertools.compress(range(len(found)), map(operator.is_not, short, itertools.repeat(True))):
        value = found[index]
        outputs[index] = _packed_in_sandbox(value, marker, atol, shelf) or _output(value, atol, packable=packable)
    return outputs, list(cast("tuple[float, ...]", spent)), total / len(costs)


def _rows_read_one_by_one(rows: list[object], marker: str, atol: float, packable: bool, shelf: Shelf | None) -> Read:
    """Each row's output (``{"error": ...}`` where the input failed), the reference's CPU seconds on it
    (``None`` where it failed), and the mean CPU the sandbox spent on those that returned."""
    outputs: list[Output] = []
    seconds: list[float | None] = []
    costs: list[float] = []
    for timed in rows:  # as the worker encoded them: [value, spent, cost, short], each a value it encoded
        value, spent, cost, short = timed if isinstance(timed, list) and len(timed) == 4 else (timed, None, None, 0)
        if short is True:  # its JSON written and measured in the sandbox (``_SMALL_SOURCE``): stored as it came
            outputs.append({"value": value})
        else:
            outputs.append(_packed_in_sandbox(value, marker, atol, shelf) or _output(value, atol, packable=packable))
        seconds.append(float(spent) if isinstance(spent, (int, float)) and not isinstance(value, TestOutcome) else None)
        if isinstance(cost, (int, float)) and math.isfinite(cost) and cost >= 0:
            costs.append(float(cost))
    return outputs, seconds, sum(costs) / len(costs) if costs else 0.0


def timed_setup() -> str:
    return (
        _PACKED_SOURCE.format(
            name=_PACKED, preview=PREVIEW, digits=getattr(sys, "get_int_max_str_digits", int)(), nans=NANS
        )
        + _SMALL_SOURCE.format(name=_SMALL, limit=SMALL_ITEMS, packed=_PACKED)
        + _TIMED_SOURCE.format(name=TIMED, small=_SMALL, parts=CHUNK_PARTS)
    )


def _packed_in_sandbox(value: object, marker: str, atol: float, shelf: Shelf | None = None) -> Packed | None:
    """The :class:`Packed` a value packed in the sandbox stands for (see :data:`_PACKED_SOURCE`), put on ``shelf``
    as it came (base64), where one is given; ``None`` for any other value."""
    if not (isinstance(value, list) and len(value) == 7 and value[0] == marker + "-packed"):
        return None
    _, blob, size, preview, floats, digest, encoding = value
    if not (isinstance(blob, str) and isinstance(size, int) and isinstance(preview, str)):
        return None
    string = read_digest(digest)
    if string is False or not is_encoding_digest(encoding):
        return None
    tolerance = (atol or DEFAULT_FLOAT_ATOL) if atol or floats else None
    if shelf is not None:
        return Packed.shelved(shelf, blob, size, preview, tolerance, string=string, encoding=cast("str", encoding))
    return Packed(from_base64(blob), size, preview, tolerance, string=string, encoding=cast("str", encoding))


def _output(encoded: object, atol: float, *, packable: bool) -> Output:
    """What is stored of a value the reference returned, given as the worker encoded it (``codec.encode``: the
    host's encoding of the value decoded is the same, but for a set's order), or of its failure: the encoding
    as it is, or packed where its JSON is longer than :data:`PACK_BYTES` (a large value the sandbox did not
    pack). A value the codec does not carry raises ``TypeError``, as :func:`encode_expected` does."""
    if isinstance(encoded, TestOutcome):
        return {"error": encoded.verdict}
    if _short(encoded):
        return {"value": encoded}
    if holds_opaque(encoded):
        encode_expected(decode(encoded))  # raises, naming the type
    if packable and len(text := json.dumps(encoded)) > PACK_BYTES:
        value = decode(encoded)
        tolerance = (atol or DEFAULT_FLOAT_ATOL) if atol or holds_float(value) else None
        return Packed.of(encoded, value, text=text, atol=tolerance)
    return {"value": encoded}


_SCALARS = frozenset({int, float, bool, type(None)})


def _short(encoded: object) -> bool:
    """Whether ``encoded``'s JSON is surely within :data:`PACK_BYTES` without writing it: a number (an encoded
    integer is one within 2**53), or a string short enough even if every character took an escape."""
    return type(encoded) in _SCALARS or (type(encoded) is str and 6 * len(encoded) + 2 <= PACK_BYTES)
