"""The stand-in hub and release host, laid out from ``../shared/data`` in the upstream layout.

Used by the tests, and by hand to reproduce a check (from the project root)::

    .venv/bin/python -m tests.problems.standin --shared ../shared/data --root /tmp/standin

builds the folder, starts :class:`refinelab.testing.StandInHub` on 127.0.0.1 and prints the variables
to export (``HF_ENDPOINT``, ``REFINELAB_RELEASE_URL``, ``REFINELAB_BENCHMARK_MANIFEST``); it serves
until interrupted.

What is served, per pinned file:

* HumanEval+ ``HumanEvalPlus.jsonl.gz`` and MBPP's ``mbpp.jsonl``: the shared files are upstream's
  bytes (the first byte for byte, the second once decompressed), so refinelab's pinned hashes hold and
  the manifest leaves them alone.
* LiveCodeBench ``test.jsonl`` … ``test5.jsonl``: the shared release-v5 file (880 problems, public tests
  only) sorted by contest date and cut at upstream's counts (400, 111, 101, 101, 167; 166 in the last,
  as the one shared record without any test, abc350_c, is left out), in upstream's record form; the private tests are the public ones, compressed the way upstream compresses private
  tests (so that decoding path runs). ``test6.jsonl``: two small synthetic problems (the shared data
  has no release v6), so the default ``release_latest`` works.
* APPS ``test.jsonl``: MapCoder's 150 problems in codeparrot's record form.
* CodeContests' test Parquet: the 165 shared problems in DeepMind's schema (needs pyarrow; left out
  without it).
* Sanitized MBPP: the shared file (a mirror's reformatting, not upstream's bytes).
* MBPP+ ``MbppPlus.jsonl.gz``: not in the shared data; MBPP+-form records made from MBPP's test split
  (prompt, canonical solution, the inputs of its asserts), for the tasks whose inputs JSON holds as they
  are or which refinelab's restoring table covers.

The manifest pins what the stand-in serves where it is not upstream's bytes.
"""

from __future__ import annotations

import argparse
import ast
import base64
import gzip
import hashlib
import json
import pickle
import shutil
import zlib
from collections.abc import Iterator
from pathlib import Path

from refinelab.problems._manifest import (
    APPS,
    CODECONTESTS,
    HUMANEVAL_PLUS,
    LIVECODEBENCH_FILES,
    MBPP,
    MBPP_PLUS,
    MBPP_SANITIZED,
    PinnedFile,
)
from refinelab.problems._mbppplus import RESTORE

LCB_CUTS = (400, 511, 612, 713, 879)
"""Where release v1 … v5 end in date order: upstream's cumulative counts, less abc350_c in v5 (see below)."""
LCB_UNTESTED = "abc350_c"
"""The one shared LiveCodeBench record with no tests at all: left out (upstream's record has tests)."""


def served_path(root: Path, pinned: PinnedFile) -> Path:
    """Where the stand-in keeps ``pinned``."""
    if pinned.host == "huggingface":
        return root / "huggingface" / "datasets" / pinned.repo / pinned.revision / pinned.path
    kind = ("releases", "download") if pinned.asset else ("raw",)
    return root.joinpath("github", pinned.repo, *kind, pinned.revision, pinned.path)


def build(shared: Path, root: Path) -> Path:
    """Lay out the stand-in under ``root`` from the shared data; the manifest's path."""
    benchmarks = shared / "benchmarks"
    entries: list[str] = []
    _copy(benchmarks / "humanevalplus-v0.1.10.jsonl.gz", served_path(root, HUMANEVAL_PLUS))
    _write(served_path(root, MBPP), gzip.decompress((benchmarks / "mbpp.jsonl.gz").read_bytes()))
    sanitized = gzip.decompress((benchmarks / "mbpp-sanitized.json.gz").read_bytes())
    entries.append(_entry(MBPP_SANITIZED, _write(served_path(root, MBPP_SANITIZED), sanitized)))
    for pinned, rows in zip(LIVECODEBENCH_FILES, _livecodebench_files(benchmarks)):
        entries.append(_entry(pinned, _write(served_path(root, pinned), _jsonl(rows))))
    entries.append(_entry(APPS, _write(served_path(root, APPS), _jsonl(_apps(benchmarks)))))
    plus = _jsonl(_mbpp_plus(benchmarks))
    entries.append(_entry(MBPP_PLUS, _write(served_path(root, MBPP_PLUS), gzip.compress(plus, mtime=0)), plus))
    parquet = _codecontests_parquet(benchmarks)
    if parquet is not None:
        entries.append(_entry(CODECONTESTS, _write(served_path(root, CODECONTESTS), parquet)))
    manifest = root / "manifest.toml"
    manifest.write_text("\n".join(entries), encoding="utf-8")
    return manifest


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def _write(target: Path, data: bytes) -> bytes:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return data


def _jsonl(rows: list[dict[str, object]]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def _records(data: bytes, name: str) -> int:
    if name.endswith(".json"):
        return len(json.loads(data))
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq  # type: ignore[import-untyped,import-not-found,unused-ignore]

        return int(pq.ParquetFile(pyarrow_buffer(data)).metadata.num_rows)
    return sum(1 for line in data.splitlines() if line.strip())


def pyarrow_buffer(data: bytes) -> object:
    import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]

    return pa.BufferReader(data)


def _entry(pinned: PinnedFile, served: bytes, content: bytes | None = None) -> str:
    """A manifest entry pinning what is served (``content``: the decompressed bytes of a ``.gz`` asset)."""
    content = served if content is None else content
    lines = [
        "[[files]]",
        f'host = "{pinned.host}"',
        f'repo = "{pinned.repo}"',
        f'path = "{pinned.path}"',
        f'revision = "{pinned.revision}"',
        f'sha256 = "{hashlib.sha256(content).hexdigest()}"',
        f"size = {len(content)}",
        f"records = {_records(content, pinned.cached_name)}",
    ]
    if pinned.gzip:
        lines.append(f'download_sha256 = "{hashlib.sha256(served).hexdigest()}"')
    return "\n".join(lines) + "\n"


def _livecodebench_files(benchmarks: Path) -> Iterator[list[dict[str, object]]]:
    raw = gzip.decompress((benchmarks / "livecodebench-v5-public-tests.jsonl.gz").read_bytes())
    rows = [json.loads(line) for line in raw.splitlines() if line.strip()]
    rows = [row for row in rows if row["question_id"] != LCB_UNTESTED]
    rows.sort(key=lambda r: (str(r["contest_date"]), str(r["question_id"])))
    start = 0
    for end in LCB_CUTS:
        yield [_lcb_upstream(row) for row in rows[start:end]]
        start = end
    yield [_lcb_upstream(row) for row in _synthetic_v6()]


def _lcb_upstream(row: dict[str, object]) -> dict[str, object]:
    """A shared record in upstream's form: tests as JSON text, private tests compressed as upstream's."""
    tests = row["public_tests"]
    compressed = base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode()
    keys = ("question_title", "question_content", "platform", "question_id", "contest_id", "contest_date")
    return {
        **{key: row[key] for key in keys},
        "starter_code": row["starter_code"],
        "difficulty": row["difficulty"],
        "public_test_cases": json.dumps(tests),
        "private_test_cases": compressed,
        "metadata": "{}",
    }


def _synthetic_v6() -> list[dict[str, object]]:
    """Two problems dated after release v5 (the stand-in's release v6; not real LiveCodeBench problems)."""
    return [
        {
            "question_id": "standin_v6_sum",
            "question_title": "Sum (stand-in)",
            "question_content": "Read two integers A and B and print A+B.",
            "platform": "atcoder",
            "contest_id": "standin",
            "contest_date": "2025-02-01T00:00:00",
            "difficulty": "easy",
            "starter_code": "",
            "public_tests": [{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}],
        },
        {
            "question_id": "standin_v6_max",
            "question_title": "Max (stand-in)",
            "question_content": "Return the largest element of nums.",
            "platform": "leetcode",
            "contest_id": "standin",
            "contest_date": "2025-03-01T00:00:00",
            "difficulty": "easy",
            "starter_code": "class Solution:\n    def largest(self, nums: List[int]) -> int:\n        ",
            "public_tests": [{"input": "[3, 1, 2]", "output": "3", "testtype": "functional"}],
        },
    ]


def _apps(benchmarks: Path) -> list[dict[str, object]]:
    raw = gzip.decompress((benchmarks / "apps-150.jsonl.gz").read_bytes())
    return [_apps_upstream(json.loads(line)) for line in raw.splitlines() if line.strip()]


def _apps_upstream(row: dict[str, object]) -> dict[str, object]:
    """MapCoder's record in codeparrot's form (no solutions: the shared file has none)."""
    cases = [*row["sample_io"], *row["test_list"]]  # type: ignore[misc]
    starter = str(row.get("starter_code") or "")
    function = _function_name(starter)
    if function:
        inputs = [[_literal(line) for line in c["input"].split("\n")] if c["input"] else [] for c in cases]
        outputs = [c["output"] for c in cases]
        io: dict[str, object] = {"inputs": inputs, "outputs": outputs, "fn_name": function}
    else:
        io = {"inputs": [c["input"] for c in cases], "outputs": ["".join(map(str, c["output"])) for c in cases]}
    return {
        "id": row["id"],
        "question": row["description"],
        "solutions": "",
        "input_output": json.dumps(io),
        "difficulty": row["difficulty"],
        "url": "",
        "starter_code": starter,
    }


def _function_name(starter: str) -> str | None:
    for line in starter.splitlines():
        stripped = line.strip()
        if stripped.startswith("def ") and "(" in stripped:
            return stripped[4 : stripped.index("(")].strip()
    return None


def _literal(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def _mbpp_plus(benchmarks: Path) -> list[dict[str, object]]:
    raw = gzip.decompress((benchmarks / "mbpp.jsonl.gz").read_bytes())
    rows = [json.loads(line) for line in raw.splitlines() if line.strip()]
    made = [_mbpp_plus_record(row) for row in rows if 11 <= int(row["task_id"]) <= 510]
    return [record for record in made if record is not None]


def _mbpp_plus_record(row: dict[str, object]) -> dict[str, object] | None:
    """An MBPP+-form record from an MBPP record whose asserts all read ``assert f(literals) == ...``."""
    calls = [_call(str(test)) for test in row["test_list"]]  # type: ignore[attr-defined]
    if not calls or any(call is None for call in calls) or len({c[0] for c in calls if c}) != 1:
        return None
    name = calls[0][0]  # type: ignore[index]
    if row.get("test_setup_code"):
        return None
    inputs = [c[1] for c in calls if c]
    if _jsonable(inputs) != inputs and int(str(row["task_id"])) not in RESTORE:
        return None  # tuples or sets JSON would turn into lists, for a task the real release restores otherwise
    record = {
        "task_id": f"Mbpp/{row['task_id']}",
        "prompt": f'"""\n{row["text"]}\n{row["test_list"][0]}\n"""\n',  # type: ignore[index]
        "entry_point": name,
        "canonical_solution": str(row["code"]).replace("\r\n", "\n"),
        "base_input": _jsonable(inputs),
        "plus_input": [],
        "atol": 0,
    }
    try:
        json.dumps(record)
    except (TypeError, ValueError):  # an input JSON cannot hold (a complex number): left out
        return None
    return record


def _call(test: str) -> tuple[str, list[object]] | None:
    try:
        node = ast.parse(test.strip()).body[0]
    except (SyntaxError, IndexError):
        return None
    if not (isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare)):
        return None
    call = node.test.left
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)) or call.keywords:
        return None
    try:
        return call.func.id, [ast.literal_eval(arg) for arg in call.args]
    except (ValueError, SyntaxError, TypeError):
        return None


def _jsonable(value: object) -> object:
    """As evalplus stores inputs: tuples and sets as lists."""
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def _codecontests_parquet(benchmarks: Path) -> bytes | None:
    try:
        import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]
        import pyarrow.parquet as pq  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    rows = json.loads(gzip.decompress((benchmarks / "codecontests-test-165.json.gz").read_bytes()))
    table = pa.Table.from_pylist([_cc_upstream(index, row) for index, row in enumerate(rows)])
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


def _cc_upstream(index: int, row: dict[str, object]) -> dict[str, object]:
    """A shared record in DeepMind's schema: the examples the statement shows are public, all tests private."""
    tests = row["tests"]
    assert isinstance(tests, dict)
    statement = str(row["problem"])
    shown = [(i, o) for i, o in zip(tests["input"], tests["output"]) if i.strip() and i.strip() in statement]
    shown = shown or [(tests["input"][0], tests["output"][0])]
    return {
        "name": f"standin/{index}",
        "description": statement,
        "public_tests": {"input": [i for i, _ in shown], "output": [o for _, o in shown]},
        "private_tests": {"input": list(tests["input"]), "output": list(tests["output"])},
        "generated_tests": {"input": [], "output": []},
        "solutions": {"language": [], "solution": []},
        "difficulty": 0,
    }


def main() -> None:
    """Build the stand-in, serve it, print what to export."""
    from refinelab.testing import serve_standin

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=Path("../shared/data"), help="the shared data folder")
    parser.add_argument("--root", type=Path, required=True, help="where to lay the stand-in out")
    args = parser.parse_args()
    manifest = build(args.shared, args.root)
    with serve_standin(args.root) as hub:
        for key, value in {**hub.environ(), "REFINELAB_BENCHMARK_MANIFEST": str(manifest)}.items():
            print(f"export {key}={value}", flush=True)
        try:
            hub.stopping.wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
