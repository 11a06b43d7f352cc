"""The progress display: done/total, ETA, tokens and cost; a line per tenth when not on a terminal."""

from __future__ import annotations

import io

from refinelab.cli._run import TerminalProgress
from refinelab.experiment import Progress
from refinelab.records import Spend, Usage


def test_progress_lines_off_a_terminal() -> None:
    stream = io.StringIO()
    display = TerminalProgress(stream)
    progress = Progress(total=20, skipped=5, spend=Spend(Usage(1234), None), on_update=display.update)
    for _ in range(15):
        progress.done += 1
        progress.on_update(progress)
    lines = stream.getvalue().splitlines()
    assert (
        lines[0].startswith("[6/20] (5 from before) ETA") and "1,234 tokens" in lines[0] and "cost unknown" in lines[0]
    )
    assert lines[-1].startswith("[20/20]") and len(lines) == 8  # one per tenth reached: 30%, 35%, 40% ... 100%


def test_quiet_progress_writes_nothing() -> None:
    stream = io.StringIO()
    TerminalProgress(stream, quiet=True).update(Progress(total=3, done=1))
    assert stream.getvalue() == ""
