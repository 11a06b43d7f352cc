"""Large expected values: kept compressed, equal exactly when the value is, computed in small replies,
scored in pieces; and HumanEval+'s outputs computed with progress and cached."""

from __future__ import annotations

import binascii
import fractions
import hashlib
import json
import os
import tempfile
import zlib
from dataclasses import replace
from pathlib import Path

import pytest

from refinelab._location import Location
from refinelab.problems import CallTest, HumanEvalPlusTask, Problem, _humanevalplus
from refinelab.problems._literal import call_source, call_source_of_json
from refinelab.sandbox import Packed, RunResult, Suite, WorkerPool, judge, prepare_benchmark, values_match
from refinelab.sandbox._machine import this_machine
from refinelab.sandbox._outputs import Chunk, deferred
from refinelab.sandbox._packed import Shelf
from refinelab.sandbox._scoring import run_scored, split_suite
from refinelab.sandbox._worker.codec import encode_expected
from tests.conftest import with_pool


def packed(value: object) -> Packed:
    return Packed.of(encode_expected(value), value)


def test_a_packed_value_equals_what_the_value_equals() -> None:
    numbers = list(range(100_000))
    expected = packed(numbers)
    assert expected.size == len(json.dumps(numbers)) and len(expected.blob) < expected.size / 2
    assert numbers == expected and expected == numbers and list(numbers) == expected
    assert [float(n) for n in numbers] == expected  # == as the benchmarks' asserts mean it: 1.0 == 1
    assert numbers[:-1] != expected and tuple(numbers) != expected and expected != None  # noqa: E711
    assert values_match(numbers, expected) and not values_match(numbers[::-1], expected)
    assert packed("ab" * 50_000) == "ab" * 50_000 and packed("ab" * 50_000) != "ba" * 50_000
    assert repr(expected).startswith("[0, 1, 2, 3") and len(repr(expected)) == 300 and repr(expected).endswith("...")
    shelf = _shelf()
    shelf.put(b"before")
    written = expected.to_json(shelf)
    shelf.put(b"after")
    assert written["at"] == 6 and written["bytes"] == len(binascii.b2a_base64(expected.blob, newline=False))
    assert Packed.from_json(json.loads(json.dumps(written)), shelf) == numbers


@pytest.mark.parametrize(
    "place",
    [{"at": "0"}, {"bytes": 1.5}, {"at": True}, {"at": -1}, {"at": 1}, {"at": 2**63}, {"bytes": 10**14}, {"crc": 7}],
)
def test_a_cache_entry_whose_bytes_are_not_where_it_says_is_unreadable(
    place: dict[str, object], tmp_path: Path
) -> None:
    """A damaged entry is an error the warm load catches (it then computes the outputs again)."""
    value = packed(list(range(10_000)))
    file = tmp_path / "values.blobs"
    written = value.to_json(Shelf.create(file))
    shelf = Shelf.open(file)
    assert Packed.from_json(written, shelf).blob == zlib.compress(json.dumps(list(range(10_000))).encode(), 1)
    with pytest.raises(ValueError):
        Packed.from_json(written | place, shelf)
    file.write_bytes(bytes(file.stat().st_size))  # as long, other bytes: a file of another writing, or damaged
    with pytest.raises(ValueError, match="not those written"):
        Packed.from_json(written, Shelf.open(file))


def test_a_large_string_is_undone_once_then_compared_by_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "".join(f"{i} \ud800\n" for i in range(20_000))  # a lone surrogate, as a program may return
    undone = _count_undoing(monkeypatch)
    for atol in (None, 1e-6):
        expected = _unknown(Packed.of(encode_expected(text), text, atol=atol))
        assert text == expected and (text[:-1] + "x") != expected and text[:-1] != expected
        assert "".join(f"{i} \ud801\n" for i in range(20_000)) != expected
        assert expected == text and text + "" == expected
    assert len(undone) == 2  # once per packed value, however many programs' answers it meets
    assert [text] != expected and _unknown(packed([text])) != text  # not both strings: by value
    assert len(undone) == 4
    known = Packed.of(encode_expected(text), text)  # packed here: its digest known from the start
    assert known == text and text[:-1] != known and len(undone) == 4


def _shelf() -> Shelf:
    """A new file of packed values, open, that no path names (removed at once)."""
    fd, path = tempfile.mkstemp(suffix=".blobs")
    os.unlink(path)
    return Shelf(fd)


def _form(value: Packed) -> dict[str, object]:
    """``value``'s cache form, its bytes put on a new shelf."""
    return value.to_json(_shelf())


def _unknown(value: Packed) -> Packed:
    """``value`` read back from its cache form as a cache written before digests were kept has it."""
    shelf = _shelf()
    return _cached({key: item for key, item in value.to_json(shelf).items() if key != "string"}, shelf)


def _cached(written: dict[str, object], shelf: Shelf) -> Packed:
    """``written`` (a value's cache form, its bytes put on ``shelf``) read back, through JSON."""
    return Packed.from_json(json.loads(json.dumps(written)), shelf)


def test_a_packed_value_holding_floats_keeps_its_tolerance() -> None:
    values = [i / 3 for i in range(10_000)]
    close = [v + 1e-9 for v in values]
    assert close == Packed.of(encode_expected(values), values, atol=1e-6)
    assert close != packed(values)  # no tolerance: == only
    assert [v + 1e-3 for v in values] != Packed.of(encode_expected(values), values, atol=1e-6)
    tolerant = Packed.of(encode_expected(values), values, atol=1e-6)
    shelf = _shelf()
    again = _cached(tolerant.to_json(shelf), shelf)
    assert again.atol == 1e-6 and close == again


def test_judging_against_a_packed_value_reports_a_short_expected_text() -> None:
    test = CallTest("candidate()", packed(list(range(50_000))))
    assert judge(test, {"s": "value", "v": list(range(50_000))}).verdict == "pass"
    outcome = judge(test, {"s": "value", "v": [1, 2]})
    assert outcome.verdict == "fail" and outcome.expected is not None and len(outcome.expected) == 300


@pytest.mark.parametrize(
    "value",
    [
        list(range(20_000)),
        [i / 3 for i in range(5_000)],
        {"D": "not a tag", "pairs": [(i, str(i)) for i in range(3_000)]},
        [float("nan"), *range(5_000)],
        [[1, float("nan")]] * 2_000,
        ["NaN", "nan", *map(str, range(5_000))],
        [2**60 + i for i in range(3_000)],
    ],
    ids=["ints", "floats", "dict", "nan", "nested-nan", "nan-strings", "big-ints"],
)
def test_judging_by_the_encoding_gives_the_verdict_decoding_gives(value: object) -> None:
    for atol in (None, 1e-6):
        expected = Packed.of(encode_expected(value), value, atol=atol)
        test = CallTest("candidate()", expected, atol)
        report = {"s": "value", "v": json.loads(json.dumps(encode_expected(value)))}  # as it arrives
        verdict = judge(test, report).verdict
        assert verdict == ("pass" if values_match(value, expected.value(), atol) else "fail")
        assert expected.encodes_as(report["v"]) == (verdict == "pass")  # NaN: equal to nothing, itself included
    other = packed(value)
    assert not other.encodes_as(encode_expected([value]))


def test_suites_with_large_expected_values_run_in_pieces_and_are_put_back_together() -> None:
    big = [CallTest(f"candidate({n})", packed("x" * n)) for n in (300_000, 10, 200_000, 250_000, 5)]
    suite = Suite.of(big, entry_point="f")
    pieces = split_suite(suite, part_bytes=500_000)
    assert [[t.expr for t in piece.tests if isinstance(t, CallTest)] for piece in pieces] == [
        ["candidate(300000)", "candidate(10)"],
        ["candidate(200000)", "candidate(250000)", "candidate(5)"],
    ]
    small = Suite.of([CallTest("candidate(1)", "x")], entry_point="f")
    assert split_suite(small)[0] is small
    programs = ["def f(n):\n    return 'x' * n\n", "def f(n):\n    return 'x' * min(n, 100)\n"]

    async def body(pool: WorkerPool) -> list[RunResult]:
        return await run_scored(pool, [(p, suite) for p in programs], isolate=True)

    right, wrong = with_pool(body, workers=2)
    assert [o.verdict for o in right.outcomes] == ["pass"] * 5
    assert [o.verdict for o in wrong.outcomes] == ["fail", "pass", "fail", "fail", "pass"]


def _write_plus(path: Path) -> Path:
    record = {
        "task_id": "HumanEval/0",
        "prompt": 'def rows(n: int) -> str:\n    """n lines of text."""\n',
        "entry_point": "rows",
        "canonical_solution": "    return 'line\\n' * n\n",
        "base_input": [[1], [2]],
        "plus_input": [[n] for n in range(3, 300)] + [[40_000], [3], [60_000]],
        "atol": 0,
    }
    path.write_text(json.dumps(record) + "\n")
    return path


def test_outputs_are_computed_in_small_replies_with_progress_then_read_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, seen = _write_plus(tmp_path / "plus.jsonl"), list[tuple[object, ...]]()
    formatted: list[object] = []  # each input is written as source once: its chunk's, which its test takes

    def counted(args: list[object]) -> str:
        formatted.append(args)
        return call_source(args)

    def counted_json(args: list[object], text: str) -> str:
        formatted.append(args)
        return call_source_of_json(args, text)

    monkeypatch.setattr(_humanevalplus, "call_source", counted)
    monkeypatch.setattr(_humanevalplus, "call_source_of_json", counted_json)
    digest = hashlib.sha256(data.read_bytes()).hexdigest()[:16]
    old_formats = [tmp_path / f"humanevalplus-{digest}.json"]
    old_formats += [tmp_path / f"humanevalplus-{digest}.v{n}.jsonl" for n in (2, 3, 4, 5)]
    for old in old_formats:
        old.write_text("{}")  # caches in earlier formats: replaced, not left behind

    jobs: list[tuple[int, int]] = []  # per job: its inputs, and the large values its reply carried

    async def body(pool: WorkerPool) -> list[Problem]:
        values = pool.values

        async def counted(program: str, expressions: list[str], **kwargs: object) -> object:
            reply = await values(program, expressions, **kwargs)  # type: ignore[arg-type]
            large = [v for v in reply if isinstance(v, list) and "-packed" in str(v[0])[:60] and v[0][2] > 100_000]
            jobs.append((len(expressions), len(large)))
            return reply

        pool.values = counted  # type: ignore[method-assign,assignment]
        return await prepare_benchmark(
            "humaneval-plus", data, pool=pool, cache_dir=tmp_path, progress=lambda *a: seen.append(a)
        )

    (problem,) = with_pool(body, workers=2)
    tests = [t for t in problem.hidden_tests if isinstance(t, CallTest)]
    assert len(tests) == len(problem.hidden_tests) == 302
    # 200 kB and 300 kB outputs, packed where they were computed, as the host packs them; a reply carries one:
    # the calibration; the 302 inputs, of which the first 300 ran (the 300th large); the two left
    assert jobs == [(5, 0), (302, 1), (2, 1)]
    assert len(formatted) == 302  # not again for each job, nor for its test
    undone = _count_undoing(monkeypatch)
    for index, size in ((299, 40_000), (301, 60_000)):
        found, value = tests[index].expected, "line\n" * size
        assert isinstance(found, Packed) and found == value and found != value[:-1]
        made = Packed.of(encode_expected(value), value)
        assert (found.blob, found.size, found.preview, found.atol) == (made.blob, made.size, made.preview, None)
        encoding = hashlib.sha256(json.dumps(encode_expected(value)).encode()).hexdigest()
        assert _form(found) == {**_form(made), "encoding": encoding}  # and the digest of its encoding
        assert _form(found)["string"] == hashlib.sha256(value.encode()).hexdigest()
    assert undone == []  # the sandbox sent each string's digest: no comparison undid a compression
    assert tests[300].expected == "line\n" * 3 and not isinstance(tests[300].expected, Packed)
    assert seen[0] == ("computing expected outputs", 0, 302) and seen[-1] == ("computing expected outputs", 302, 302)
    (cache,) = tmp_path.glob("humanevalplus-*.v6.jsonl")
    header, line = map(json.loads, cache.read_text().splitlines())  # the calibration, then one line per task
    assert header["calibration_seconds"] > 0 and not any(old.exists() for old in old_formats)
    assert len(line["seconds"]) == 302 and all(t >= 0 for t in line["seconds"])
    assert len(problem.hidden_seconds) == 302 and problem.metadata["reference_time_scale"] == 1.0
    seen.clear()
    (again,) = with_pool(body, workers=1)
    assert again.hidden_tests == problem.hidden_tests and seen == []  # from the cache: nothing computed
    assert len(jobs) == 3  # nor calibrated: the times were measured on this machine
    kept = again.hidden_tests[299]
    assert isinstance(kept, CallTest) and kept.expected == "line\n" * 40_000 and undone == []  # the digest was kept
    assert len(formatted) == 302  # the inputs as the cache kept them: none written again
    assert [(t.expr, t.args) for t in again.hidden_tests if isinstance(t, CallTest)] == [
        (t.expr, t.args) for t in tests
    ]
    # A cache from before the inputs were kept loads the same, its inputs written anew.
    older = {key: value for key, value in line.items() if key not in ("expressions", "arguments")}
    assert len(older) == len(line) - 2
    cache.write_text(json.dumps(header) + "\n" + json.dumps(older) + "\n")
    (anew,) = with_pool(body, workers=1)
    assert anew.hidden_tests == problem.hidden_tests and seen == [] and len(formatted) == 2 * 302
    assert [(t.expr, t.args) for t in anew.hidden_tests if isinstance(t, CallTest)] == [(t.expr, t.args) for t in tests]
    # A cache from before the digests were kept: each large string is undone at its first comparison.
    older["outputs"] = [{k: v for k, v in item.items() if k != "string"} for item in older["outputs"]]
    cache.write_text(json.dumps(header) + "\n" + json.dumps(older) + "\n")
    (oldest,) = with_pool(body, workers=1)
    value = "line\n" * 40_000
    first = oldest.hidden_tests[299]
    assert isinstance(first, CallTest) and first.expected == value and first.expected != value[:-1]
    assert len(undone) == 1
    # Times measured on this machine are taken as measured, whatever the calibration reads now: there its ratio
    # is noise (a quarter from one run to the next on a 2-core VM), which moved every limit above the 1 s floor.
    assert header["machine"] == this_machine()
    tenth = {**header, "calibration_seconds": header["calibration_seconds"] / 10}
    cache.write_text(json.dumps(tenth) + "\n" + json.dumps(line) + "\n")
    (here,) = with_pool(body, workers=1)
    assert here.metadata["reference_time_scale"] == 1.0 and here.hidden_seconds == tuple(line["seconds"])
    # Times measured on another machine ten times faster (its workload took a tenth), or where a cache from
    # before does not say: each limit grows with it.
    for elsewhere in ({**tenth, "machine": "another-machine"}, {k: v for k, v in tenth.items() if k != "machine"}):
        cache.write_text(json.dumps(elsewhere) + "\n" + json.dumps(line) + "\n")
        jobs.clear()
        (slower,) = with_pool(body, workers=1)
        assert jobs == [(5, 0)]  # the calibration, and nothing computed
        scale = slower.metadata["reference_time_scale"]
        assert (
            isinstance(scale, float)
            and scale > 4
            and slower.hidden_seconds == pytest.approx([t * scale for t in line["seconds"]], rel=1e-3)
        )

    async def score(pool: WorkerPool) -> list[RunResult]:
        suite = Suite.hidden(again)
        return await run_scored(pool, [(again.reference or "", suite)], isolate=True)

    (result,) = with_pool(score, workers=2)
    assert result.passed and len(result.outcomes) == 302


SPIN = "    import time\n    t = time.process_time()\n    while time.process_time() - t < abs(n):\n        pass\n"
"""A body that spends ``abs(n)`` CPU seconds."""


def _one_task(directory: Path, signature: str, solution: str, inputs: list[list[object]]) -> Path:
    """An evalplus file of one task, ``def <signature>:`` with ``solution`` as its body, on ``inputs``."""
    name = signature.split("(")[0]
    record: dict[str, object] = {"task_id": "HumanEval/0", "prompt": f"def {signature}:\n", "entry_point": name}
    record |= {"canonical_solution": solution, "base_input": inputs, "plus_input": [], "atol": 0}
    data = directory / "plus.jsonl"
    data.write_text(json.dumps(record) + "\n")
    return data


def _count_undoing(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each undoing of a compression from now on (``zlib.decompress``) appends to the list returned."""
    undone: list[int] = []
    decompress = zlib.decompress

    def counted(blob: bytes) -> bytes:
        undone.append(1)
        return decompress(blob)

    monkeypatch.setattr(zlib, "decompress", counted)
    return undone


def test_a_slow_tasks_inputs_go_on_in_pieces_of_their_own_once_a_chunk_has_spent_its_cpu(tmp_path: Path) -> None:
    """A chunk stops after CHUNK_SECONDS of CPU; what it left is cut by the CPU its inputs took, and each
    piece goes to a job of its own (side by side), instead of one job running every input in turn."""
    data = _one_task(tmp_path, "spin(n)", SPIN + "    return n\n", [[0.07]] * 10)
    sizes, running, most, (problem,) = _counted_jobs(tmp_path, data)
    calibration, first, *pieces = sizes
    # 0.07 s an input: the first job runs four (0.28 s > 0.25 s), or three where the child's own start took 0.04 s
    # of its CPU (a CI run under load), then one input a piece (about 0.125 s)
    assert calibration == 5 and first == 10 and len(pieces) in (6, 7) and pieces == [1] * len(pieces)
    assert most >= 2 and not running  # the pieces ran side by side
    assert [t.expected for t in problem.hidden_tests if isinstance(t, CallTest)] == [0.07] * 10
    assert all(0.07 <= t < 0.5 for t in problem.hidden_seconds)


def test_the_time_of_an_input_whose_reference_raised_counts_toward_its_chunks_budget(tmp_path: Path) -> None:
    solution = SPIN + "    if n < 0:\n        raise ValueError(n)\n    return n\n"  # spends |n|, fails for n < 0
    data = _one_task(tmp_path, "spin(n)", solution, [[-0.07], [0.07]] * 5)
    sizes, _, _, (problem,) = _counted_jobs(tmp_path, data)
    assert sizes == [5, 10] + [1] * 6
    assert [t.expected for t in problem.hidden_tests if isinstance(t, CallTest)] == [0.07] * 5  # the others dropped


def _counted_jobs(cache: Path, data: Path) -> tuple[list[int], list[int], int, list[Problem]]:
    """Prepare ``data`` (2 workers): each job's inputs, the jobs still running after, the most at once, and
    the problems."""
    sizes: list[int] = []
    running: list[int] = []
    most = 0

    async def body(pool: WorkerPool) -> list[Problem]:
        values = pool.values

        async def counted(program: str, expressions: list[str], **kwargs: object) -> object:
            nonlocal most
            sizes.append(len(expressions))
            running.append(1)
            most = max(most, len(running))
            try:
                return await values(program, expressions, **kwargs)  # type: ignore[arg-type]
            finally:
                running.pop()

        pool.values = counted  # type: ignore[method-assign,assignment]
        return await prepare_benchmark("humaneval-plus", data, pool=pool, cache_dir=cache)

    problems = with_pool(body, workers=2)
    return sizes, running, most, problems


def test_a_chunk_whose_values_hold_many_parts_leaves_the_rest_to_pieces_so_no_reply_is_large(tmp_path: Path) -> None:
    data = _one_task(tmp_path, "text(n)", "    return 'x' * 32000 + str(n)\n", [[n] for n in range(200)])
    sizes, _, _, (problem,) = _counted_jobs(tmp_path, data)
    # 4,001 parts a value (a part is 8 characters), quick to make: the first job stops after 66 (264,066
    # parts > 64 x 4,096), the 134 left go in pieces of 64 (half of 66, but no fewer than 64), each under
    # the budget again
    assert sizes == [5, 200, 64, 64, 6]
    expected = [t.expected for t in problem.hidden_tests if isinstance(t, CallTest)]
    assert expected == ["x" * 32000 + str(n) for n in range(200)]


def test_what_a_chunk_left_is_cut_by_the_cpu_its_inputs_took_or_by_half_what_it_ran() -> None:
    task = HumanEvalPlusTask("HumanEval/0", "f", tuple([i] for i in range(1024)), 0, {}, Location(Path("t"), 1))
    chunk = Chunk(0, task, 0, task.expressions())

    def sizes(computed: int, per_input: float) -> list[int]:
        pieces = deferred(chunk, computed, per_input)
        starts = [p.start for p in pieces]
        assert starts == sorted(starts) and sum(len(p.expressions) for p in pieces) == 1024 - computed
        assert all(p.expressions == task.expressions(p.start, p.start + len(p.expressions)) for p in pieces)
        return [len(p.expressions) for p in pieces]

    assert sizes(4, 0.07) == [1] * 1020  # 0.07 s an input: one a piece
    assert sizes(300, 0.00087) == [143] * 5 + [9]  # 0.125 s at 0.87 ms an input
    assert sizes(300, 0.00003) == [150] * 4 + [124]  # stopped by its parts: half of what it ran
    assert sizes(1, 0.001) == [64] * 15 + [63]  # a large value first: pieces of 64
    assert sizes(200, 0.0) == [100] * 8 + [24]  # no figure (every input raised): half of what it ran
    assert sizes(1024, 0.3) == []


def test_a_huge_integer_packed_where_it_was_computed_reads_as_the_host_packs_it(tmp_path: Path) -> None:
    """The sandbox prints nothing of an integer too long to print on the host (the children lift Python's
    limit for candidates; printing one is quadratic), so its preview is the host's."""
    (problem,) = _loaded(_one_task(tmp_path, "power(n)", "    return 10 ** n\n", [[3], [30_000]]))
    small, huge = (t.expected for t in problem.hidden_tests if isinstance(t, CallTest))
    made = Packed.of(encode_expected(10**30_000), 10**30_000)
    assert small == 1000 and isinstance(huge, Packed) and huge == 10**30_000 and huge != 10**30_000 + 1
    assert (huge.blob, huge.size, huge.preview) == (made.blob, made.size, made.preview)
    assert huge.preview == "<int too large to print>"


def _loaded(data: Path) -> list[Problem]:
    """The problems of the release ``data``, loaded as a check loads them, cached beside it (cold the first
    time, then warm)."""

    async def load(pool: WorkerPool) -> list[Problem]:
        return await prepare_benchmark("humaneval-plus", data, pool=pool, cache_dir=data.parent)

    return with_pool(load, workers=1)


def test_a_task_without_inputs_loads_with_no_hidden_tests_cold_and_warm(tmp_path: Path) -> None:
    records = [
        {
            "task_id": f"HumanEval/{n}",
            "prompt": "def f(x):\n",
            "entry_point": "f",
            "canonical_solution": "    return x\n",
        }
        | {"base_input": inputs, "plus_input": [], "atol": 0}
        for n, inputs in enumerate([[[1], [2]], []])
    ]
    data = tmp_path / "plus.jsonl"
    data.write_text("".join(json.dumps(record) + "\n" for record in records))
    computed: list[object] = []

    async def body(pool: WorkerPool) -> list[Problem]:
        progress = lambda *seen: computed.append(seen)  # noqa: E731
        return await prepare_benchmark("humaneval-plus", data, pool=pool, cache_dir=tmp_path, progress=progress)

    cold = with_pool(body, workers=1)
    assert [len(p.hidden_tests) for p in cold] == [2, 0] and computed
    computed.clear()
    warm = with_pool(body, workers=1)  # the cache has a line for each task: read, nothing computed again
    assert [p.hidden_tests for p in warm] == [p.hidden_tests for p in cold] and computed == []


def test_a_value_packed_where_it_was_computed_keeps_its_encodings_digest_cold_and_warm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox works out the digest of a large value's encoding beside the value and the cache keeps it, so
    that a right program's first answer to it is judged without undoing the compression; a value holding a NaN
    (equal to nothing) keeps "" and never matches that way."""
    undone = _count_undoing(monkeypatch)
    source = "    return [float('nan')] + list(range(-n)) if n < 0 else list(range(n))\n"
    data = _one_task(tmp_path, "numbers(n)", source, [[5000], [-5000]])
    for _ in ("cold", "warm"):
        (problem,) = _loaded(data)
        right, nan = (t.expected for t in problem.hidden_tests if isinstance(t, CallTest))
        assert isinstance(right, Packed) and isinstance(nan, Packed)
        text = json.dumps(encode_expected(list(range(5000))))
        assert right.has_encoding(hashlib.sha256(text.encode()).hexdigest(), len(text))
        assert not right.has_encoding("0" * 64, len(text))
        own = json.dumps(encode_expected([float("nan"), *range(5000)]))
        assert not nan.has_encoding(hashlib.sha256(own.encode()).hexdigest(), len(own))
        assert _form(right)["encoding"] == hashlib.sha256(text.encode()).hexdigest()
        assert _form(nan)["encoding"] == ""
    assert undone == []  # neither run undid a compression to judge by the digest


def test_a_cache_entry_keeps_the_encodings_digest_or_works_it_out_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    value = list(range(5000))
    text = json.dumps(encode_expected(value))
    digest = hashlib.sha256(text.encode()).hexdigest()
    made = packed(value)
    assert "encoding" not in _form(made)  # packed here: worked out only when asked
    undone = _count_undoing(monkeypatch)
    assert made.has_encoding(digest, len(text)) and len(undone) == 1
    shelf = _shelf()
    form = made.to_json(shelf)
    kept = _cached(form, shelf)
    assert _form(kept)["encoding"] == digest and kept.has_encoding(digest, len(text)) and len(undone) == 1
    old = _cached({k: v for k, v in form.items() if k != "encoding"}, shelf)  # a cache from before
    assert old.has_encoding(digest, len(text)) and len(undone) == 2
    for bad in ("0" * 63, "G" * 64, digest.upper(), 7, None):
        written = {**form, "encoding": bad}
        if bad is None:
            assert _cached(written, shelf).has_encoding(digest, len(text))  # null: not kept
            continue
        with pytest.raises(ValueError, match="encoding"):
            _cached(written, shelf)


def test_a_reference_value_is_stored_as_the_worker_encoded_it_and_packed_past_the_size() -> None:
    """The host stores a reference's value as it came, encoded: small as it is, large packed (where the
    sandbox did not pack it), with a tolerance where it holds floats; a value of a type the codec does not
    carry cannot be expected, and an error is kept as its verdict."""
    from refinelab.sandbox._compare import DEFAULT_FLOAT_ATOL
    from refinelab.sandbox._outcome import TestOutcome
    from refinelab.sandbox._outputs import PACK_BYTES, _output
    from refinelab.sandbox._worker.codec import encode

    assert _output({"T": [1, {"S": [2]}]}, 0.0, packable=True) == {"value": {"T": [1, {"S": [2]}]}}
    floats = encode([0.5] * 2000)
    assert len(json.dumps(floats)) > PACK_BYTES
    packed = _output(floats, 0.0, packable=True)
    assert isinstance(packed, Packed) and packed.value() == [0.5] * 2000 and packed.atol == DEFAULT_FLOAT_ATOL
    assert packed.blob == zlib.compress(json.dumps(floats).encode(), 1)
    ints = _output(encode(list(range(2000))), 0.0, packable=True)
    assert isinstance(ints, Packed) and ints.atol is None
    assert _output(floats, 0.0, packable=False) == {"value": floats}  # find_zero's: never packed
    with pytest.raises(TypeError, match="cannot store expected value of type list"):
        _output([1, {"O": "Widget"}], 0.0, packable=True)
    assert _output(TestOutcome("timeout"), 0.0, packable=True) == {"error": "timeout"}


SHORT_AND_LONG = [
    7,
    0.1,
    "a" * 100,
    "é\n" * 600,
    [1, 2, 3],
    (1, {2: "x"}),
    {1, 2},
    None,
    list(range(2000)),
    [0.5] * 2000,
]
"""Values a reference returns: numbers, strings (one whose JSON is past PACK_BYTES only with its escapes), lists,
a tuple holding a dict, a set, None, and two long lists (packed)."""


def test_a_reference_value_is_stored_as_the_host_would_store_it_once_the_sandbox_measured_it() -> None:
    """A value whose JSON the sandbox measured within PACK_BYTES is stored as it came (the host writes it no
    more), and every output, those, the packed ones and an error, is what the host's own way gives for the
    value; a value holding a type the codec does not carry still cannot be expected."""
    from refinelab.sandbox._outcome import TestOutcome
    from refinelab.sandbox._outputs import _chunk_outputs, _output
    from refinelab.sandbox._worker.codec import encode

    body = f"    import fractions\n    values = {SHORT_AND_LONG!r} + [fractions.Fraction(1, 3)]\n    return values[k]\n"
    record: dict[str, object] = {
        "prompt": "def value(k):\n",
        "canonical_solution": body,
        "task_id": "HumanEval/0",
        "entry_point": "value",
    }
    # one input a value, then the fraction, then an index past the end (the reference raises)
    inputs: tuple[list[object], ...] = tuple([k] for k in range(len(SHORT_AND_LONG) + 2))
    task = HumanEvalPlusTask("HumanEval/0", "value", inputs, 0, record, Location(Path("t"), 1))
    outputs, _, _ = with_pool(lambda pool: _chunk_outputs(Chunk(0, task, 0, task.expressions()), pool), workers=1)
    *values, fraction, error = outputs
    assert values == [_output(encode(value), 0.0, packable=True) for value in SHORT_AND_LONG]
    assert [type(output) for output in values[-2:]] == [Packed, Packed]
    assert isinstance(error, dict) and error == _output(TestOutcome("error"), 0.0, packable=True)
    assert fraction == {"value": encode(fractions.Fraction(1, 3))}  # its tag as the codec wrote it
    opaque = replace(task, inputs=([0],), record=record | {"canonical_solution": "    return [1, object()]\n"})
    with pytest.raises(TypeError, match="cannot store expected value of type list"):
        with_pool(lambda pool: _chunk_outputs(Chunk(0, opaque, 0, opaque.expressions()), pool), workers=1)
