"""MBPP+ (evalplus's release file): HumanEval+-style tasks whose inputs need their Python types back.

JSON has no tuples, sets or complex numbers, so the release stores them as lists and strings; evalplus
converts them back for the tasks whose functions expect them before running anything. The same
conversions are applied here, task by task (the table below), so the canonical solution and every
candidate see the inputs evalplus's own harness passes. Expected outputs are computed as for
HumanEval+ (:func:`refinelab.sandbox.prepare_benchmark`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from refinelab._location import Location
from refinelab.problems._humanevalplus import HumanEvalPlusTask
from refinelab.problems._io import read_jsonl

Args = list[object]
Convert = Callable[[Args], Args]


def _tuple(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def _deep_tuple(value: object) -> object:
    return tuple(_deep_tuple(v) for v in value) if isinstance(value, list) else value


def _each_arg_tuple(args: Args) -> Args:
    return [_tuple(a) for a in args]


def _each_arg_items_tuple(args: Args) -> Args:
    return [[_tuple(item) for item in a] if isinstance(a, list) else a for a in args]


def _each_arg_tuple_of_tuples(args: Args) -> Args:
    return [_tuple(item) for item in _each_arg_items_tuple(args)]


def _first_items_tuple(args: Args) -> Args:
    return [*_each_arg_items_tuple(args[:1]), *args[1:]]


def _first_tuple(args: Args) -> Args:
    return [_tuple(args[0]), *args[1:]] if args else args


def _second_tuple(args: Args) -> Args:
    return [args[0], _tuple(args[1]), *args[2:]] if len(args) > 1 else args


def _first_items_tuple_then_tuple(args: Args) -> Args:
    return [_tuple([_tuple(item) for item in args[0]]), *args[1:]] if args and isinstance(args[0], list) else args


def _first_items_sets(args: Args) -> Args:
    # evalplus turns an empty list into {} (an empty dict, not a set): kept, so outputs match its own
    items = args[0] if args and isinstance(args[0], list) else []
    return [[set(item) if isinstance(item, list) and item else {} for item in items], *args[1:]]


def _float_complex(args: Args) -> Args:
    return [float(str(args[0])), complex(str(args[1]))]


def _complex(args: Args) -> Args:
    return [complex(str(args[0]))]


def _dict_values_tuple(args: Args) -> Args:
    first = args[0]
    return [{k: _tuple(v) for k, v in first.items()}, *args[1:]] if isinstance(first, dict) else args


def _all_tuples(args: Args) -> Args:
    return [_deep_tuple(a) for a in args]


_BY_KIND: dict[Convert, tuple[int, ...]] = {
    _each_arg_tuple: (2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616, 630, 726,
                      740, 744, 809),
    _each_arg_items_tuple: (63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780),
    _first_items_tuple: (75, 413, 444, 753),
    _second_tuple: (106, 750),
    _first_items_sets: (115,),
    _float_complex: (124,),
    _first_tuple: (250, 307, 405, 446, 617, 720, 763, 808),
    _each_arg_tuple_of_tuples: (259, 401, 445),
    _first_items_tuple_then_tuple: (278,),
    _dict_values_tuple: (722,),
    _complex: (252,),
    _all_tuples: (580, 615, 791),
}  # fmt: skip
RESTORE: dict[int, Convert] = {number: convert for convert, numbers in _BY_KIND.items() for number in numbers}
"""For each MBPP+ task number whose inputs need Python types back, how to restore one argument list."""


def restored(task: HumanEvalPlusTask) -> HumanEvalPlusTask:
    """``task`` with its inputs converted back to the types its function expects (see the module docstring)."""
    number = task.task_id.rsplit("/", 1)[-1]
    convert = RESTORE.get(int(number)) if number.isdigit() else None
    inputs = task.inputs if convert is None else tuple(convert(list(args)) for args in task.inputs)
    return replace(task, inputs=inputs, kind="mbppplus", json_inputs=convert is None)


def read_mbppplus(path: str | Path) -> Iterator[HumanEvalPlusTask]:
    """The tasks of evalplus's MBPP+ release file (``.jsonl`` or ``.jsonl.gz``), read one at a time."""
    source = Path(path)
    for line, record in read_jsonl(source):
        yield restored(HumanEvalPlusTask.of(record, Location(source, line)))
