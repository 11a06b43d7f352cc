"""A deep link to a trajectory, opened in a real browser on a freshly started server, draws the
trajectory while the run's report is still being computed (a big run's report takes seconds)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from refinelab.experiment import Store
from refinelab.view import Source, _site, serving
from tests.report.test_report import REFINE, fill
from tests.view.conftest import ARTIFACTS

pytestmark = pytest.mark.slow


def test_a_deep_link_on_a_cold_server_never_waits_for_the_runs_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, browser: Any
) -> None:
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        fill(store)
    started, release = threading.Event(), threading.Event()
    build = _site.build_report

    def slow_report(store: Store, run_id: str) -> object:  # a big run's report takes a while
        started.set()
        release.wait(60)
        return build(store, run_id)

    monkeypatch.setattr(_site, "build_report", slow_report)
    page = browser.new_page()
    try:
        with serving(Source(path, live=True)) as server:
            begun = time.monotonic()
            page.goto(f"{server.url}#/run/demo-1/t/{REFINE.key}/jsonl%2Fp2/0?attempt=1")
            page.wait_for_selector("#attempt-1.focus", timeout=15_000)
            assert time.monotonic() - begun < 15 and not release.is_set()
            assert "regression error" in page.inner_text("#attempt-0 header")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "served-cold-deep-link.png"), full_page=True)
            release.set()
            page.click("nav a:has-text('Overview')")  # the overview still comes, once its report is ready
            page.wait_for_selector("#headline table.rl-overview", timeout=30_000)
    finally:
        release.set()
        page.close()
