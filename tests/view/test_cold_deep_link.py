"""A deep link to a trajectory, opened in a real browser on a freshly started server, draws the
trajectory while the run's report is still being computed (a big run's report takes seconds)."""

from __future__ import annotations

from typing import Any

import pytest

from refinelab.view import Source, serving
from tests.report.test_report import REFINE
from tests.view.conftest import ARTIFACTS, SlowReports

pytestmark = pytest.mark.slow


def test_a_deep_link_on_a_cold_server_never_waits_for_the_runs_report(slow_reports: SlowReports, browser: Any) -> None:
    page = browser.new_page()
    try:
        with serving(Source(slow_reports.store, live=True)) as server:
            page.goto(f"{server.url}#/run/demo-1/t/{REFINE.key}/jsonl%2Fp2/0?attempt=1")
            page.wait_for_selector("#attempt-1.focus", timeout=120_000)  # a hang guard, not a time target
            assert not slow_reports.release.is_set()  # drawn while the report is still held back
            assert "regression error" in page.inner_text("#attempt-0 header")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "served-cold-deep-link.png"), full_page=True)
            slow_reports.release.set()
            page.click("nav a:has-text('Overview')")  # the overview still comes, once its report is ready
            page.wait_for_selector("#headline table.rl-overview", timeout=30_000)
    finally:
        page.close()
