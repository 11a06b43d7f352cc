"""The pool's queue: how a free worker's next job is cut from the programs waiting."""

from __future__ import annotations

import asyncio

from refinelab.problems import CallTest
from refinelab.sandbox import Limits, Suite
from refinelab.sandbox._queue import Placement, Unit, UnitQueue, current_placement, placed

INPUTS = Suite.of([CallTest("f(1)", 1)], entry_point="f").inputs(Limits())
STDIO = Suite.of([], kind="stdio").inputs(Limits())


def units(count: int, **kw: object) -> list[Unit]:
    loop = asyncio.new_event_loop()
    placement = kw.pop("placement", Placement())
    limits = kw.pop("limits", Limits())
    inputs = kw.pop("inputs", INPUTS)
    found = [
        Unit((f"p{i}", inputs), limits, False, placement, loop.create_future(), f"p{i}")  # type: ignore[arg-type]
        for i in range(count)
    ]
    loop.close()
    return found


def test_a_job_takes_its_share_of_what_waits_and_single_programs_at_the_end() -> None:
    queue = UnitQueue()
    for unit in units(10):
        queue.put(unit)
    sizes = []
    while taken := queue.take(workers=4, batch_size=32):
        sizes.append(len(taken))
    assert sizes == [3, 2, 2, 1, 1, 1]  # ceil(10/4), ceil(7/4), ceil(5/4), ...
    for unit in units(100):
        queue.put(unit)
    assert len(queue.take(workers=2, batch_size=32)) == 32  # never past the batch size


def test_continuations_go_first_and_only_compatible_programs_share_a_job() -> None:
    queue = UnitQueue()
    fresh, urgent = units(2), units(2, placement=Placement(urgent=True))
    other = units(1, limits=Limits(cpu_seconds=0.1))
    alone = units(1, placement=Placement(alone=True))
    stdio = units(2, inputs=STDIO)
    for unit in [*fresh, *other, *alone, *stdio, *urgent]:
        queue.put(unit)
    assert queue.take(workers=1, batch_size=32) == urgent
    assert queue.take(workers=1, batch_size=32) == fresh  # the next has other limits
    assert queue.take(workers=1, batch_size=32) == other
    assert queue.take(workers=1, batch_size=32) == alone
    assert queue.take(workers=1, batch_size=32) == stdio[:1]  # a stdio program runs alone
    assert queue.take(workers=1, batch_size=32) == stdio[1:]
    assert queue.take(workers=1, batch_size=32) == []


def test_a_program_whose_caller_gave_up_is_not_run() -> None:
    queue = UnitQueue()
    first, second = units(2)
    first.done.cancel()
    queue.put(first)
    queue.put(second)
    assert queue.take(workers=1, batch_size=32) == [second]


def test_the_placement_holds_within_its_block_only() -> None:
    assert current_placement() == Placement()
    with placed(Placement(urgent=True)):
        assert current_placement().urgent
    assert current_placement() == Placement()


def test_urgent_programs_share_a_job_only_up_to_a_stages_worth_of_tests() -> None:
    """A program's later stages are large: third stages (512 tests) get a job each, second stages (64) share
    one eight at a time, while fresh programs batch as before whatever their size."""
    from refinelab.sandbox._queue import URGENT_TESTS

    def inputs(count: int) -> object:
        return Suite.of([CallTest(f"f({i})", i) for i in range(count)], entry_point="f").inputs(Limits())

    urgent = Placement(urgent=True)
    queue = UnitQueue()
    for unit in [
        *units(3, placement=urgent, inputs=inputs(URGENT_TESTS)),
        *units(10, placement=urgent, inputs=inputs(64)),
    ]:
        queue.put(unit)
    assert [len(queue.take(workers=1, batch_size=32)) for _ in range(5)] == [1, 1, 1, 8, 2]
    for unit in units(3, inputs=inputs(URGENT_TESTS)):
        queue.put(unit)
    assert len(queue.take(workers=1, batch_size=32)) == 3
