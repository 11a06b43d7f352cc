"""The Compare page across runs over different problem sets (30 problems against 20), in a real browser,
served and as a static site: the numbers are the ones ``refinelab report --baseline`` prints (one
implementation, ``metrics.compare_paired``), paired by problem, and the problems only one run has are
stated and listed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from refinelab.report import build_report, paired_cells, render_text
from refinelab.store import Store
from refinelab.view import Source, serving, write_site
from tests.report.test_baseline import EXTRA, SHARED, SINGLE, make_run
from tests.view.test_long_labels import drawn, page  # noqa: F401 - the page fixture

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("compare-runs") / "store.sqlite"
    with Store(path) as opened:
        make_run(opened, "small", SHARED)
        make_run(opened, "large", {**SHARED, **EXTRA})
    return path


@pytest.fixture(scope="module", params=["served", "static"])
def base(request: pytest.FixtureRequest, store: Path) -> Iterator[str]:
    if request.param == "static":
        site = store.parent / "site"
        write_site(Source(store), site)
        yield (site / "index.html").as_uri()
        return
    with serving(Source(store, live=True)) as server:
        yield server.url


def test_compare_across_runs_shows_the_reports_paired_numbers(page: Any, base: str, store: Path) -> None:  # noqa: F811
    with Store(store) as opened:
        report = build_report(opened, "large", baseline="small")
    assert report.baseline is not None and report.baseline.rows[0].paired is not None
    expected = paired_cells(report.baseline.rows[0].paired)
    drawn(page, base, f"compare?a=small:{SINGLE.key}&b=large:{SINGLE.key}", "#compare-summary")
    fields = dict(
        page.eval_on_selector_all(
            "#compare-summary td[data-field]", "(cells) => cells.map((c) => [c.dataset.field, c.textContent])"
        )
    )
    assert fields["pairs"] == expected["pairs"] == "20"
    assert fields["difference"] == expected["difference"] == "+0.0 [+0.0, +0.0]"
    assert fields["p"] == expected["p_value"] and fields["only-a"] == expected["only_a"]
    assert (fields["unpaired-a"], fields["unpaired-b"]) == ("0", "10")
    assert expected["difference"] in render_text(report)
    listed = page.locator("#unpaired-b-list tbody tr td:first-child").all_inner_texts()
    assert listed == [f"jsonl/{name}" for name in EXTRA]
