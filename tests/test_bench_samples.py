"""``bench/real_samples.py``: the real programs the speed benches score, in the sets the docs quote."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.test_bench_predict import _bench_module


@pytest.fixture(scope="module")
def samples() -> Iterator[ModuleType]:
    yield from _bench_module("real_samples")


def test_the_hundred_set_is_each_of_tens_programs_ten_times_as_distinct_programs_that_behave_alike(
    samples: ModuleType, shared_data: Path
) -> None:
    ten, hundred = samples.rows(shared_data, "ten"), samples.rows(shared_data, "hundred")
    assert len(ten) == 1640 and len(hundred) == 16_400
    assert set(Counter(row["task_id"] for row in hundred).values()) == {100}
    assert _distinct(hundred) == 10 * _distinct(ten)  # each of ten's programs in ten forms, none shared
    first = hundred[:100]  # HumanEval/0: ten's ten, then nine rounds of variants of them
    assert first[:10] == ten[:10]
    for number in range(1, 10):
        for row, original in zip(first[10 * number : 10 * number + 10], ten[:10]):
            field = "completion" if "completion" in original else "solution"
            assert row == {**original, field: f"{original[field]}\n# variant {number}\n"}


def _distinct(rows: list[dict[str, str]]) -> int:
    return len({json.dumps(row, sort_keys=True) for row in rows})
