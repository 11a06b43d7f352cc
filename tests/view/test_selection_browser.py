"""The trajectory page of the selecting strategies (``verified``, ``codet``) in a real browser, served and
as a static site: the decision timeline (refined because..., discarded by the regression guard...,
chosen...) linked to the attempts it concerns, and the generated tests with the reference's verdicts,
rejected pieces folded. Screenshots go to test-artifacts/viewer/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from refinelab.cli import main
from refinelab.store import Store, TrajectoryDetail
from refinelab.view import Source, serving
from tests.view.conftest import ARTIFACTS
from tests.view.selecting import make_selecting_run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")  # before the browser's event loop starts (the run uses asyncio.run)
def selecting(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """(store, run id, static site) of the selecting run."""
    folder = tmp_path_factory.mktemp("selecting-view")
    store, run_id = make_selecting_run(folder)
    assert main(["view", run_id, "--store", str(store), "--out", str(folder / "site")], {}) == 0
    return store, run_id, folder / "site"


@pytest.fixture(scope="module")
def served_selecting(selecting: tuple[Path, str, Path]) -> Iterator[str]:
    with serving(Source(selecting[0], live=True)) as server:
        yield server.url


@pytest.fixture(params=["served", "static"])
def where(request: pytest.FixtureRequest, selecting: tuple[Path, str, Path]) -> str:
    if request.param == "served":
        return str(request.getfixturevalue("served_selecting"))
    return (selecting[2] / "index.html").as_uri()


def details(store: Path, run_id: str, strategy: str, problem: str) -> TrajectoryDetail:
    with Store(store) as opened:
        config = next(c.key for c in opened.configurations(run_id) if c.strategy == strategy)
        return next(t for t in opened.trajectory_details(run_id, problem) if t.config == config)


def open_trajectory(tab: Any, where: str, run_id: str, trajectory: TrajectoryDetail) -> None:
    tab.goto(f"{where}#/run/{run_id}/t/{trajectory.config}/{quote(trajectory.problem, safe='')}/{trajectory.repeat}")
    tab.wait_for_function("document.body.dataset.ready === location.hash.replace(/^#\\/?/, '')")
    tab.wait_for_selector(f"#attempt-{len(trajectory.attempts) - 1}")


def test_the_decision_timeline_says_why_and_links_the_attempts(
    tab: Any, where: str, selecting: tuple[Path, str, Path]
) -> None:
    store, run_id, _ = selecting
    trajectory = details(store, run_id, "verified", "jsonl/p1")
    open_trajectory(tab, where, run_id, trajectory)
    items = tab.locator("#why ol.decisions > li")
    assert [items.nth(i).get_attribute("data-kind") for i in range(items.count())] == [
        d.kind for d in trajectory.decisions
    ]
    discard = tab.locator('#why li[data-kind="discard"]').first
    assert "discarded by the regression guard" in discard.inner_text()
    assert "passes 1 of 4 known tests, its parent passed 2" in discard.inner_text()
    assert (
        "refined because it fails 2 of 4 known tests" in tab.locator('#why li[data-kind="refine"]').first.inner_text()
    )
    chosen = tab.locator('#why li[data-kind="choose"]')
    assert "best available after stopping" in chosen.inner_text()
    assert tab.locator("#attempt-2 [data-decision=discard]").count() == 1
    assert tab.locator("#attempt-0 [data-decision=choose]").count() == 1
    discard.locator("a.attempt-ref", has_text="attempt 2").click()  # the attempt it concerns
    tab.wait_for_selector("#attempt-2.focus")
    assert "?attempt=2" in tab.url
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    tab.evaluate("window.scrollTo(0, 0)")
    tab.screenshot(
        path=str(ARTIFACTS / f"{'static' if where.startswith('file:') else 'served'}-verified.png"), full_page=True
    )


def test_generated_tests_show_the_reference_verdicts_with_rejections_folded(
    tab: Any, where: str, selecting: tuple[Path, str, Path]
) -> None:
    store, run_id, _ = selecting
    trajectory = details(store, run_id, "codet", "jsonl/p2")
    open_trajectory(tab, where, run_id, trajectory)
    (generation,) = trajectory.generations
    shown = tab.locator("#why .generation ul.generated-tests > li")
    assert [shown.nth(i).locator("code").inner_text() for i in range(shown.count())] == [
        t.text for t in generation.tests
    ]
    references = [shown.nth(i).get_attribute("data-reference") for i in range(shown.count())]
    assert references == ["pass", "pass", "fail"]
    folded = tab.locator("#why .generation details.rejected")
    assert "1 rejected piece" in folded.locator("summary").inner_text()
    assert not folded.locator("li").first.is_visible()
    folded.locator("summary").click()
    assert folded.locator("li").first.inner_text() == "does not call f"
    assert [d.kind for d in trajectory.decisions] == ["tests", "group", "choose"]
    assert "earliest member of the best group" in tab.locator('#why li[data-kind="choose"]').inner_text()
