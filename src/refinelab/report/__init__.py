"""Reports: views over stored runs (the numbers come from the metrics; this package only formats)."""

from refinelab.report._build import Comparison, Report, Row, build_report
from refinelab.report._export import report_csv, report_json
from refinelab.report._html import render_html
from refinelab.report._text import render_text

__all__ = [
    "Comparison",
    "Report",
    "Row",
    "build_report",
    "render_html",
    "render_text",
    "report_csv",
    "report_json",
]
