"""One self-contained HTML page: the headline table with intervals first, the figures (matplotlib,
each downloadable as SVG and PNG), then every table of the text report. No scripts, no network.

The fragments (:func:`overview_html`, :func:`tables_html`, :data:`REPORT_CSS`) are shared with the
viewer, so both show the same table the same way.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from html import escape

from refinelab._words import counted
from refinelab.metrics import Interval
from refinelab.report._build import Report
from refinelab.report._figures import Figure, figures_missing, render_figures
from refinelab.report._overview import OverviewRow, OverviewTable
from refinelab.report._text import HEADLINE, HEADLINE_TAIL, failure_lines, header_lines, iteration_columns, tables

REPORT_CSS = """
.rl-table { border-collapse: collapse; margin: .4em 0 1.4em; font-variant-numeric: tabular-nums; }
.rl-table caption { text-align: left; font-weight: 600; padding: .3em 0; }
.rl-table th, .rl-table td { border-bottom: 1px solid #ddd; padding: .3em .6em; text-align: right; }
.rl-table td { vertical-align: top; }
.rl-table th:first-child, .rl-table td:first-child { text-align: left; }
.rl-table thead th { background: #f4f6f8; font-weight: 600; }
.rl-table .ci { display: block; color: #667; font-size: .8em; white-space: nowrap; }
.rl-table .up { color: #17803d; } .rl-table .down { color: #b3261e; }
.rl-table .label { max-width: 34em; }
.rl-figure { margin: 0 0 1.6em; }
.rl-figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
.rl-figure figcaption { font-weight: 600; margin-bottom: .3em; }
.rl-downloads a { margin-right: .8em; }
"""
"""Styles of the tables and figures (``rl-`` classes), shared with the viewer."""

_PAGE_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }
.meta { color: #555; margin: .2em 0; }
h2 { margin-top: 1.6em; }
"""


def render_html(report: Report) -> str:
    """The report as one HTML document with every figure of :func:`figure_titles`; without matplotlib (the
    ``view`` extra) the page has every table and says that figures need it."""
    missing = figures_missing()
    figures = () if missing else render_figures(report)
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>refinelab report {escape(report.run.id)}</title><style>{_PAGE_CSS}{REPORT_CSS}</style></head><body>",
        f"<h1>refinelab report: {escape(report.run.name)}</h1>",
        *(f"<p class='meta'>{escape(line)}</p>" for line in header_lines(report)),
        f"<h2>{escape(HEADLINE)}, with 95% bootstrap intervals over problems</h2>",
        *(overview_html(table) for table in report.overview),
        "<h2>Figures</h2>",
        *(_figure(figure) for figure in figures),
        *([f"<p class='rl-missing'>{escape(missing[0].upper() + missing[1:])}.</p>"] if missing else []),
        "<h2>Every table</h2>",
        tables_html(report),
        *(f"<p>{escape(line)}</p>" for line in failure_lines(report)),
        "</body></html>",
    ]
    return "\n".join(parts)


def overview_html(table: OverviewTable) -> str:
    """The headline table for one slice of the problems: each number with its interval below it."""
    depth = max((len(r.iterations) for r in table.rows), default=1)
    head = ["configuration", "n", *iteration_columns(depth), *HEADLINE_TAIL]
    caption = f"{table.name}: {counted(table.problems, 'problem')}"
    body = "".join(_overview_row(row, depth) for row in table.rows)
    return (
        f"<table class='rl-table rl-overview' data-slice='{escape(table.name)}'><caption>{escape(caption)}</caption>"
        f"<thead><tr>{''.join(f'<th>{escape(h)}</th>' for h in head)}</tr></thead><tbody>{body}</tbody></table>"
    )


def _overview_row(row: OverviewRow, depth: int) -> str:
    cells = [f"<td class='label'>{escape(row.label)}</td>", f"<td>{row.trajectories}</td>"]
    cells.append(_cell("first", row.iterations[0], _percent))
    flat = row.sampled or len(row.iterations) < 2  # samples are not iterations; single pass never refined
    for i in range(1, depth):
        if flat:
            cells.append("<td data-field='it'>–</td>")
        else:
            at = min(i, len(row.iterations) - 1)
            cells.append(_change_cell(row.iterations[at], row.changes[at - 1]))
    cells.append(_cell("final", row.final, _percent))
    cells.append(_cell("regr", row.regression_errors, lambda v: f"{v:.0f}"))
    cells.append(_cell("avg-it", row.refinements, lambda v: f"{v:.2f}"))
    unit = " tok" if row.cost_unit == "tokens" else ""
    cells.append(_cell("cost", row.cost_multiple, lambda v: f"{v:.2f}x{unit}", lambda v: f"{v:.2f}"))
    return f"<tr data-config='{escape(row.config)}'>{''.join(cells)}</tr>"


def _percent(value: float) -> str:
    return f"{100 * value:.1f}"


def _cell(
    field: str, interval: Interval | None, show: Callable[[float], str], bare: Callable[[float], str] | None = None
) -> str:
    """A number over its interval (``bare`` formats the interval's ends, without a unit)."""
    bare = bare or show
    if interval is None:
        return f"<td data-field='{field}'>–</td>"
    values = f"data-value='{interval.value!r}' data-low='{interval.low!r}' data-high='{interval.high!r}'"
    return (
        f"<td data-field='{field}' {values}><span class='v'>{show(interval.value)}</span>"
        f"<span class='ci'>[{bare(interval.low)}, {bare(interval.high)}]</span></td>"
    )


def _change_cell(value: Interval, change: Interval) -> str:
    direction = "up" if change.value > 0 else "down" if change.value < 0 else ""
    delta = f"{100 * change.value:+.1f} [{100 * change.low:+.1f}, {100 * change.high:+.1f}]"
    return (
        f"<td data-field='it' data-value='{value.value!r}' data-change='{change.value!r}'>"
        f"<span class='v'>{_percent(value.value)}</span><span class='ci'>[{_percent(value.low)}, "
        f"{_percent(value.high)}]</span><span class='ci {direction}'>{delta}</span></td>"
    )


def tables_html(report: Report) -> str:
    """Every table of the text report, as HTML tables."""
    return "\n".join(_table(table.title, table.header, table.body) for table in tables(report))


def _table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return (
        f"<table class='rl-table'><caption>{escape(title)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def _figure(figure: Figure) -> str:
    svg = "data:image/svg+xml;base64," + base64.b64encode(figure.svg.encode()).decode()
    png = "data:image/png;base64," + base64.b64encode(figure.png).decode()
    return (
        f"<figure class='rl-figure' id='figure-{figure.name}'><figcaption>{escape(figure.title)}</figcaption>"
        f"<img src='{svg}' alt='{escape(figure.title)}'>"
        f"<div class='rl-downloads'><a download='{figure.name}.svg' href='{svg}'>download SVG</a>"
        f"<a download='{figure.name}.png' href='{png}'>download PNG</a></div></figure>"
    )
