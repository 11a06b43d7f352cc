"""Progress of long jobs (``check``, ``run``) on standard error: a ``rich`` bar (done/total, rate, ETA,
and a detail such as tokens and cost) on a terminal; elsewhere (CI logs, pipes) a plain line per tenth of
the work (and at least every 30 s), once a phase has run for a couple of seconds, so short jobs print
nothing extra. Work already done when a phase starts (a resumed run's) counts in done/total, not in the
rate. Downloads (phases named ``downloading ...``) count bytes: sizes and rates in kB/MB/GB. ``rich`` is
imported only when a bar is drawn."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, TextIO

from refinelab._progress import DOWNLOADING

QUIET_SECONDS = 2.0
"""Plain lines start only after a phase has run this long."""
PLAIN_EVERY = 30.0
"""A plain line at least this often (seconds) while a slow tenth is under way."""


class ProgressDisplay:
    """A :data:`refinelab._progress.ProgressHook` that draws; use as a context manager."""

    def __init__(self, stream: TextIO, *, tty: bool | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.tty = stream.isatty() if tty is None else tty
        self.clock = clock
        self.phase: str | None = None
        self.started = self.last = 0.0
        self.shown = self.base = 0
        self._bar: Any = None
        self._task: Any = None
        self.gone = False
        """The stream's reader went away: nothing more is written."""

    def __enter__(self) -> ProgressDisplay:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def __call__(self, what: str, done: int, total: int, detail: str = "") -> None:
        """Show that ``done`` of ``total`` units of ``what`` are finished (``detail``: more to say, such as
        tokens and cost so far; ``total`` 0: unknown). Once the stream is gone (its reader quit:
        ``2>&1 | head``) nothing more is shown, and the work goes on: a display never stops the job it shows."""
        if self.gone:
            return
        try:
            if what != self.phase:
                self._start(what, done, total, detail)
            if self.tty:
                self._bar.update(self._task, completed=done, total=total or None, detail=detail)
            else:
                self._line(done, total, detail)
        except BrokenPipeError:
            self.gone, self._bar = True, None

    def note(self, text: str) -> None:
        """Write a line of its own (a header before the work starts); like the bar, nothing once the
        stream's reader has gone, and the work goes on."""
        if self.gone:
            return
        try:
            self.stream.write(f"{text}\n")
            self.stream.flush()
        except BrokenPipeError:
            self.gone = True

    def _start(self, what: str, done: int, total: int, detail: str) -> None:
        self.close()
        self.phase, self.started, self.shown, self.base = what, self.clock(), 0, done
        self.last = self.started
        if self.tty:
            self._bar = _rich_bar(self.stream, in_bytes=what.startswith(DOWNLOADING))
            self._bar.start()
            self._task = self._bar.add_task(what, total=total or None, completed=done, detail=detail)

    def _line(self, done: int, total: int, detail: str) -> None:
        now = self.clock()
        decile = 10 * done // max(total, 1)
        due = (decile > self.shown and decile > 0) or now - self.last >= PLAIN_EVERY
        if not due or now - self.started < QUIET_SECONDS or done <= self.base:
            return
        self.shown, self.last = decile, now
        rate = (done - self.base) / (now - self.started)
        eta = _duration((total - done) / rate) if rate > 0 else "?"
        if self.phase is not None and self.phase.startswith(DOWNLOADING):
            self.stream.write(f"{self.phase}: {_bytes_line(done, total, rate, eta)}\n")
        else:
            self.stream.write(f"{self.phase}: {done:,}/{total:,} ({100 * done / max(total, 1):.0f}%) · ")
            self.stream.write(f"{rate:,.1f}/s · ETA {eta}{f' · {detail}' if detail else ''}\n")
        self.stream.flush()

    def close(self) -> None:
        """End the current bar (if any)."""
        if self._bar is not None:
            bar, self._bar, self._task = self._bar, None, None
            try:
                bar.stop()
            except BrokenPipeError:
                self.gone = True


def _bytes_line(done: int, total: int, rate: float, eta: str) -> str:
    """``12.3 MB/100.0 MB (12%) · 5.1 MB/s · ETA 18s`` (without a total: size and rate only)."""
    if not total:
        return f"{_size(done)} · {_size(rate)}/s"
    return f"{_size(done)}/{_size(total)} ({100 * done / total:.0f}%) · {_size(rate)}/s · ETA {eta}"


def _size(count: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count:.0f} B"


def _duration(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}m {whole % 60:02d}s" if whole >= 60 else f"{whole}s"


def _rich_bar(stream: TextIO, *, in_bytes: bool = False) -> Any:
    """A rich Progress drawing description, bar, done/total, rate, time left and the detail on ``stream``
    (sizes and transfer rate when the phase counts bytes)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )
    from rich.text import Text

    if in_bytes:
        sizes = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
        return Progress(*sizes, TimeRemainingColumn(), console=Console(file=stream))

    class Rate(ProgressColumn):
        """Units per second."""

        def render(self, task: Any) -> Text:
            return Text("" if task.speed is None else f"{task.speed:,.1f}/s", style="progress.data.speed")

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[detail]}"),
    )
    return Progress(*columns, console=Console(file=stream))
