"""One self-contained HTML page: the tables and inline SVG plots (no scripts, no external files)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from refinelab.report._build import Report, Row
from refinelab.report._text import failure_lines, header_lines, tables

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
WIDTH, HEIGHT, PAD = 560, 300, 48

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; margin: .5em 0 1.5em; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #ddd; padding: .25em .6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
caption { text-align: left; font-weight: 600; padding: .3em 0; }
figure { display: inline-block; margin: 0 1em 1.5em 0; vertical-align: top; }
figcaption { font-weight: 600; }
.meta { color: #555; }
"""


def render_html(report: Report) -> str:
    """The report as one HTML document."""
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>refinelab report {escape(report.run.id)}</title><style>{STYLE}</style></head><body>",
        f"<h1>refinelab report: {escape(report.run.name)}</h1>",
        *(f"<p class='meta'>{escape(line)}</p>" for line in header_lines(report)),
        _figure("Pass@1 by iteration", _iteration_plot(report.rows)),
        _figure("Cost against pass@1 (tokens per task)", _cost_plot(report.rows)),
        *(_figure(f"Iterations to first pass: {row.label}", _histogram(row)) for row in report.rows),
        *(_confusion(row) for row in report.rows if row.confusion is not None),
        *(_table(title, header, rows) for title, header, rows in tables(report)),
        *(f"<p>{escape(line)}</p>" for line in failure_lines(report)),
        "</body></html>",
    ]
    return "\n".join(parts)


def _figure(caption: str, svg: str) -> str:
    return f"<figure><figcaption>{escape(caption)}</figcaption>{svg}</figure>"


def _table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><caption>{escape(title)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _svg(content: Sequence[str], legend: Sequence[str] = ()) -> str:
    keys = "".join(
        f"<rect x='{WIDTH - 170}' y='{14 + 16 * i}' width='10' height='10' fill='{COLORS[i % len(COLORS)]}'/>"
        f"<text x='{WIDTH - 155}' y='{23 + 16 * i}' font-size='11'>{escape(label[:28])}</text>"
        for i, label in enumerate(legend)
    )
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{HEIGHT}' viewBox='0 0 {WIDTH} {HEIGHT}' "
        f"role='img'>{''.join(content)}{keys}</svg>"
    )


def _axes(x_label: str, y_label: str) -> list[str]:
    bottom, right = HEIGHT - PAD, WIDTH - 180
    return [
        f"<line x1='{PAD}' y1='{bottom}' x2='{right}' y2='{bottom}' stroke='#444'/>",
        f"<line x1='{PAD}' y1='{PAD / 2}' x2='{PAD}' y2='{bottom}' stroke='#444'/>",
        f"<text x='{(PAD + right) / 2}' y='{HEIGHT - 10}' font-size='12' text-anchor='middle'>{escape(x_label)}</text>",
        f"<text x='12' y='{HEIGHT / 2}' font-size='12' transform='rotate(-90 12 {HEIGHT / 2})' "
        f"text-anchor='middle'>{escape(y_label)}</text>",
    ]


def _scale(value: float, low: float, high: float, start: float, end: float) -> float:
    return start if high == low else start + (value - low) / (high - low) * (end - start)


def _iteration_plot(rows: Sequence[Row]) -> str:
    depth = max((len(r.by_iteration) for r in rows), default=1)
    top = max((v for r in rows for v in r.by_iteration if v is not None), default=1.0) or 1.0
    content = _axes("iteration", "pass@1 (%)")
    for i, row in enumerate(rows):
        points = [
            (_scale(x, 0, max(depth - 1, 1), PAD, WIDTH - 180), _scale(y, 0, top, HEIGHT - PAD, PAD / 2))
            for x, y in enumerate(row.by_iteration)
            if y is not None
        ]
        color = COLORS[i % len(COLORS)]
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        content.append(f"<polyline fill='none' stroke='{color}' stroke-width='2' points='{path}'/>")
        content += [f"<circle cx='{x:.1f}' cy='{y:.1f}' r='3' fill='{color}'/>" for x, y in points]
    content.append(f"<text x='{PAD - 4}' y='{PAD / 2 + 4}' font-size='11' text-anchor='end'>{100 * top:.0f}</text>")
    return _svg(content, [r.label for r in rows])


def _cost_plot(rows: Sequence[Row]) -> str:
    top_x = max((r.use.tokens for r in rows), default=1.0) or 1.0
    content = _axes("tokens per task", "pass@1 (%)")
    for i, row in enumerate(rows):
        x = _scale(row.use.tokens, 0, top_x, PAD, WIDTH - 180)
        y = _scale(row.final, 0, 1, HEIGHT - PAD, PAD / 2)
        content.append(f"<circle cx='{x:.1f}' cy='{y:.1f}' r='5' fill='{COLORS[i % len(COLORS)]}'/>")
    content.append(f"<text x='{WIDTH - 180}' y='{HEIGHT - PAD + 14}' font-size='11'>{top_x:,.0f}</text>")
    return _svg(content, [r.label for r in rows])


def _histogram(row: Row) -> str:
    items = list(row.first_pass.items())
    top = max((v for _, v in items), default=1) or 1
    width = (WIDTH - 180 - PAD) / max(len(items), 1)
    content = _axes("attempt of first pass", "trajectories")
    for i, (label, count) in enumerate(items):
        height = _scale(count, 0, top, 0, HEIGHT - 1.5 * PAD)
        x, y = PAD + i * width + 4, HEIGHT - PAD - height
        content.append(
            f"<rect x='{x:.1f}' y='{y:.1f}' width='{width - 8:.1f}' height='{height:.1f}' fill='{COLORS[0]}'/>"
        )
        content.append(
            f"<text x='{x + (width - 8) / 2:.1f}' y='{HEIGHT - PAD + 14}' font-size='11' text-anchor='middle'>"
            f"{escape(label)}</text><text x='{x + (width - 8) / 2:.1f}' y='{y - 3:.1f}' font-size='11' "
            f"text-anchor='middle'>{count}</text>"
        )
    return _svg(content)


def _confusion(row: Row) -> str:
    m = row.confusion
    assert m is not None
    total = max(m.total, 1)

    def cell(count: int) -> str:
        shade = int(255 - 155 * count / total)
        return f"<td style='background: rgb({shade},{shade},255)'>{count}</td>"

    return (
        f"<table><caption>Critic confusion matrix: {escape(row.label)}</caption>"
        "<tr><th></th><th>tests pass</th><th>tests fail</th></tr>"
        f"<tr><th>critic accepts</th>{cell(m.true_accept)}{cell(m.false_accept)}</tr>"
        f"<tr><th>critic rejects</th>{cell(m.false_reject)}{cell(m.true_reject)}</tr></table>"
    )
