"""Arguments written as Python source: a list of scalars is written at C speed, as item by item."""

from __future__ import annotations

import pytest

from refinelab.problems._literal import to_source


def _item_by_item(value: object) -> str:
    if type(value) is list:
        return "[" + ", ".join(map(_item_by_item, value)) + "]"
    return to_source(value)


@pytest.mark.parametrize(
    "value",
    [
        [],
        [1, -2, 3],
        ["a", "b'c", '"', "\n"],
        [True, None, "x"],
        [10**4000, 1],
        [1, -(10**4000)],
        [0.1, 1e300, -0.0],
        [float("nan"), 1.0],
        [float("-inf")],
        [1, 2.0],
        [True, 1],
        [[1, 2], [3], []],
        [(1,), {2: "x"}, {3}],
    ],
)
def test_a_list_is_written_as_its_items_are(value: list[object]) -> None:
    written = to_source(value)
    assert written == _item_by_item(value)
    has_nan = any(isinstance(v, float) and v != v for v in value)
    assert has_nan or eval(written, {}) == value  # our own literal
