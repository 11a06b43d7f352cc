"""Reports: views over stored runs (the numbers come from the metrics; this package only formats)."""

from refinelab.report._baseline import Baseline, BaselineRow, paired_cells
from refinelab.report._build import (
    Comparison,
    Confidence,
    CriticNumbers,
    Passes,
    Refinement,
    Report,
    Row,
    build_report,
)
from refinelab.report._export import report_csv, report_json
from refinelab.report._figures import (
    FIGURES_NEED,
    Figure,
    figure_titles,
    figures_missing,
    render_figure,
    render_figures,
)
from refinelab.report._html import REPORT_CSS, overview_html, render_html, tables_html
from refinelab.report._overview import OverviewRow, OverviewTable, build_overview
from refinelab.report._text import HEADLINE, failure_lines, header_lines, render_text
from refinelab.report._why import why_text

__all__ = [
    "FIGURES_NEED",
    "HEADLINE",
    "REPORT_CSS",
    "Baseline",
    "BaselineRow",
    "Comparison",
    "Confidence",
    "CriticNumbers",
    "Figure",
    "OverviewRow",
    "OverviewTable",
    "Passes",
    "Refinement",
    "Report",
    "Row",
    "build_overview",
    "build_report",
    "failure_lines",
    "figure_titles",
    "figures_missing",
    "header_lines",
    "overview_html",
    "paired_cells",
    "render_figure",
    "render_figures",
    "render_html",
    "render_text",
    "report_csv",
    "report_json",
    "tables_html",
    "why_text",
]
