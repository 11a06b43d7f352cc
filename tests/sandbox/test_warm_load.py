"""A warm load of an evalplus release reads only the file's first record (which names the cache): each task's
inputs come written from the cache, and the rest of the task from the cache's header; a cache from before the
tasks were kept, or whose kept tasks are damaged, has the file read once for them, and one from before the
inputs were kept has it read again, from its first task without them."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import pickle
import time
import zlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from refinelab._location import Location
from refinelab.errors import InfrastructureError
from refinelab.problems import CallTest, HumanEvalPlusTask, Problem, _humanevalplus
from refinelab.problems._mbppplus import restored
from refinelab.sandbox import WorkerPool, _reference, prepare_benchmark
from refinelab.sandbox._compare import DEFAULT_FLOAT_ATOL
from refinelab.sandbox._outputs import Output
from refinelab.sandbox._packed import Packed, Shelf
from refinelab.sandbox._reference import _hidden_tests
from tests.conftest import with_pool


def _release(path: Path) -> Path:
    records = []
    for number in range(3):
        record: dict[str, object] = {"task_id": f"HumanEval/{number}", "entry_point": "f"}
        record |= {"prompt": f'def f(x):\n    """>>> f(1)\n    {1 + number}\n    """\n'}
        record |= {"canonical_solution": f"    return x + {number}\n", "base_input": [[1], [2]], "plus_input": [[3]]}
        records.append(json.dumps(record))
    path.write_text("\n".join(records) + "\n")
    return path


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the records read from a release file, a list per reading."""
    readings: list[int] = []
    read = _humanevalplus.read_jsonl  # type: ignore[attr-defined]

    def counted(source: Path) -> Iterator[tuple[int, dict[str, object]]]:
        readings.append(0)
        for found in read(source):
            readings[-1] += 1
            yield found

    monkeypatch.setattr(_humanevalplus, "read_jsonl", counted)
    return readings


def _load(data: Path, cache: Path, tests: tuple[int, ...] = (3, 3, 3)) -> list[Problem]:
    """The problems, but for the reference's times (measured anew by each cold load)."""

    async def body(pool: WorkerPool) -> list[Problem]:
        return await prepare_benchmark("humaneval-plus", data, pool=pool, cache_dir=cache)

    timed = with_pool(body, workers=1)
    assert [len(p.hidden_tests) for p in timed] == [len(p.hidden_seconds) for p in timed] == list(tests)
    return [replace(p, hidden_seconds=(), metadata={**p.metadata, "reference_time_scale": None}) for p in timed]


def test_a_load_reads_the_release_once_cold_and_only_its_first_record_warm_and_builds_the_same_problems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, readings = _release(tmp_path / "plus.jsonl"), _counting(monkeypatch)
    cold = _load(data, tmp_path)
    assert readings == [3]  # the bare problems, the inputs kept for computing the outputs
    readings.clear()
    warm = _load(data, tmp_path)
    assert warm == cold
    assert readings == [1]  # the first record names the cache; the tasks come from its header
    (cache,) = tmp_path.glob("humanevalplus-*.jsonl")
    lines = cache.read_text().splitlines()
    header = json.loads(lines[0])
    for kept in (
        {key: value for key, value in header.items() if key not in ("tasks", "tasks_sha256")},  # a cache from before
        header | {"tasks": header["tasks"].replace("return x + 1", "return x + 7")},  # damaged: not its SHA-256
    ):
        cache.write_text("\n".join([json.dumps(kept), *lines[1:]]) + "\n")
        readings.clear()
        assert _load(data, tmp_path) == cold and readings == [3]
        assert cache.read_text().splitlines() == lines  # the load put the tasks back in the header, as written
        readings.clear()
        assert _load(data, tmp_path) == cold and readings == [1]
    assert not list(tmp_path.glob("*.tmp")) and len(list(tmp_path.glob("*.blobs"))) == 1  # nothing left beside it
    readings.clear()
    assert [t.expr for t in warm[2].hidden_tests if isinstance(t, CallTest)] == [f"candidate({n})" for n in (1, 2, 3)]
    assert [t.expected for t in warm[2].hidden_tests if isinstance(t, CallTest)] == [3, 4, 5]
    # the second task's line from before its inputs were kept: the release is read again from there
    (cache,) = tmp_path.glob("humanevalplus-*.jsonl")
    lines = cache.read_text().splitlines()
    older = {key: value for key, value in json.loads(lines[2]).items() if key not in ("expressions", "arguments")}
    cache.write_text("\n".join([*lines[:2], json.dumps(older), lines[3]]) + "\n")
    readings.clear()
    assert _load(data, tmp_path) == cold and readings == [1, 3]


def test_tasks_are_not_put_in_a_header_written_again_meanwhile_and_nothing_is_left_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _release(tmp_path / "plus.jsonl")
    cold = _load(data, tmp_path)
    (cache,) = tmp_path.glob("humanevalplus-*.jsonl")
    lines = cache.read_text().splitlines()
    header = {key: value for key, value in json.loads(lines[0]).items() if key not in ("tasks", "tasks_sha256")}
    before = "\n".join([json.dumps(header), *lines[1:]]) + "\n"
    cache.write_text(before)
    tasks = [
        HumanEvalPlusTask.of(json.loads(line), Location(data, n))
        for n, line in enumerate(data.read_text().splitlines(), 1)
    ]
    other = _reference.Header(1.0, "0" * 16)  # another writing's values file, put in place meanwhile
    monkeypatch.setattr(_reference, "_read_header", lambda path: other)
    _reference._keep_tasks(cache, tasks)
    assert cache.read_text() == before and not list(tmp_path.glob("*.tmp"))
    monkeypatch.undo()
    _reference._keep_tasks(cache, tasks)
    assert cache.read_text().splitlines() == lines and _load(data, tmp_path) == cold


def test_a_task_as_a_cache_keeps_it_is_the_task_without_its_inputs(tmp_path: Path) -> None:
    source = tmp_path / "plus.jsonl"
    record: dict[str, object] = {"task_id": "Mbpp/2", "entry_point": "similar_elements", "prompt": "p", "atol": 1e-3}
    record |= {"canonical_solution": "s", "base_input": [[[3, 4], [5, 4]]], "plus_input": [[[1], [2]]], "other": 1}
    for task in (
        restored(HumanEvalPlusTask.of(record, Location(source, 4))),  # its inputs restored as tuples: not JSON's
        HumanEvalPlusTask.of({**record, "task_id": "HumanEval/32", "entry_point": "find_zero"}, Location(source, 33)),
    ):
        light = HumanEvalPlusTask.of_light(json.loads(json.dumps(task.light_json())), source)
        assert light == task.without_inputs() and light.record == task.without_inputs().record
        assert (light.where, light.kind, light.json_inputs) == (task.where, task.kind, task.json_inputs)
        assert light.problem((), 0) == task.problem((), 0)
    assert restored(HumanEvalPlusTask.of(record, Location(source, 4))).json_inputs is False
    assert HumanEvalPlusTask.of_light(task.light_json(), source).inputs == task.inputs  # find_zero keeps them
    good = restored(HumanEvalPlusTask.of(record, Location(source, 4))).light_json()
    bad: list[object] = [
        [],
        good | {"inputs": -1},
        good | {"inputs": [[1]]},
        good | {"kind": "mbpp"},
        good | {"atol": 1},
    ]
    for data in bad:
        with pytest.raises(ValueError):
            HumanEvalPlusTask.of_light(data, source)
    with pytest.raises(ValueError):
        HumanEvalPlusTask.of_light(good | {"record": {**record, "task_id": "Mbpp/2"}}, source)  # more than it keeps


def test_a_task_without_inputs_keeps_their_number_and_builds_tests_only_from_them_written() -> None:
    record: dict[str, object] = {"task_id": "HumanEval/7", "entry_point": "g", "prompt": "def g(x):\n"}
    record |= {"canonical_solution": "    return x\n", "base_input": [[1], [[2, 3]]], "plus_input": []}
    task = HumanEvalPlusTask.of(record, Location(Path("plus.jsonl"), 1))
    light = task.without_inputs()
    assert len(light.inputs) == 2 and light.problem((), 0) == task.problem((), 0)
    assert light.reference() == task.reference() and "base_input" not in light.record
    written = task.written()
    assert light.test(1, [2, 3], None, written=written) == task.test(1, [2, 3], None)
    with pytest.raises(ValueError, match="HumanEval/7: input 1 was left out"):
        light.test(1, [2, 3], None)
    zero = HumanEvalPlusTask.of({**record, "entry_point": "find_zero"}, Location(Path("plus.jsonl"), 1))
    assert zero.without_inputs().test(1, 0.5, 1e-6) == zero.test(1, 0.5, 1e-6)  # its polynomial is kept


def test_packed_values_are_kept_beside_the_cache_as_they_came_and_a_damaged_file_is_computed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record: dict[str, object] = {"task_id": "HumanEval/0", "prompt": "def big(n):\n", "entry_point": "big"}
    record |= {"canonical_solution": "    return 'ab' * n\n", "base_input": [[3000], [4000], [1]], "plus_input": []}
    data = tmp_path / "plus.jsonl"
    data.write_text(json.dumps(record) + "\n")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / f"humanevalplus-{_digest(data)}.v4.jsonl").write_text("{}\n")  # the format before
    readings = _counting(monkeypatch)
    cold = _load(data, tmp_path / "cache", tests=(3,))
    assert readings == [1]
    cold = pickle.loads(pickle.dumps(cold))  # its packed values held: the file they were read from is damaged below
    (cache,) = (tmp_path / "cache").glob("humanevalplus-*.jsonl")  # the v4 one removed
    (blobs,) = (tmp_path / "cache").glob("humanevalplus-*.blobs")
    header, line = map(json.loads, cache.read_text().splitlines())
    packed = [output for output in line["outputs"] if "at" in output]
    assert cache.name.endswith(".v6.jsonl") and blobs.name == f"{cache.stem}.{header['blobs']}.blobs"
    assert [p["bytes"] for p in packed] and sum(p["bytes"] for p in packed) == blobs.stat().st_size
    assert "packed" not in json.dumps(line)  # no base64 in the line: it is in the file, as the sandbox sent it
    assert zlib.decompress(base64.b64decode(blobs.read_bytes()[: packed[0]["bytes"]], validate=True)).startswith(b'"ab')
    readings.clear()
    assert _load(data, tmp_path / "cache", tests=(3,)) == cold and readings == [1]
    for damage in ("cut short", "other bytes", "gone", "a line short"):
        if damage == "cut short":
            blobs.write_bytes(blobs.read_bytes()[:-1])
        elif damage == "other bytes":
            blobs.write_bytes(bytes(blobs.stat().st_size))
        elif damage == "gone":
            blobs.unlink()
        else:  # one output fewer than the task has inputs: its hidden tests would be cut
            head, entry = cache.read_text().splitlines()
            shorter = json.loads(entry)
            shorter["outputs"], shorter["seconds"] = shorter["outputs"][:-1], shorter["seconds"][:-1]
            cache.write_text(head + "\n" + json.dumps(shorter) + "\n")
        readings.clear()
        assert _load(data, tmp_path / "cache", tests=(3,)) == cold  # computed again
        # once where the values' file is gone (no whole cache: the bare problems' reading keeps the inputs), else
        # the bare problems, then again from where the cache failed
        assert readings == ([1] if damage == "gone" else [1, 1])
        (blobs,) = (tmp_path / "cache").glob("humanevalplus-*.blobs")  # a new file, alone
        assert blobs.name != f"{cache.stem}.{header['blobs']}.blobs"
        header = json.loads(cache.read_text().splitlines()[0])


def test_packed_values_are_read_from_their_file_where_a_comparison_needs_them_cold_or_warm(tmp_path: Path) -> None:
    """None of a benchmark's packed values is held in memory (HumanEval+'s are 95 MB compressed): each is read
    from the cache's file of them where a comparison needs its bytes. The file may be removed meanwhile (another
    writing of the same cache removes what it does not name): what the load opened stays readable."""
    record: dict[str, object] = {"task_id": "HumanEval/0", "prompt": "def big(n):\n", "entry_point": "big"}
    record |= {"canonical_solution": "    return list(range(n))\n", "base_input": [[3000], [4000], [1]], "atol": 0}
    data = tmp_path / "plus.jsonl"
    data.write_text(json.dumps(record | {"plus_input": []}) + "\n")
    for load in ("cold", "warm"):
        tests = _load(data, tmp_path / "cache", tests=(3,))[0].hidden_tests
        first, second = (t.expected for t in tests[:2] if isinstance(t, CallTest))
        assert isinstance(first, Packed) and isinstance(second, Packed), load
        (blobs,) = (tmp_path / "cache").glob("humanevalplus-*.blobs")
        text = blobs.read_bytes()
        with blobs.open("r+b") as file:  # the same file, other bytes where the first value is: it is read there
            file.write(bytes(len(text) // 2))
        with pytest.raises(InfrastructureError, match=rf"{blobs}: changed since it was read \(bytes 0 to"):
            first.value()
        blobs.write_bytes(text)  # as it was (the same file: written in place)
        assert first == list(range(3000)) and first != list(range(2999)), load
        held = pickle.loads(pickle.dumps(second))  # a copy that crosses to another process holds its bytes
        blobs.unlink()  # removed by another writing: still open
        assert second == list(range(4000)) and held == list(range(4000)) and second != list(range(1, 4001)), load
        assert held.blob == second.blob and held.size == second.size and held.preview == second.preview
        blobs.write_bytes(text)  # put back for the warm load
    with pytest.raises(TypeError, match="open file of this process"):
        pickle.dumps(Shelf.open(blobs))


def test_a_task_without_inputs_needs_no_second_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _release(tmp_path / "plus.jsonl")
    records = [json.loads(line) for line in data.read_text().splitlines()]
    records[1] |= {"base_input": [], "plus_input": []}
    data.write_text("".join(json.dumps(record) + "\n" for record in records))
    readings = _counting(monkeypatch)
    cold = _load(data, tmp_path, tests=(3, 0, 3))
    readings.clear()
    assert _load(data, tmp_path, tests=(3, 0, 3)) == cold and readings == [1]  # the first record only


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def test_many_tests_at_once_are_the_tests_made_one_at_a_time() -> None:
    record: dict[str, object] = {"task_id": "HumanEval/8", "entry_point": "h", "prompt": "def h(x):\n"}
    record |= {"canonical_solution": "    return x\n", "base_input": [[1], ["a b"], [[2, 3]]]}
    task = HumanEvalPlusTask.of(record, Location(Path("plus.jsonl"), 1))
    indices, expected, tolerances = [0, 2], [1, [2.5, 3]], [None, 1e-6]
    one = [task.test(i, value, atol) for i, value, atol in zip(indices, expected, tolerances)]
    written = task.written()
    for made in (
        task.tests(indices, expected, tolerances),
        task.tests(indices, expected, tolerances, written),
        task.without_inputs().tests(indices, expected, tolerances, written),
    ):
        assert made == one and [t.args for t in made if isinstance(t, CallTest)] == ["[1]", "[[2, 3]]"]
    assert [t.expr for t in one if isinstance(t, CallTest)] == ["candidate(1)", "candidate([2, 3])"]
    exprs_only = replace(task, json_inputs=False)  # MBPP+'s tuples and sets: the expression is evaluated
    made = exprs_only.tests(indices, expected, tolerances, replace(written, arguments=None))
    assert made == one and [t.args for t in made if isinstance(t, CallTest)] == [None, None]
    zero = HumanEvalPlusTask.of({**record, "entry_point": "find_zero"}, Location(Path("plus.jsonl"), 1))
    assert zero.tests([2], [0.5], [1e-6], zero.written()) == [zero.test(2, 0.5, 1e-6)]  # the polynomial's test


def test_hidden_tests_drop_inputs_without_an_output_and_give_floats_a_tolerance() -> None:
    record: dict[str, object] = {"task_id": "HumanEval/9", "entry_point": "h", "prompt": "def h(x):\n"}
    record |= {"canonical_solution": "    return x\n", "base_input": [[1], [2], [3], [4]]}
    task = HumanEvalPlusTask.of(record, Location(Path("plus.jsonl"), 1))
    big = list(range(3000))
    packed = Packed.of(big, big)
    outputs: list[Output] = [{"value": 1}, {}, {"value": [1.5, 2]}, packed]
    tests, dropped, times = _hidden_tests(task, outputs, [0.1, None, 0.3, None])
    assert dropped == 1 and times == [0.1, 0.3, 0.0]
    assert [(t.expected, t.atol) for t in tests if isinstance(t, CallTest)] == [
        (1, None),
        ([1.5, 2], DEFAULT_FLOAT_ATOL),
        (packed, None),
    ]
    assert [t.expr for t in tests if isinstance(t, CallTest)] == ["candidate(1)", "candidate(3)", "candidate(4)"]
    tolerant, _, _ = _hidden_tests(replace(task, atol=0.5), outputs, [0.1, None, 0.3, None], task.written())
    assert [t.atol for t in tolerant if isinstance(t, CallTest)] == [0.5, 0.5, None]


def test_a_task_of_plain_scalars_makes_the_tests_made_one_at_a_time() -> None:
    record: dict[str, object] = {"task_id": "HumanEval/9", "entry_point": "h", "prompt": "def h(x):\n"}
    record |= {"canonical_solution": "    return x\n", "base_input": [[1], [2], [3], [4], [5]]}
    values: list[object] = [1, "two", True, None, 0]
    outputs: list[Output] = [{"value": value} for value in values]
    seconds: list[float | None] = [0.1, None, 0.3, 0.0, 0.5]
    for atol in (0.0, 0.5):  # exact, and a task whose every value gets a tolerance
        task = replace(HumanEvalPlusTask.of(record, Location(Path("plus.jsonl"), 1)), atol=atol)
        for written in (None, task.written()):
            tests, dropped, times = _hidden_tests(task, outputs, seconds, written)
            assert dropped == 0 and times == [0.1, 0.0, 0.3, 0.0, 0.5]
            assert tests == [task.test(index, value, atol or None) for index, value in enumerate(values)]
            assert [type(t.expected) for t in tests if isinstance(t, CallTest)] == list(map(type, values))
    task = HumanEvalPlusTask.of(record, Location(Path("plus.jsonl"), 1))
    with_float = _hidden_tests(task, [*outputs[:4], {"value": 2.5}], seconds)[0]  # one by one: a float
    assert [t.atol for t in with_float if isinstance(t, CallTest)] == [None] * 4 + [DEFAULT_FLOAT_ATOL]


def test_a_warm_load_removes_what_a_killed_cache_writing_left_once_it_is_stale(tmp_path: Path) -> None:
    data = _release(tmp_path / "plus.jsonl")
    cold = _load(data, tmp_path)
    (cache,) = tmp_path.glob("humanevalplus-*.jsonl")
    (own,) = tmp_path.glob("humanevalplus-*.blobs")
    left = [cache.with_name(f"{cache.name}.{name}.tmp") for name in ("dead", "live")]
    left += [cache.with_name(f"{cache.stem}.{name}.blobs") for name in ("dead", "live")]
    other = tmp_path / "humanevalplus-0000.v6.jsonl.dead.tmp"  # another release's: not this cache's to remove
    for path in (*left, other):
        path.write_bytes(b"half written")
    hour_ago = time.time() - 3600
    for path in (left[0], left[2], other, own):
        os.utime(path, (hour_ago, hour_ago))
    assert _load(data, tmp_path) == cold
    assert sorted(p.name for p in tmp_path.glob("humanevalplus-*")) == sorted(
        p.name for p in (cache, own, left[1], left[3], other)
    )


def test_inputs_written_with_the_sandboxs_encoder_are_written_as_json_dumps_writes_them() -> None:
    """``written(JSON_TEXT)`` (what computing outputs uses: the C encoder built once) writes each input's
    JSON, and its expression, exactly as ``json.dumps`` does, whatever the input holds."""
    from refinelab.sandbox._worker.codec import JSON_TEXT

    inputs = [[1, 'é\u2028"q\\', -0.0, 1e300], [[[1, 2], {"k": None}], True], [10**3500], [float("inf"), float("nan")]]
    record: dict[str, object] = {"task_id": "HumanEval/8", "entry_point": "h", "prompt": "def h(*x):\n"}
    record |= {"canonical_solution": "    return x\n", "base_input": inputs}
    task = HumanEvalPlusTask.of(json.loads(json.dumps(record)), Location(Path("plus.jsonl"), 1))
    fast, plain = task.written(JSON_TEXT), task.written()
    assert fast == plain and fast.arguments == [json.dumps(args) for args in task.inputs]
