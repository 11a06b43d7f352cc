"""HumanEval+ (evalplus release file), as data: its tasks, and the problem built from a task's outputs.

The release ships inputs, not outputs. The expected outputs come from running each task's canonical
solution on every input, which needs the sandbox: that preparation step is
:func:`refinelab.sandbox.prepare_benchmark`, which computes (and caches) them and hands them back to
:meth:`HumanEvalPlusTask.test` and :meth:`HumanEvalPlusTask.problem`. Comparison follows evalplus:
exact, except float results (a tolerance), and ``find_zero`` (HumanEval/32), whose answer is checked
by evaluating the polynomial.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from refinelab._location import Location
from refinelab.problems._asserts import tests_from_statements
from refinelab.problems._humaneval import docstring_tests
from refinelab.problems._io import field as required
from refinelab.problems._io import optional, read_jsonl
from refinelab.problems._literal import call_source, call_source_of_json, to_source
from refinelab.problems._model import AssertTest, CallTest, Problem, Test


@dataclass(frozen=True)
class WrittenInputs:
    """A task's inputs written out, in order (:meth:`HumanEvalPlusTask.written`)."""

    expressions: list[str]
    """Each as ``candidate(...)`` source."""
    arguments: list[str] | None
    """Each as a JSON array; None where JSON does not give the inputs exactly (see ``json_inputs``)."""


@dataclass(frozen=True)
class HumanEvalPlusTask:
    """One record of an evalplus release file: a HumanEval problem with many more inputs."""

    task_id: str
    """``HumanEval/N``."""
    entry_point: str
    """The function the inputs are passed to."""
    inputs: tuple[list[object], ...]
    """Argument lists, the base inputs first."""
    atol: float
    """The record's float tolerance (0: none given)."""
    record: dict[str, object] = field(repr=False, compare=False)
    """The record as read (prompt, canonical solution, ...)."""
    where: Location = field(repr=False, compare=False)
    """File and line, for error messages."""
    kind: Literal["humanevalplus", "mbppplus"] = "humanevalplus"
    """Which evalplus release the task is from (MBPP+ prompts are a docstring with one example assert)."""
    json_inputs: bool = True
    """The inputs are as JSON gives them (False where MBPP+ restores tuples, sets or complex numbers):
    only then may a test carry its arguments as JSON (:attr:`~refinelab.problems.CallTest.args`)."""

    @classmethod
    def of(cls, record: dict[str, object], where: Location) -> HumanEvalPlusTask:
        """A task from a record, or an :class:`InputError` naming the file, line and field."""
        inputs = required(record, "base_input", list, where) + optional(record, "plus_input", list, where, [])
        if not set(map(type, inputs)) <= {list} and not all(isinstance(value, list) for value in inputs):
            raise where.error("plus_input", "each input must be a list of arguments")  # checked at C speed first
        return cls(
            task_id=required(record, "task_id", str, where),
            entry_point=required(record, "entry_point", str, where),
            inputs=tuple(inputs),
            atol=float(optional(record, "atol", float, where, 0.0)),
            record=record,
            where=where,
        )

    def reference(self) -> str:
        """The whole canonical program (prompt and solution); an :class:`InputError` if it is missing."""
        for name in ("task_id", "prompt", "canonical_solution", "entry_point"):
            required(self.record, name, str, self.where)
        return str(self.record["prompt"]) + str(self.record["canonical_solution"])

    def expressions(self, start: int = 0, stop: int | None = None) -> list[str]:
        """``candidate(...)`` for the inputs from ``start`` to ``stop`` (all of them by default), in order."""
        return [call_source(args) for args in self.inputs[start:stop]]

    def written(self, dumps: Callable[[object], str] = json.dumps) -> WrittenInputs:
        """Every input written out, once: as :meth:`expressions` and :meth:`arguments` write them (each
        expression from its JSON where JSON gives the inputs: see :func:`call_source_of_json`); ``dumps``:
        ``json.dumps`` or an encoder that writes what it writes (the sandbox's, built once, writes HumanEval+'s
        124,253 inputs in half the time)."""
        if not self.json_inputs:
            return WrittenInputs(self.expressions(), None)
        arguments = list(map(dumps, self.inputs))
        return WrittenInputs(list(map(call_source_of_json, self.inputs, arguments)), arguments)

    def without_inputs(self) -> HumanEvalPlusTask:
        """The task as a load that has its inputs written out already (:class:`WrittenInputs`) needs it: as many
        inputs, each left out, and of the record what :meth:`problem` and :meth:`reference` read. The inputs are
        most of a release's memory and of the time reading it takes (HumanEval+: 124,000 of them). Those of
        ``find_zero`` are kept: its tests write the polynomial from them. :meth:`test` refuses an input left
        out unless given ``written``."""
        kept = self.inputs if self.entry_point == "find_zero" else (_LEFT_OUT,) * len(self.inputs)
        record = {key: self.record[key] for key in _KEPT if key in self.record}
        return replace(self, inputs=kept, record=record)

    def light_json(self) -> dict[str, object]:
        """The task as :meth:`without_inputs` leaves it, as JSON data: what a cache of its outputs keeps so that
        a later load makes the task without reading the release again (:meth:`of_light`)."""
        light = self.without_inputs()
        data: dict[str, object] = {"record": light.record, "inputs": len(light.inputs), "atol": self.atol}
        data |= {"kind": self.kind, "json_inputs": self.json_inputs, "line": self.where.line}
        if self.entry_point == "find_zero":  # its polynomials: its tests are written from them
            data["inputs"] = list(light.inputs)
        return data

    @classmethod
    def of_light(cls, data: object, source: Path) -> HumanEvalPlusTask:
        """The task :meth:`light_json` wrote, from the release at ``source``; a ``ValueError`` where ``data`` is
        not what it writes."""
        if not isinstance(data, dict):
            raise ValueError(f"not a task: {type(data).__name__}")
        record, inputs, atol = data.get("record"), data.get("inputs"), data.get("atol")
        kind, json_inputs, line = data.get("kind"), data.get("json_inputs"), data.get("line")
        if not (isinstance(record, dict) and set(record) <= set(_KEPT) and set(map(type, record.values())) <= {str}):
            raise ValueError("a task's record is not its id, prompt, solution and entry point")
        task_id, entry_point = record.get("task_id"), record.get("entry_point")
        if not (isinstance(task_id, str) and isinstance(entry_point, str)):
            raise ValueError("a task without its id or entry point")
        if kind not in ("humanevalplus", "mbppplus") or type(json_inputs) is not bool or type(atol) is not float:
            raise ValueError(f"{task_id}: not a task's kind, inputs and tolerance")
        if not (line is None or type(line) is int):
            raise ValueError(f"{task_id}: not a line: {line!r}")
        if entry_point == "find_zero" and isinstance(inputs, list) and all(isinstance(i, list) for i in inputs):
            kept: tuple[list[object], ...] = tuple(inputs)
        elif type(inputs) is int and inputs >= 0 and entry_point != "find_zero":
            kept = (_LEFT_OUT,) * inputs
        else:
            raise ValueError(f"{task_id}: not its inputs: {type(inputs).__name__}")
        release: Literal["humanevalplus", "mbppplus"] = "mbppplus" if kind == "mbppplus" else "humanevalplus"
        where = Location(source, line)
        return cls(task_id, entry_point, kept, atol, dict(record), where, kind=release, json_inputs=json_inputs)

    def test(
        self, index: int, expected: object, tolerance: float | None, *, written: WrittenInputs | None = None
    ) -> Test:
        """The hidden test of input ``index``, given its expected output and float tolerance; ``written``: the
        inputs as :meth:`written` writes them, when they already were (not written again).

        ``find_zero`` answers any zero of the polynomial, so its test evaluates the polynomial at the
        answer (within ``tolerance``) instead of comparing with the reference's zero.
        """
        args = self.inputs[index]
        if written is None:
            if args is _LEFT_OUT:
                raise ValueError(f"{self.task_id}: input {index} was left out (without_inputs) and is not written")
            expression, arguments = call_source(args), self.arguments(index)
        else:
            expression = written.expressions[index]
            arguments = written.arguments[index] if written.arguments is not None else None
        if self.entry_point == "find_zero":
            return AssertTest(f"assert abs(poly({to_source(args[0])}, {expression})) <= {tolerance}")
        return CallTest(expression, expected, atol=tolerance, args=arguments)

    def tests(
        self,
        indices: Sequence[int],
        expected: Sequence[object],
        tolerances: Sequence[float | None],
        written: WrittenInputs | None = None,
    ) -> list[Test]:
        """:meth:`test` of many inputs at once (a release holds 124,000): input ``indices[i]``'s test expects
        ``expected[i]`` within ``tolerances[i]``. With its inputs ``written`` (a warm load's), each test is
        made from them directly, without a call of :meth:`test` each."""
        if written is None or self.entry_point == "find_zero":
            triples = zip(indices, expected, tolerances)
            return [self.test(index, value, atol, written=written) for index, value, atol in triples]
        expressions, arguments = written.expressions, written.arguments
        if arguments is None:
            return [CallTest(expressions[i], value, atol) for i, value, atol in zip(indices, expected, tolerances)]
        return [
            CallTest(expressions[i], value, atol, arguments[i]) for i, value, atol in zip(indices, expected, tolerances)
        ]

    def arguments(self, index: int) -> str | None:
        """Input ``index`` as a JSON array, when JSON gives it exactly (:attr:`json_inputs`), else None."""
        return json.dumps(self.inputs[index]) if self.json_inputs else None

    def problem(self, hidden: Sequence[Test], dropped: int) -> Problem:
        """The problem, with its hidden tests (``dropped``: inputs the reference gave no output for)."""
        prompt = required(self.record, "prompt", str, self.where)
        metadata: dict[str, object] = {"source": self.kind, "inputs_without_reference_output": dropped}
        if self.kind == "mbppplus":
            number = self.task_id.rsplit("/", 1)[-1]
            metadata["aliases"] = [number, f"MBPP/{number}"]
            visible = _asserts_in(prompt)
        else:
            visible = docstring_tests(prompt, self.entry_point, self.task_id)
        return Problem(
            id=self.task_id,
            prompt=prompt,
            kind="function",
            visible_tests=tuple(visible),
            hidden_tests=tuple(hidden),
            entry_point=self.entry_point,
            starter_code=prompt,
            reference=prompt + optional(self.record, "canonical_solution", str, self.where, ""),
            completion_prefix=prompt,
            metadata=metadata,
        )


_LEFT_OUT: list[object] = []
"""The input of a task :meth:`HumanEvalPlusTask.without_inputs` left out (found by identity)."""
_KEPT = ("task_id", "prompt", "canonical_solution", "entry_point")
"""What a task without its inputs keeps of its record."""


def _asserts_in(prompt: str) -> list[Test]:
    """The example asserts an MBPP+ prompt shows (one per line)."""
    lines = [line.strip() for line in prompt.splitlines() if line.strip().startswith("assert ")]
    return [test for line in lines for test in tests_from_statements(line) or []]


def read_humanevalplus(path: str | Path) -> Iterator[HumanEvalPlusTask]:
    """The tasks of an evalplus release file (``.jsonl`` or ``.jsonl.gz``), read one at a time."""
    source = Path(path)
    for line, record in read_jsonl(source):
        yield HumanEvalPlusTask.of(record, Location(source, line))
