from __future__ import annotations

import gc

from refinelab._collection import BATCH_THRESHOLDS, batch_pace


def test_batch_pace_slows_the_collector_inside_and_puts_it_back_after() -> None:
    found = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with batch_pace():
            assert gc.get_threshold() == BATCH_THRESHOLDS
        assert gc.get_threshold() == (700, 10, 10)
        try:
            with batch_pace():
                raise KeyError("stop")
        except KeyError:
            pass
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*found)
