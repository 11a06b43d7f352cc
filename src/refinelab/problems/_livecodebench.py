"""LiveCodeBench: JSON Lines with public and (optionally) private tests, in the form of Hugging Face
``livecodebench/code_generation_lite``'s release files (which refinelab downloads, see ``_manifest``)
or with the tests as plain lists.

``stdin`` tests make a stdio problem; ``functional`` tests make a function problem whose entry point is
the starter code's ``Solution.method``, each input line being one JSON argument. Private tests are
hidden; when a record has none, the public tests are used as hidden too and ``metadata`` says so.
Private tests in the official dataset are base64 + zlib + pickle: they are unpickled with an
unpickler that only builds strings, lists and dicts.

LiveCodeBench's own grader runs every program after a block of standard-library imports (both
``from M import *`` and ``import M`` for the modules in ``PRELUDE_MODULES``, ``typing``'s names,
and a recursion limit of 50000), so a LeetCode answer may write ``List[int]`` without importing it.
Every problem carries that block as its ``prelude``: a program LiveCodeBench passes is judged with
the same names available here.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import zlib
from pathlib import Path

from refinelab._files import json_problem
from refinelab._location import Location
from refinelab.problems._io import field, optional, read_records
from refinelab.problems._literal import call_source
from refinelab.problems._model import CallTest, Problem, StdioTest, Test
from refinelab.problems._stdio_sources import entry_point_from_starter

PRELUDE_MODULES = (
    "string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random", "statistics",
    "itertools", "functools", "operator", "io", "sys", "json",
)  # fmt: skip
"""Standard-library modules LiveCodeBench's grader imports before every program, in its order."""

PRELUDE = (
    "".join(f"from {name} import *\n" for name in (*PRELUDE_MODULES, "builtins", "typing"))
    + "".join(f"import {name}\n" for name in PRELUDE_MODULES)
    + "sys.setrecursionlimit(50000)\n"
)
"""The code run before every LiveCodeBench program, as its grader runs it."""


def load_livecodebench(path: str | Path) -> list[Problem]:
    """Load LiveCodeBench problems from a file (one release file, or any file in that form)."""
    source = Path(path)
    return [_problem(record, Location(source, line)) for line, record in read_records(source)]


def _problem(record: dict[str, object], where: Location) -> Problem:
    public = _cases(record.get("public_tests", record.get("public_test_cases")), "public_tests", where)
    private = _cases(record.get("private_tests", record.get("private_test_cases")), "private_tests", where)
    starter = optional(record, "starter_code", str, where, "")
    functional = any(case["testtype"] == "functional" for case in public + private)
    entry = _entry_point(record, starter, where) if functional else None
    convert = (lambda case: _call_test(case, where)) if functional else _stdio_test
    metadata: dict[str, object] = {
        key: record[key]
        for key in ("question_title", "platform", "contest_id", "contest_date", "difficulty")
        if key in record
    }
    metadata.update(source="livecodebench", private_tests=bool(private))
    if not private:
        metadata["note"] = "no private tests in the source: the public tests are used as hidden tests too"
    return Problem(
        id=field(record, "question_id", str, where),
        prompt=field(record, "question_content", str, where),
        kind="function" if functional else "stdio",
        visible_tests=tuple(convert(case) for case in public),
        hidden_tests=tuple(convert(case) for case in (private or public)),
        entry_point=entry,
        starter_code=starter,
        prelude=PRELUDE,
        metadata=metadata,
    )


def _cases(raw: object, name: str, where: Location) -> list[dict[str, str]]:
    if raw is None or raw == "":
        return []
    if isinstance(raw, str):
        raw = _decode_cases(raw, name, where)
    if not isinstance(raw, list):
        raise where.error(name, f"expected a list of tests, got {type(raw).__name__}")
    cases = []
    for case in raw:
        if not isinstance(case, dict) or not all(isinstance(case.get(k), str) for k in ("input", "output")):
            raise where.error(name, "each test needs string 'input' and 'output'")
        kind = case.get("testtype", "stdin")
        if kind not in ("stdin", "functional"):
            raise where.error(name, f"unknown test type {kind!r} (expected stdin or functional)")
        cases.append({"input": case["input"], "output": case["output"], "testtype": str(kind)})
    return cases


def _decode_cases(text: str, name: str, where: Location) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        data = _SafeUnpickler(io.BytesIO(zlib.decompress(base64.b64decode(text)))).load()
        return json.loads(data) if isinstance(data, (str, bytes)) else data
    except Exception as exc:  # noqa: BLE001 - any decoding failure is the same input error
        raise where.error(name, f"neither JSON nor LiveCodeBench's compressed form ({exc})") from None


class _SafeUnpickler(pickle.Unpickler):
    """Refuses every global: plain strings, lists and dicts need none."""

    def find_class(self, module: str, name: str) -> type:
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}")


def _entry_point(record: dict[str, object], starter: str, where: Location) -> str:
    meta = record.get("metadata")
    if isinstance(meta, str) and meta.strip().startswith("{"):
        meta = json.loads(meta)
    name = meta.get("func_name") if isinstance(meta, dict) else None
    from_starter = entry_point_from_starter(starter)
    if isinstance(name, str) and from_starter and "." in from_starter:
        return f"{from_starter.split('.')[0]}.{name}"
    if isinstance(name, str):
        return name
    if from_starter is None:
        raise where.error("starter_code", "functional tests need a starter with a function")
    return from_starter


def _stdio_test(case: dict[str, str]) -> Test:
    return StdioTest(case["input"], case["output"])


def _call_test(case: dict[str, str], where: Location) -> Test:
    try:
        args = [json.loads(line) for line in case["input"].split("\n") if line.strip()]
        expected = json.loads(case["output"])
    except json.JSONDecodeError as exc:
        problem = f"functional test is not JSON ({json_problem(exc)})"
        raise where.error("public_tests", problem) from None
    return CallTest(call_source(args), expected)
