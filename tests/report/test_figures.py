"""The figures: which ones a report has, that report --html and the viewer show the same ones, and that
each is drawn readably (ticks, labels, intervals)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from refinelab.experiment import Store
from refinelab.report import build_report, figure_titles, render_figure, render_figures, render_html
from tests.report.test_report import SINGLE, fill

pytest.importorskip("matplotlib", reason="figures need the view extra (matplotlib)")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "viewer.md"


@pytest.fixture
def report(tmp_path: Path) -> object:
    with Store(tmp_path / "store.sqlite") as store:
        fill(store)
        return build_report(store)


def test_figure_titles_name_exactly_the_figures_drawn_and_shown_by_report_html(report: object) -> None:
    titles = figure_titles(report)  # type: ignore[arg-type]
    assert [n for n, _ in titles] == ["pass-by-iteration", "cost-vs-pass", "critic-confusion", "first-pass"]
    drawn = render_figures(report)  # type: ignore[arg-type]
    assert [(f.name, f.title) for f in drawn] == list(titles)
    page = render_html(report)  # type: ignore[arg-type]
    assert re.findall(r"<figure class='rl-figure' id='figure-([a-z-]+)'><figcaption>([^<]+)<", page) == list(titles)


def test_a_run_without_a_critic_has_no_confusion_figure(tmp_path: Path) -> None:
    with Store(tmp_path / "store.sqlite") as store:
        fill(store)
        store._db.execute("DELETE FROM trajectories WHERE config != ?", (SINGLE.key,))
        report = build_report(store)
    names = [n for n, _ in figure_titles(report)]
    assert names == ["pass-by-iteration", "cost-vs-pass", "first-pass"]
    assert "figure-critic-confusion" not in render_html(report)
    with pytest.raises(KeyError):
        render_figure(report, "critic-confusion")


def test_the_docs_list_every_figure() -> None:
    text = DOCS.read_text(encoding="utf-8")
    listed = re.findall(r"^\| `([a-z-]+)` \| ([^|]+?) \|", text, flags=re.MULTILINE)
    assert listed == list(figure_titles())
