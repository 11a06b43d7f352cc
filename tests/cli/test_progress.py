"""``run``'s progress: the display ``check`` uses (a rich bar with done/total, rate and ETA on a terminal,
a line per tenth elsewhere), with tokens and cost; cost is ``unknown`` until a price is known."""

from __future__ import annotations

import io

from refinelab.cli._run import TerminalProgress, run_detail
from refinelab.experiment import Progress
from refinelab.records import Spend, Usage


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_lines_off_a_terminal_count_only_this_invocations_rate() -> None:
    stream, clock = io.StringIO(), Clock()
    display = TerminalProgress(stream, tty=False, clock=clock)
    progress = Progress(total=20, skipped=5, spend=Spend(Usage(1234), None), on_update=display.update)
    progress.on_update(progress)
    for _ in range(15):
        clock.now += 1.0
        progress.done += 1
        progress.on_update(progress)
    lines = stream.getvalue().splitlines()
    # quiet for 2 s, then one line per tenth: 1 unit per second, the 5 from before not in the rate
    assert lines[0] == "trajectories: 7/20 (35%) · 1.0/s · ETA 13s · 1,234 tokens · cost unknown · 5 from before"
    assert lines[-1].startswith("trajectories: 20/20 (100%) · 1.0/s · ETA 0s") and len(lines) == 8


def test_cost_is_unknown_until_a_price_is_known() -> None:
    assert "cost unknown" in run_detail(Progress(total=3))  # nothing spent yet: not $0.0000
    assert "cost unknown" in run_detail(Progress(total=3, done=1, spend=Spend(Usage(10, 2), None)))
    assert "12 tokens · cost $0.0012" in run_detail(Progress(total=3, done=1, spend=Spend(Usage(10, 2), 0.0012)))
    assert "2 infrastructure failures" in run_detail(Progress(total=3, failed=2))


def test_a_bar_on_a_terminal() -> None:
    stream, clock = io.StringIO(), Clock()
    display = TerminalProgress(stream, tty=True, clock=clock)
    progress = Progress(total=4, spend=Spend(Usage(50, 10), 0.25), on_update=display.update)
    progress.on_update(progress)
    progress.done = 2
    progress.on_update(progress)
    display.finish()
    drawn = stream.getvalue()
    assert "trajectories" in drawn and "2/4" in drawn and "60 tokens · cost $0.2500" in drawn and "━" in drawn


def test_quiet_progress_writes_nothing() -> None:
    stream = io.StringIO()
    TerminalProgress(stream, quiet=True).update(Progress(total=3, done=1))
    assert stream.getvalue() == ""


def test_money_is_never_a_false_zero_nor_a_true_cost_shown_as_zero() -> None:
    from refinelab._words import dollars

    assert [dollars(v) for v in (None, 0.0, 0.00001, 0.00005, 0.0012)] == [
        "unknown",
        "$0",
        "<$0.0001",
        "$0.0001",
        "$0.0012",
    ]
    tiny = Progress(total=3, done=1, spend=Spend(Usage(10, 2), 0.000003))
    assert "cost <$0.0001" in run_detail(tiny)  # a known price, too small for four places: not $0.0000
