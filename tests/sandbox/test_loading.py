"""Problems that load while programs are scored (``_loading.py``): a task's programs run as soon as its
expected outputs are in, a bad samples file is rejected before anything is computed, and a loading that
fails reaches whoever waits instead of leaving them waiting."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from refinelab.check import ScoredSample, read_samples, score_samples
from refinelab.cli import main
from refinelab.errors import InfrastructureError, InputError
from refinelab.problems import CallTest, Problem
from refinelab.sandbox import FakeSandbox, Loading, Packed, _reference, prepare_benchmark, stream_benchmark
from refinelab.sandbox import TestOutcome as Outcome
from refinelab.sandbox._packed import Shelf

TIMEOUT = 120.0
"""Seconds before a test that would otherwise wait for ever fails (nothing here takes a second)."""


def _plus(path: Path) -> Path:
    """An evalplus file of two tasks: ``add`` and ``mul`` (the second one's inputs many more)."""
    tasks = [("HumanEval/0", "add", "a + b", [[1, 2], [3, 4]]), ("HumanEval/1", "mul", "a * b", [[2, 3]] * 40)]
    lines = []
    for task_id, name, body, inputs in tasks:
        record: dict[str, object] = {"task_id": task_id, "prompt": f"def {name}(a, b):\n", "entry_point": name}
        record |= {"canonical_solution": f"    return {body}\n", "base_input": inputs, "plus_input": [], "atol": 0}
        lines.append(json.dumps(record) + "\n")
    path.write_text("".join(lines))
    return path


def _samples(path: Path) -> Path:
    programs = [
        ("HumanEval/0", "def add(a, b):\n    return a + b\n"),
        ("HumanEval/1", "def mul(a, b):\n    return a * b\n"),
    ]
    programs.append(("HumanEval/1", "def mul(a, b):\n    return a + b\n"))
    path.write_text("".join(json.dumps({"task_id": t, "solution": p}) + "\n" for t, p in programs))
    return path


class Gated(FakeSandbox):
    """Computes ``mul``'s expected outputs only once ``gate`` is set (the calibration and ``add``'s at once)."""

    def __init__(self, gate: asyncio.Event) -> None:
        super().__init__()
        self.gate = gate
        self.computed: list[str] = []

    async def values(self, code: str, expressions: Sequence[str], **options: object) -> list[object | Outcome]:
        if "def mul" in code:
            await self.gate.wait()
        self.computed.append("mul" if "def mul" in code else "add" if "def add" in code else "calibration")
        return await super().values(code, expressions, **options)  # type: ignore[arg-type]


def test_a_tasks_programs_are_scored_while_a_later_tasks_expected_outputs_are_still_being_computed(
    tmp_path: Path,
) -> None:
    """``mul``'s outputs are computed only after ``add``'s program was scored: were scoring to wait for every
    problem, this would never end."""
    data, samples = _plus(tmp_path / "plus.jsonl"), _samples(tmp_path / "samples.jsonl")

    async def scored() -> tuple[list[ScoredSample], list[str]]:
        gate = asyncio.Event()

        def seen(index: int, item: ScoredSample) -> None:
            if item.sample.task_id == "HumanEval/0":
                gate.set()

        pool = Gated(gate)
        async with pool:
            async with stream_benchmark("humaneval-plus", data, pool=pool, cache_dir=tmp_path) as loading:
                assert not any(problem.hidden_tests for problem in loading.bare)  # read before any is computed
                read = read_samples(samples, loading.bare)
                found = await score_samples(read, pool, on_scored=seen, whole=loading.whole)
            return found, pool.computed

    found, computed = asyncio.run(asyncio.wait_for(scored(), TIMEOUT))
    assert computed == ["calibration", "add", "mul"]
    assert [item.result.passed for item in found] == [True, True, False]
    # each scored sample carries its whole problem (its hidden tests, and the scale its --out line writes)
    assert [len(item.sample.problem.hidden_tests) for item in found] == [2, 40, 40]
    assert found[1].sample.problem.metadata["reference_time_scale"] == 1.0
    assert len(list(tmp_path.glob("humanevalplus-*.v6.jsonl"))) == 1  # the cache is written as before


async def _cold_then_warm(benchmark: str, data: Path, cache: Path) -> tuple[list[Problem], list[Problem]]:
    """The benchmark's problems loaded twice: computing the cache, then reading it."""
    async with FakeSandbox() as pool:
        cold = await prepare_benchmark(benchmark, data, pool=pool, cache_dir=cache)
        warm = await prepare_benchmark(benchmark, data, pool=pool, cache_dir=cache)
    return cold, warm


def test_problems_streamed_cold_and_warm_are_the_ones_loaded_whole(tmp_path: Path) -> None:
    data = _plus(tmp_path / "plus.jsonl")

    cold, warm = asyncio.run(_cold_then_warm("humaneval-plus", data, tmp_path))
    assert [p.id for p in cold] == ["HumanEval/0", "HumanEval/1"]
    assert [p.hidden_tests for p in cold] == [p.hidden_tests for p in warm]
    # cold, each test takes its input as computing its output wrote it; warm, as the cache kept it: the same
    written = [[(t.expr, t.args) for t in p.hidden_tests if isinstance(t, CallTest)] for p in (*cold, *warm)]
    assert written[:2] == written[2:] and written[0] == [("candidate(1, 2)", "[1, 2]"), ("candidate(3, 4)", "[3, 4]")]
    first = cold[0].hidden_tests[0]
    assert isinstance(first, CallTest) and (first.expr, first.expected) == ("candidate(1, 2)", 3)


def test_a_bad_samples_file_is_rejected_before_any_expected_output_is_computed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _plus(tmp_path / "plus.jsonl")
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        '{"task_id": "HumanEval/0", "solution": "def add(a, b):\\n    return a + b\\n"}\n{"task_id": "nope"}\n'
    )
    cache = tmp_path / "cache"
    code = main(
        ["check", str(samples), "--benchmark", "humaneval-plus", "--data", str(data), "--cache-dir", str(cache)]
    )
    assert code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last == f"refinelab: error: {samples}:2: field 'task_id': unknown task 'nope' for this benchmark"
    assert not list(cache.glob("humanevalplus-*"))  # nothing computed, nothing cached


def test_a_loading_that_fails_reaches_every_waiter_and_the_block_that_owns_it() -> None:
    problems = [Problem(f"T/{n}", "", "function", (), ()) for n in range(3)]

    async def load(loading: Loading) -> None:
        loading.publish(problems[0])
        await asyncio.sleep(0)
        raise InfrastructureError("the sandbox could not run the calibration workload")

    async def waited() -> tuple[Problem, list[InfrastructureError]]:
        with pytest.raises(InfrastructureError, match="calibration"):
            async with Loading(problems, load) as loading:
                first = await loading.whole("T/0")
                errors = []
                for key in ("T/1", "T/2"):
                    try:
                        await loading.whole(key)
                    except InfrastructureError as error:
                        errors.append(error)
                assert loading.finished()
                await loading.problems()
        return first, errors

    first, errors = asyncio.run(asyncio.wait_for(waited(), TIMEOUT))
    assert first is problems[0] and len(errors) == 2


def test_leaving_the_block_with_an_error_stops_the_loading() -> None:
    problems = [Problem("T/0", "", "function", (), ())]
    stopped = []

    async def load(loading: Loading) -> None:
        try:
            await asyncio.Event().wait()  # never ends by itself
        except asyncio.CancelledError:
            stopped.append(True)
            raise

    async def left() -> None:
        with pytest.raises(ValueError, match="bad samples"):
            async with Loading(problems, load) as loading:
                await asyncio.sleep(0)
                raise ValueError("bad samples")
        assert loading.finished() and loading.whole("T/0").cancelled()

    asyncio.run(asyncio.wait_for(left(), TIMEOUT))
    assert stopped == [True]


def test_a_cache_cut_short_is_computed_again_after_its_first_tasks_were_published(tmp_path: Path) -> None:
    """The cache is read one task at a time, each problem published as it is read; a line missing halfway
    sends the loading back to computing, and the problems come out the same (the cache whole again)."""
    data = _plus(tmp_path / "plus.jsonl")

    async def load() -> tuple[list[Problem], list[str]]:
        pool = Gated(asyncio.Event())
        pool.gate.set()
        async with pool:
            problems = await prepare_benchmark("humaneval-plus", data, pool=pool, cache_dir=tmp_path)
        return problems, pool.computed

    whole, computed = asyncio.run(load())
    assert computed == ["calibration", "add", "mul"]
    (cache,) = tmp_path.glob("humanevalplus-*.v6.jsonl")
    header, first, _ = cache.read_text().splitlines()
    cache.write_text(f"{header}\n{first}\n")  # the last task's line lost
    again, computed = asyncio.run(load())
    assert computed == ["calibration", "add", "mul"]  # computed again
    assert [p.hidden_tests for p in again] == [p.hidden_tests for p in whole]
    assert len(cache.read_text().splitlines()) == 3
    _, computed = asyncio.run(load())
    assert computed == []  # read whole from the cache now (measured on this machine: nothing to calibrate)


def test_a_task_without_inputs_is_published_at_once_without_hidden_tests(tmp_path: Path) -> None:
    """Nothing is computed for it, so no chunk tells of it: the loading publishes it as the chunks reach it
    (else scoring would wait for it for ever, and the loading would end in an error)."""
    data = _plus(tmp_path / "plus.jsonl")
    empty = {
        "task_id": "HumanEval/2",
        "prompt": "def nop():\n",
        "entry_point": "nop",
        "canonical_solution": "    pass\n",
    }
    with data.open("a") as handle:
        handle.write(json.dumps({**empty, "base_input": [], "plus_input": [], "atol": 0}) + "\n")

    async def load() -> list[Problem]:
        async with FakeSandbox() as pool:
            return await prepare_benchmark("humaneval-plus", data, pool=pool, cache_dir=tmp_path)

    problems = asyncio.run(asyncio.wait_for(load(), TIMEOUT))
    assert [(p.id, len(p.hidden_tests)) for p in problems] == [
        ("HumanEval/0", 2),
        ("HumanEval/1", 40),
        ("HumanEval/2", 0),
    ]
    (cache,) = tmp_path.glob("humanevalplus-*.v6.jsonl")
    assert len(cache.read_text().splitlines()) == 4  # a line for every task, the empty one too


def test_a_record_without_its_reference_stops_the_loading_before_any_output_is_computed(tmp_path: Path) -> None:
    """Every record's reference solution is checked as the release is first read (once, with the problems
    without their tests): a missing one is an error naming its line and field before any chunk runs."""
    data = _plus(tmp_path / "plus.jsonl")
    first, second = data.read_text().splitlines()
    record = json.loads(second)
    del record["canonical_solution"]
    data.write_text(f"{first}\n{json.dumps(record)}\n")

    async def load() -> list[str]:
        pool = Gated(asyncio.Event())
        pool.gate.set()
        async with pool:
            with pytest.raises(InputError, match="canonical_solution"):
                await prepare_benchmark("humaneval-plus", data, pool=pool, cache_dir=tmp_path)
        return pool.computed

    assert asyncio.run(asyncio.wait_for(load(), TIMEOUT)) == ["calibration"]  # add's outputs were not computed
    assert not list(tmp_path.glob("humanevalplus-*"))


def test_the_event_loop_runs_while_the_cache_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writing HumanEval+'s cache takes seconds while the workers are still scoring: it must not hold up the
    loop that feeds them. The write here waits until a coroutine on the loop has run after it began (a write
    on the loop's own thread would wait for ever: it gives up after TIMEOUT and the test fails)."""
    data = _plus(tmp_path / "plus.jsonl")
    went_on = threading.Event()
    write = _reference._write_cache

    async def load() -> list[Problem]:
        loop, writing = asyncio.get_running_loop(), asyncio.Event()

        def slow_write(*args: object, **keywords: object) -> None:
            loop.call_soon_threadsafe(writing.set)  # runs only if the loop is free to run it
            if not went_on.wait(TIMEOUT):
                raise AssertionError("the loop stood still while the cache was written")
            write(*args, **keywords)  # type: ignore[arg-type]

        async def beside() -> None:
            await writing.wait()
            went_on.set()

        monkeypatch.setattr(_reference, "_write_cache", slow_write)
        async with FakeSandbox() as pool:
            watcher = asyncio.ensure_future(beside())
            problems = await prepare_benchmark("humaneval-plus", data, pool=pool, cache_dir=tmp_path)
            await watcher
            return problems

    problems = asyncio.run(asyncio.wait_for(load(), 2 * TIMEOUT))
    assert [len(p.hidden_tests) for p in problems] == [2, 40]
    assert len(next(tmp_path.glob("humanevalplus-*.v6.jsonl")).read_text().splitlines()) == 3


def test_a_warm_load_lets_the_loop_run_between_the_packed_values_of_one_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache line can hold tens of megabytes of packed values (HumanEval/15's: 63 MB); decoding them one
    after another would hold up the loop that feeds the workers, so it runs between them."""
    record: dict[str, object] = {"task_id": "HumanEval/0", "prompt": "def big(n):\n", "entry_point": "big"}
    record |= {"canonical_solution": "    return 'ab' * n\n", "base_input": [[5000 + i] for i in range(3)], "atol": 0}
    data = tmp_path / "plus.jsonl"
    data.write_text(json.dumps(record | {"plus_input": []}) + "\n")
    ticks, seen = [0], []
    from_json = Packed.from_json

    def counted(found: dict[str, object], shelf: Shelf) -> Packed:
        seen.append(ticks[0])  # how many turns the loop had taken when this value was read
        return from_json(found, shelf)

    async def load() -> list[Problem]:
        async def turning() -> None:
            while True:
                ticks[0] += 1
                await asyncio.sleep(0)

        async with FakeSandbox() as pool:
            turner = asyncio.ensure_future(turning())
            problems = await prepare_benchmark("humaneval-plus", data, pool=pool, cache_dir=tmp_path)
            turner.cancel()
            return problems

    cold = asyncio.run(load())
    monkeypatch.setattr(Packed, "from_json", counted)
    warm = asyncio.run(load())
    assert warm[0].hidden_tests == cold[0].hidden_tests
    assert len(seen) == 3 and seen[0] < seen[1] < seen[2]  # the loop turned between each two


def test_mbpp_plus_inputs_the_cache_keeps_load_warm_as_they_were_computed(tmp_path: Path) -> None:
    """The cache keeps each task's inputs as computing its outputs wrote them; where JSON would not give an
    input back exactly (MBPP+ restores tuples), only its source is kept, and its tests evaluate that."""
    records = []
    for number, inputs in ((2, [[[3, 4], [5, 6]]]), (3, [[[1, 2]], [[7]]])):
        record: dict[str, object] = {"task_id": f"Mbpp/{number}", "entry_point": "f", "atol": 0}
        record["prompt"] = '"""\nDo it.\nassert f(1) == 1\n"""\n'
        record |= {"canonical_solution": "def f(*a):\n    return len(a)\n", "base_input": inputs, "plus_input": []}
        records.append(json.dumps(record) + "\n")
    data = tmp_path / "MbppPlus.jsonl"
    data.write_text("".join(records))

    cold, warm = asyncio.run(_cold_then_warm("mbpp-plus", data, tmp_path))
    written = [
        [(t.expr, t.args, t.expected) for t in p.hidden_tests if isinstance(t, CallTest)] for p in (*cold, *warm)
    ]
    assert written[:2] == written[2:]
    assert written[0] == [("candidate((3, 4), (5, 6))", None, 2)]
    assert written[1] == [("candidate([1, 2])", "[[1, 2]]", 1), ("candidate([7])", "[[7]]", 1)]
    (cache,) = tmp_path.glob("mbppplus-*.v6.jsonl")
    tuples, lists = (json.loads(line) for line in cache.read_text().splitlines()[1:])
    assert tuples["expressions"] == ["candidate((3, 4), (5, 6))"] and "arguments" not in tuples
    assert lists["arguments"] == ["[[1, 2]]", "[[7]]"]
