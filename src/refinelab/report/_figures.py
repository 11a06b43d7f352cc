"""Figures a paper could use, drawn with matplotlib (the optional ``view`` extra, imported lazily).

Every configuration keeps one colour, marker and number (``[1]``, ``[2]``...) across the figures,
and legends carry the full label, so the same-size and the smaller critic never read alike. Single
pass and sampling are horizontal reference lines (they do not iterate), so no line hides them.
Figures are built on :class:`matplotlib.figure.Figure` directly, not pyplot: no global figure state,
no GUI backend.
"""

from __future__ import annotations

import io
import math
import textwrap
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from refinelab._words import counted
from refinelab.errors import MissingDependency
from refinelab.metrics import Interval, TokenPoint, pareto_frontier
from refinelab.report._build import Report, Row
from refinelab.report._overview import OverviewRow

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure as MplFigure

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
WIDTH = 7.5
"""Figure width in inches (a two-column paper's full width)."""
MAX_BANDS = 3
"""Above this many iterating configurations, intervals are bars beside each other, not bands (which
would cover one another)."""
LEGEND_CHARS = 80
"""Characters per legend line: at 8 pt, a line this long fits the figure's width beside its marker."""
HEAT_COLUMNS = 2
"""Confusion matrices per row: room for each critic's full label above its matrix."""
_LOCK = threading.Lock()  # rc_context changes matplotlib's global settings while a figure is drawn
_STYLE = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "legend.frameon": False,
    "svg.fonttype": "none",  # text stays text: searchable, and editable for a paper
    "svg.hashsalt": "refinelab",  # stable ids: the same run draws the same file
}


@dataclass(frozen=True)
class Figure:
    """One figure, in both formats."""

    name: str
    """File name without extension (``pass-by-iteration``)."""
    title: str
    """What it shows, in a few words."""
    svg: str
    """The figure as an SVG document."""
    png: bytes
    """The figure as a PNG image (200 dpi)."""


@dataclass(frozen=True)
class _Style:
    number: int
    color: str
    marker: str

    def legend(self, label: str) -> str:
        return f"[{self.number}] {label}"


FIGURES: tuple[tuple[str, str], ...] = (
    ("pass-by-iteration", "Pass@1 by iteration"),
    ("cost-vs-pass", "Cost against pass@1"),
    ("tokens-vs-pass", "Tokens (thinking included) against pass@1, per strategy and effort"),
    ("critic-confusion", "Critic verdicts against the hidden tests"),
    ("first-pass", "Iterations to first pass"),
)
"""``(name, title)`` of every figure refinelab draws, in the order reports show them."""


def figure_titles(report: Report | None = None) -> tuple[tuple[str, str], ...]:
    """``(name, title)`` of the figures ``report`` has data for (every figure when ``report`` is None),
    in order, without drawing anything: ``report --html`` and the viewer both show exactly these."""
    if report is None:
        return FIGURES
    has = {
        "pass-by-iteration": bool(_headline_rows(report)),
        "cost-vs-pass": bool(report.rows),
        "tokens-vs-pass": report.efforts.shown,
        "critic-confusion": bool(_judged(report.rows)),
        "first-pass": bool(report.rows),
    }
    return tuple((name, title) for name, title in FIGURES if has[name])


def render_figure(report: Report, name: str) -> Figure:
    """One figure of :func:`figure_titles` (KeyError for another name); MissingDependency when
    matplotlib is not installed."""
    title = dict(figure_titles(report))[name]
    _require()
    with _LOCK, _style():
        return Figure(name, title, *_save(_draw(report, name)))


def _draw(report: Report, name: str) -> MplFigure:
    """The matplotlib figure itself, laid out (tests measure it)."""
    _require()
    styles = {row.label: _style_of(i) for i, row in enumerate(report.rows)}
    draw: dict[str, Callable[[], MplFigure]] = {
        "pass-by-iteration": lambda: _iterations(report, styles),
        "cost-vs-pass": lambda: _pareto(report.rows, _headline(report), styles),
        "tokens-vs-pass": lambda: _tokens(report.efforts.points, styles),
        "critic-confusion": lambda: _confusions(report.rows, styles),
        "first-pass": lambda: _first_pass(report.rows, styles),
    }
    figure = draw[name]()
    figure.draw_without_rendering()
    return figure


def render_figures(report: Report) -> tuple[Figure, ...]:
    """Every figure the report has data for; MissingDependency when matplotlib is not installed."""
    _require()
    return tuple(render_figure(report, name) for name, _ in figure_titles(report))


def _headline(report: Report) -> dict[str, OverviewRow]:
    return {row.label: row for row in report.overview[0].rows} if report.overview else {}


def _headline_rows(report: Report) -> list[OverviewRow]:
    headline = _headline(report)
    return [headline[row.label] for row in report.rows if row.label in headline]


def _judged(rows: Sequence[Row]) -> list[Row]:
    return [r for r in rows if r.judged.confusion is not None and r.judged.confusion.total]


def _style_of(index: int) -> _Style:
    return _Style(index + 1, COLORS[index % len(COLORS)], MARKERS[index % len(MARKERS)])


FIGURES_NEED = "figures need matplotlib: pip install 'refinelab[view]' (or the dev extra)"
"""What to say where figures cannot be drawn."""


def figures_missing() -> str | None:
    """:data:`FIGURES_NEED` when matplotlib cannot be imported (pages are written without figures and say
    so), else ``None``."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return FIGURES_NEED
    return None


def _require() -> None:
    if figures_missing() is not None:
        raise MissingDependency(FIGURES_NEED)


@contextmanager
def _style() -> Iterator[None]:
    import matplotlib

    with matplotlib.rc_context(cast(Any, _STYLE)):
        yield


def _new(height: float) -> MplFigure:
    from matplotlib.figure import Figure as MplFigure

    return MplFigure(figsize=(WIDTH, height), layout="constrained")


def _save(figure: MplFigure) -> tuple[str, bytes]:
    svg, png = io.StringIO(), io.BytesIO()
    figure.savefig(svg, format="svg", metadata={"Date": None})
    figure.savefig(png, format="png", dpi=200)
    return svg.getvalue(), png.getvalue()


def _legend(figure: MplFigure, plot: float) -> None:
    """The full labels under a plot ``plot`` inches high, one entry per configuration, each wrapped
    between words to the figure's width (a model name is never split, nothing is cut at the edges); the
    figure grows to hold them."""
    handles, labels = [], []
    for axes in figure.axes:
        found = axes.get_legend_handles_labels()
        handles += found[0]
        labels += found[1]
    wrapped = [_wrap(label) for label in labels]
    figure.legend(handles, wrapped, loc="outside lower center", ncols=1, fontsize=8, handlelength=3)
    lines = sum(label.count("\n") + 1 for label in wrapped)
    figure.set_size_inches(WIDTH, plot + 0.14 * lines + 0.06 * len(wrapped) + 0.3)


def _wrap(label: str) -> str:
    """A legend label in lines of at most :data:`LEGEND_CHARS`, broken at spaces (``·`` and ``/`` stand
    between spaces in a configuration's label), continuation lines indented."""
    lines = textwrap.wrap(label, LEGEND_CHARS, subsequent_indent="    ", break_on_hyphens=False)
    return "\n".join(lines)


# --- pass@1 by iteration ---------------------------------------------------------------------------


def _iterations(report: Report, styles: dict[str, _Style]) -> MplFigure:
    rows = _headline_rows(report)
    depth = max((len(r.iterations) for r in rows if _iterates(r)), default=1)
    figure = _new(3.2)
    axes = figure.subplots()
    right = max(depth - 1, 1)
    bands = sum(_iterates(r) for r in rows) <= MAX_BANDS
    for i, row in enumerate(rows):
        style, offset = styles[row.label], _dodge(i, len(rows), bands)
        if _iterates(row):
            _iteration_line(axes, row, style, offset, bands)
        else:
            _reference_line(axes, row, style, (offset, right))
    what = "bands" if bands else "bars"
    problems = counted(report.overview[0].problems, "problem")
    axes.set_title(f"Pass@1 on the hidden tests by iteration ({what}: 95% bootstrap intervals, {problems})")
    axes.set_xlabel("refinement iteration (0 = first attempt)")
    axes.set_ylabel("pass@1 (%)")
    axes.set_xticks(range(right + 1))
    axes.set_xlim(-0.25 * right, right + 0.25 * right)
    _percent_limits(axes, [i for r in rows for i in (*r.iterations, r.final)])
    _legend(figure, 3.2)
    return figure


def _iterates(row: OverviewRow) -> bool:
    return not row.sampled and len(row.iterations) > 1


def _dodge(index: int, count: int, bands: bool) -> float:
    """How far right of its iteration a configuration's points sit: a little with bands (markers apart),
    more with interval bars, so no two bars of one iteration overlap (spread over half an iteration)."""
    step = 0.03 if bands else min(0.12, 0.5 / max(count - 1, 1))
    return (index - (count - 1) / 2) * step


def _iteration_line(axes: Axes, row: OverviewRow, style: _Style, offset: float, bands: bool) -> None:
    xs = [i + offset for i in range(len(row.iterations))]
    values = [100 * i.value for i in row.iterations]
    lows, highs = [100 * i.low for i in row.iterations], [100 * i.high for i in row.iterations]
    if bands:
        axes.fill_between(xs, lows, highs, color=style.color, alpha=0.12, linewidth=0)
    else:
        errors = [[v - low for v, low in zip(values, lows)], [high - v for v, high in zip(values, highs)]]
        axes.errorbar(xs, values, yerr=errors, color=style.color, capsize=2.5, elinewidth=1.0, linestyle="none")
    axes.plot(xs, values, color=style.color, marker=style.marker, markersize=6 if bands else 5,
              linewidth=1.8 if bands else 1.3, label=style.legend(row.label))  # fmt: skip


def _reference_line(axes: Axes, row: OverviewRow, style: _Style, span: tuple[float, float]) -> None:
    """Single pass (its only attempt) and sampling (its returned answer) across the whole x range."""
    value = row.final if row.sampled else row.iterations[0]
    what = "returned answer of the samples" if row.sampled else "single attempt"
    line = "--" if not row.sampled else ":"
    axes.axhline(100 * value.value, color=style.color, linestyle=line, linewidth=1.6)
    x = (span[1] if row.sampled else 0) + span[0]
    error = [[100 * (value.value - value.low)], [100 * (value.high - value.value)]]
    axes.errorbar([x], [100 * value.value], yerr=error, color=style.color, capsize=4, linewidth=1.2)
    label = f"{style.legend(row.label)} ({what}, reference line; bar: 95% interval)"
    axes.plot(
        [x], [100 * value.value], color=style.color, marker=style.marker, markersize=8, linestyle=line, label=label
    )


def _percent_limits(axes: Axes, intervals: Sequence[Interval]) -> None:
    low = min(100 * i.low for i in intervals)
    high = max(100 * i.high for i in intervals)
    if high == 0:  # nothing passed: the whole scale, so 0% reads as none of 100%, not as a zoomed-in band
        _whole_percent_scale(axes)
        return
    pad = max(5.0, (high - low) * 0.08)
    axes.set_ylim(max(0.0, low - pad) - 2, min(100.0, high + pad) + 2)  # markers at 0 or 100 stay whole


def _whole_percent_scale(axes: Axes) -> None:
    axes.set_ylim(-2, 102)  # markers at 0 or 100 stay whole


# --- Pareto: cost against pass@1 -----------------------------------------------------------------


def _pareto(rows: Sequence[Row], headline: dict[str, OverviewRow], styles: dict[str, _Style]) -> MplFigure:
    dollars = all(r.use.cost_usd is not None for r in rows)
    raw = [(r.use.cost_usd or 0.0) if dollars else r.use.tokens for r in rows]
    scale, unit = _cost_scale(max(raw)) if dollars else (1.0, "tokens per problem")
    points = [(x * scale, r) for x, r in zip(raw, rows)]
    figure = _new(3.4)
    axes = figure.subplots()
    for x, row in points:
        style, found = styles[row.label], headline.get(row.label)
        final = found.final if found else None
        error = [[100 * (final.value - final.low)], [100 * (final.high - final.value)]] if final else None
        axes.errorbar([x], [100 * row.passes.final], yerr=error, color=style.color, marker=style.marker, markersize=8,
                      capsize=3, linestyle="none", label=style.legend(row.label))  # fmt: skip
        crowd = sum(
            _close((x, row.passes.final), (other, r.passes.final), points[-1][0])
            for other, r in points[: rows.index(row)]
        )
        axes.annotate(str(style.number), (x, 100 * row.passes.final), xytext=(6, 4 + 10 * crowd),
                      textcoords="offset points", fontsize=8)  # fmt: skip
    frontier = _frontier([(x, 100 * row.passes.final) for x, row in points])
    axes.step([x for x, _ in frontier], [y for _, y in frontier], where="post", color="#444444", linestyle="--",
              linewidth=1, label="Pareto frontier (nothing cheaper does better)")  # fmt: skip
    axes.set_title("Cost against pass@1 (error bars: 95% bootstrap intervals)")
    axes.set_xlabel(f"mean cost, {unit} (actor + critic)" if dollars else "mean tokens per problem (actor + critic)")
    axes.set_ylabel("pass@1 of the returned answer (%)")
    axes.set_xlim(left=0, right=max(x for x, _ in points) * 1.12 or 1)
    if all(row.passes.final == 0 for row in rows):  # else matplotlib zooms onto a flat line at 0
        _whole_percent_scale(axes)
    _thousands(axes)
    _legend(figure, 3.4)
    return figure


def _close(a: tuple[float, float], b: tuple[float, float], width: float) -> bool:
    """Two points whose number labels would overlap (within 3% of the x range and 3 points of pass@1)."""
    return abs(a[0] - b[0]) <= 0.03 * max(width, 1e-12) and abs(a[1] - b[1]) <= 0.03


def _cost_scale(largest: float) -> tuple[float, str]:
    """Dollars per problem, or per thousand or million problems when one problem costs fractions of a cent."""
    for scale, unit in ((1.0, "USD per problem"), (1e3, "USD per 1,000 problems"), (1e6, "USD per million problems")):
        if largest * scale >= 0.1:
            return scale, unit
    return 1e6, "USD per million problems"


def _frontier(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points no other point beats on both cost (lower) and pass rate (higher), cheapest first."""
    return [points[i] for i in pareto_frontier(points)]


# --- tokens against pass@1, per strategy and effort -------------------------------------------------


def _tokens(points: Sequence[TokenPoint], styles: dict[str, _Style]) -> MplFigure:
    """Each configuration's mean tokens per problem against its pass@1, both with their 95% intervals, and
    the Pareto frontier the metrics marked (nothing uses fewer tokens and passes as often)."""
    figure = _new(3.4)
    axes = figure.subplots()
    for point in points:
        style, tokens, passed = styles[point.label], point.tokens, point.pass_at_1
        x_error = [[tokens.value - tokens.low], [tokens.high - tokens.value]]
        y_error = [[100 * (passed.value - passed.low)], [100 * (passed.high - passed.value)]]
        axes.errorbar([tokens.value], [100 * passed.value], xerr=x_error, yerr=y_error, color=style.color,
                      marker=style.marker, markersize=8, capsize=3, linestyle="none",
                      label=style.legend(point.label))  # fmt: skip
        axes.annotate(str(style.number), (tokens.value, 100 * passed.value), xytext=(6, 4), textcoords="offset points",
                      fontsize=8)  # fmt: skip
    frontier = sorted((p.tokens.value, 100 * p.pass_at_1.value) for p in points if p.frontier)
    axes.step([x for x, _ in frontier], [y for _, y in frontier], where="post", color="#444444", linestyle="--",
              linewidth=1, label="Pareto frontier (nothing with fewer tokens does better)")  # fmt: skip
    axes.set_title("Tokens against pass@1 (error bars: 95% bootstrap intervals, both ways)")
    axes.set_xlabel("mean tokens per problem (prompt + answer + thinking; actor, critic, test-writing)")
    axes.set_ylabel("pass@1 of the returned answer (%)")
    axes.set_xlim(left=0, right=max(p.tokens.high for p in points) * 1.12 or 1)
    _thousands(axes)
    _legend(figure, 3.4)
    return figure


def _thousands(axes: Axes) -> None:
    from matplotlib.ticker import FuncFormatter

    axes.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.4g}"))


# --- critic confusion matrices --------------------------------------------------------------------


def _confusions(rows: Sequence[Row], styles: dict[str, _Style]) -> MplFigure:
    judged = _judged(rows)
    columns = min(len(judged), HEAT_COLUMNS)
    lines = max(len(_panel_title(r, styles[r.label]).splitlines()) for r in judged)
    grid = math.ceil(len(judged) / columns)
    figure = _new((1.9 + 0.15 * lines) * grid + 0.7)
    panels = list(figure.subplots(grid, columns, squeeze=False).flat)
    image = None
    for axes, row in zip(panels, judged):
        image = _matrix(axes, row, styles[row.label])
    for axes in panels[len(judged) :]:
        figure.delaxes(axes)  # an empty slot of the last row
    if image is not None:
        figure.colorbar(
            image, ax=panels[: len(judged)], location="bottom", shrink=0.5, aspect=40, label="share of verdicts"
        )
    return figure


def _matrix(axes: Axes, row: Row, style: _Style) -> Any:
    m = row.judged.confusion
    assert m is not None
    counts = [[m.true_accept, m.false_accept], [m.false_reject, m.true_reject]]
    shares = [[c / m.total for c in line] for line in counts]
    image = axes.imshow(shares, cmap="Blues", vmin=0, vmax=1)
    names = [["true accept", "false accept"], ["false reject", "true reject"]]
    for y, line in enumerate(counts):
        for x, count in enumerate(line):
            dark = shares[y][x] > 0.55
            axes.text(x, y, f"{names[y][x]}\n{count} ({100 * shares[y][x]:.0f}%)", ha="center", va="center",
                      color="white" if dark else "#222222", fontsize=8)  # fmt: skip
    axes.set_xticks([0, 1], ["tests pass", "tests fail"])
    axes.set_yticks([0, 1], ["critic\naccepts", "critic\nrejects"])
    axes.grid(False)
    axes.set_title(_panel_title(row, style), fontsize=8, color=style.color, loc="left")
    return image


def _panel_title(row: Row, style: _Style) -> str:
    m = row.judged.confusion
    assert m is not None
    rates = [
        f"accepts {_share(m.accept_rate.value)} of {counted(m.total, 'verdict')}",
        f"false rejections {_share(m.false_rejection_rate.value)} · false acceptances "
        f"{_share(m.false_acceptance_rate.value)}",
    ]
    return "\n".join([*textwrap.wrap(style.legend(row.label), 40), *rates])


def _share(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


# --- iterations to first pass ---------------------------------------------------------------------


def _first_pass(rows: Sequence[Row], styles: dict[str, _Style]) -> MplFigure:
    last = max((int(k) for r in rows for k in r.passes.first_pass if k != "never"), default=0)
    categories = [str(k) for k in range(last + 1)] + ["never"]  # every attempt from the first, none skipped
    figure = _new(3.0)
    axes = figure.subplots()
    width = 0.8 / len(rows)
    for i, row in enumerate(rows):
        style = styles[row.label]
        shares = [100 * row.passes.first_pass.get(c, 0) / max(row.trajectories, 1) for c in categories]
        xs = [j + (i - (len(rows) - 1) / 2) * width for j in range(len(categories))]
        axes.bar(xs, shares, width=width * 0.92, color=style.color, label=style.legend(row.label),
                 hatch=("", "//", "..", "xx", "\\\\")[i % 5], edgecolor="white", linewidth=0.5)  # fmt: skip
    axes.set_xticks(range(len(categories)), [_attempt_name(c) for c in categories])
    axes.set_xlabel("attempt whose program first passed the hidden tests (0 = first attempt)")
    axes.set_xlim(-0.5, len(categories) - 0.5)
    axes.set_ylabel("trajectories (%)")
    axes.set_title("Iterations to first pass")
    axes.grid(axis="x", visible=False)
    _legend(figure, 3.0)
    return figure


def _attempt_name(category: str) -> str:
    return {"never": "never", "0": "0 (first)"}.get(category, category)
