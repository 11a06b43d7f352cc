"""The documented case, on the real LiveCodeBench abc357_a from the shared data: a scripted 32B actor
and 7B critic reproduce the Sanitize Hands regression, and the viewer's regressions filter finds it
in one click from the overview."""

from __future__ import annotations

import gzip
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from refinelab.cli import main
from tests.view.conftest import ARTIFACTS
from tests.view.demo import HALLUCINATED, SMALL_CRITIC, make_run

pytestmark = pytest.mark.slow


def test_the_regressions_filter_finds_sanitize_hands(shared_data: Path, tmp_path: Path, browser: Any) -> None:
    source = shared_data / "benchmarks" / "livecodebench-v5-public-tests.jsonl.gz"
    with gzip.open(source, "rt", encoding="utf-8") as lines:
        record = next(r for r in map(json.loads, lines) if r["question_id"] == "abc357_a")
    data = tmp_path / "abc357_a.jsonl"  # the one real record, for this test only
    data.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with ThreadPoolExecutor(1) as thread:  # the browser's event loop runs in this thread: run the experiment beside it
        store, _ = thread.submit(make_run, tmp_path, data, ("single-pass", "self-refine(max_iters=3)")).result()
    assert main(["view", "--store", str(store), "--out", str(tmp_path / "site")], {}) == 0
    page = browser.new_page()
    try:
        page.goto((tmp_path / "site" / "index.html").as_uri())  # one run: the overview opens by itself
        page.wait_for_selector("a.case[data-case=regressions]")
        assert page.inner_text("a.case[data-case=regressions] b") == "1"
        page.click("a.case[data-case=regressions]")
        page.wait_for_selector("#case-list tbody tr")
        (row,) = page.locator("#case-list tbody tr").all()
        assert "abc357_a" in row.inner_text() and f"/ {SMALL_CRITIC}" in row.inner_text()
        row.locator("a").first.click()
        page.wait_for_selector("#attempt-1")
        assert HALLUCINATED in page.inner_text("#attempt-0")
        assert "break" in page.inner_text("#attempt-0 pre.code") and "break" not in page.inner_text(
            "#attempt-1 pre.code"
        )
        assert "false acceptance" in page.inner_text("#attempt-1 .critic")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(ARTIFACTS / "real-abc357_a.png"), full_page=True)
    finally:
        page.close()
