"""Fixtures for the viewer: one scripted run (see demo.py), its JSON report, its static site, the
served viewer, and a headless Chromium (Debian's, driven by Playwright; never a downloaded browser)."""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from refinelab.cli import main
from refinelab.report import build_report, figure_titles
from refinelab.store import Store
from refinelab.view import Source, serving
from refinelab.view._payload import slug
from tests.report.test_report import fill
from tests.view.demo import make_run

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "viewer"
"""Screenshots for a person to look at (git-ignored)."""
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass(frozen=True)
class Demo:
    """The scripted run and what the command line says about it."""

    store: Path
    run_id: str
    report: dict[str, Any]
    site: Path

    @property
    def run_js(self) -> dict[str, Any]:
        """The static site's data file of the run."""
        text = (self.site / "data" / slug(self.run_id) / "run.js").read_text(encoding="utf-8")
        found: dict[str, Any] = json.loads(text[text.index(", ") + 2 : text.rindex(");")])
        return found

    @property
    def figures(self) -> tuple[tuple[str, str], ...]:
        """``(name, title)`` of the figures ``report --html`` shows for the run."""
        with Store(self.store) as store:
            return figure_titles(build_report(store, self.run_id))


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    folder = tmp_path_factory.mktemp("viewer-demo")
    store, run_id = make_run(folder)
    out = folder / "report.json"
    assert main(["report", run_id, "--store", str(store), "--format", "json", "--out", str(out)], {}) == 0
    assert main(["view", run_id, "--store", str(store), "--out", str(folder / "site")], {}) == 0
    return Demo(store, run_id, json.loads(out.read_text(encoding="utf-8")), folder / "site")


def chromium() -> str:
    """Debian's Chromium, or skip with the reason."""
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("chromium is not installed (scripts/install.sh installs Debian's chromium)")
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A fresh headless Chromium context (its own user-data-dir), shared by the browser tests."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="refinelab-chromium-")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=executable,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1400, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def tab(browser: Any) -> Iterator[Any]:
    """A tab that fails the test on any script error."""
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    yield page
    page.close()
    assert errors == [], f"script errors: {errors}"


@pytest.fixture(scope="module")
def served(demo: Demo) -> Iterator[str]:
    with serving(Source(demo.store, live=True)) as server:
        yield server.url


@pytest.fixture(params=["served", "static"])
def base(request: pytest.FixtureRequest, demo: Demo) -> str:
    """The viewer's address: the served app, or the static site from file://."""
    if request.param == "served":
        return str(request.getfixturevalue("served"))
    return (demo.site / "index.html").as_uri()


@dataclass
class SlowReports:
    """A filled store whose run reports wait until released (a big run's report takes seconds)."""

    store: Path
    started: threading.Event
    """Set once a report has begun."""
    release: threading.Event
    """Set it to let reports finish."""


@pytest.fixture
def slow_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SlowReports]:
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        fill(store)
    slow = SlowReports(path, threading.Event(), threading.Event())
    build = build_report  # the function the site module calls, replaced there below

    def slow_report(store: Store, run_id: str) -> object:
        slow.started.set()
        slow.release.wait(60)
        return build(store, run_id)

    monkeypatch.setattr("refinelab.view._site.build_report", slow_report)
    try:
        yield slow
    finally:
        slow.release.set()
