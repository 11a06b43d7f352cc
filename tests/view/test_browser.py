"""The viewer in a real browser (headless Chromium), served and as a static site from file://, on a
run made with scripted models and the real sandbox: the numbers are the JSON report's, the case
filters list exactly what the metrics count, trajectory pages show every attempt's code and verdict.
Screenshots go to test-artifacts/viewer/ for a person to look at."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from refinelab.metrics import (
    critic_call_attempts,
    improved,
    mcnemar,
    paired,
    regression_error_attempts,
    worsened,
)
from refinelab.report import HEADLINE
from refinelab.store import Store
from refinelab.view._payload import slug
from tests.view.conftest import ARTIFACTS, Demo
from tests.view.demo import HALLUCINATED, SMALL_CRITIC

pytestmark = pytest.mark.slow

EXTRACT_OVERVIEW = """
() => [...document.querySelectorAll("table.rl-overview")].map((table) => ({
  slice: table.dataset.slice,
  top: table.getBoundingClientRect().top,
  rows: [...table.querySelectorAll("tbody tr")].map((row) => ({
    config: row.dataset.config,
    label: row.querySelector("td.label").textContent,
    cells: [...row.querySelectorAll("td[data-field]")].map((cell) => ({
      field: cell.dataset.field,
      value: cell.dataset.value === undefined ? null : Number(cell.dataset.value),
      shown: cell.querySelector(".v") ? cell.querySelector(".v").textContent : cell.textContent,
    })),
  })),
}))
"""


@pytest.fixture
def page(browser: Any, base: str) -> Iterator[Any]:
    """A tab that fails the test on any script error, and on any request leaving the viewer."""
    tab = browser.new_page()
    errors: list[str] = []
    outside: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    root = base.rsplit("/", 1)[0] if base.startswith("file:") else base
    tab.on("request", lambda request: None if request.url.startswith(root) else outside.append(request.url))
    yield tab
    tab.close()
    assert errors == [], f"script errors: {errors}"
    assert outside == [], f"requests outside the viewer: {outside}"


def mode(base: str) -> str:
    return "static" if base.startswith("file:") else "served"


def shoot(page: Any, base: str, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")  # the sticky header would otherwise sit mid-picture
    page.screenshot(path=str(ARTIFACTS / f"{mode(base)}-{name}.png"), full_page=True)


def open_route(page: Any, base: str, route: str, ready: str) -> None:
    page.goto(f"{base}#/{route}")
    wait_drawn(page)
    page.wait_for_selector(ready)


def wait_drawn(page: Any) -> None:
    """Until the page for the current address is drawn (the app marks it on the body)."""
    page.wait_for_function("document.body.dataset.ready === location.hash.replace(/^#\\/?/, '')")


def shown(value: float, field: str, unit: str | None) -> str:
    """How the page formats a number of the JSON report."""
    if field in ("first", "it", "final"):
        return f"{100 * value:.1f}"
    if field == "regr":
        return f"{value:.0f}"
    if field == "avg-it":
        return f"{value:.2f}"
    return f"{value:.2f}x" + (" tok" if unit == "tokens" else "")


def expected_cells(row: dict[str, Any], depth: int) -> list[tuple[str, float | None, str | None]]:
    flat = row["sampled"] or len(row["iterations"]) < 2
    cells: list[tuple[str, float | None, str | None]] = [("first", row["iterations"][0]["value"], None)]
    for i in range(1, depth):
        value = None if flat else row["iterations"][min(i, len(row["iterations"]) - 1)]["value"]
        cells.append(("it", value, None))
    cells.append(("final", row["final"]["value"], None))
    cells.append(("regr", row["regression_errors"]["value"], None))
    cells.append(("avg-it", row["refinements"] and row["refinements"]["value"], None))
    cells.append(("cost", row["cost_multiple"] and row["cost_multiple"]["value"], row["cost_unit"]))
    return cells


def test_the_overview_shows_the_json_reports_numbers_headline_first(page: Any, base: str, demo: Demo) -> None:
    open_route(page, base, f"run/{demo.run_id}", "table.rl-overview")
    tables = page.evaluate(EXTRACT_OVERVIEW)
    expected = demo.report["overview"]
    assert [t["slice"] for t in tables] == [t["name"] for t in expected]
    assert [t["name"] for t in expected] == [
        "all problems",
        "livecodebench · easy",
        "livecodebench · medium",
        "livecodebench · hard",
    ]
    assert tables[0]["top"] < 600, "the headline table is the first thing on the page"
    assert page.inner_text("#headline-title") == HEADLINE  # the text and HTML reports' words
    checked = 0
    for table, want in zip(tables, expected):
        depth = max(len(r["iterations"]) for r in want["rows"])
        assert [r["config"] for r in table["rows"]] == [r["config"] for r in want["rows"]]
        for row, want_row in zip(table["rows"], want["rows"]):
            assert row["label"] == want_row["label"]
            for cell, (field, value, unit) in zip(row["cells"], expected_cells(want_row, depth), strict=True):
                assert cell["field"] == field
                if value is None:
                    assert cell["shown"] == "–"
                    continue
                assert cell["value"] == pytest.approx(value, abs=1e-12) and cell["shown"] == shown(value, field, unit)
                checked += 1
    assert checked > 50
    shoot(page, base, "overview")


def test_figures_are_drawn_only_when_their_page_is_shown(page: Any, base: str, demo: Demo) -> None:
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if "/figures/" in request.url else None)
    open_route(page, base, f"run/{demo.run_id}", "table.rl-overview")
    assert asked == [] and page.locator("img").count() == 0  # the overview never waits for a figure
    page.click("#nav a:has-text('Figures')")
    wait_drawn(page)
    page.wait_for_function(
        "document.images.length && [...document.images].every((i) => i.complete && i.naturalWidth > 0)"
    )
    shown = page.evaluate("[...document.querySelectorAll('figure')].map((f) => f.id.replace('figure-', ''))")
    assert shown == [f["name"] for f in demo.run_js["figures"]] == [n for n, _ in demo.figures]
    assert sorted({url.rsplit("/", 1)[1] for url in asked}) == sorted(f"{n}.svg" for n in shown)
    shoot(page, base, "figures")


def case_rows(page: Any) -> list[tuple[str, str, int | None]]:
    rows: list[tuple[str, str, int | None]] = page.evaluate(
        """() => [...document.querySelectorAll("#case-list tbody tr")].map((row) =>
             [row.dataset.problem, row.dataset.config, row.dataset.attempt === undefined ? null : Number(row.dataset.attempt)])"""
    )
    return rows


def test_the_regressions_filter_lists_exactly_the_counted_regression_errors(page: Any, base: str, demo: Demo) -> None:
    with Store(demo.store) as store:
        trajectories = store.trajectories(demo.run_id)
    counted = sorted((t.problem, t.config, i) for t in trajectories for i in regression_error_attempts(t))
    assert len(counted) == sum(c["regression_errors"] for c in demo.report["configurations"]) == 1
    open_route(page, base, f"run/{demo.run_id}", "a.case[data-case=regressions]")
    page.click("a.case[data-case=regressions]")  # one click from the overview
    wait_drawn(page)
    page.wait_for_selector("#case-list tbody tr")
    assert sorted(tuple(r) for r in case_rows(page)) == counted
    small = next(c["config"] for c in demo.report["overview"][0]["rows"] if c["label"].endswith(f"/ {SMALL_CRITIC}"))
    assert counted == [("livecodebench/abc357_a", small, 0)]  # the Sanitize Hands regression
    shoot(page, base, "regressions")


def test_every_case_filter_counts_what_the_metrics_count(page: Any, base: str, demo: Demo) -> None:
    with Store(demo.store) as store:
        trajectories = store.trajectories(demo.run_id)
    expected = {
        "all": len(trajectories),
        "false-rejections": sum(len(critic_call_attempts(t, "false_reject")) for t in trajectories),
        "false-acceptances": sum(len(critic_call_attempts(t, "false_accept")) for t in trajectories),
        "improvements": sum(improved(t) for t in trajectories),
        "worsened": sum(worsened(t) for t in trajectories),
    }
    rows = demo.report["configurations"]
    assert expected["false-rejections"] == sum((r["confusion"] or {}).get("false_reject", 0) for r in rows)
    assert expected["false-acceptances"] == sum((r["confusion"] or {}).get("false_accept", 0) for r in rows)
    assert expected["improvements"] == sum(r["improvement"]["count"] for r in rows)
    assert expected["worsened"] == sum(r["regression"]["count"] for r in rows)
    for case, count in expected.items():
        open_route(page, base, f"run/{demo.run_id}/cases?case={case}", "#case-list")
        assert len(case_rows(page)) == count, case
    open_route(page, base, f"run/{demo.run_id}/cases?case=disagree", "#case-list")
    assert {r[0] for r in case_rows(page)} == {
        "livecodebench/abc357_a",
        "livecodebench/max_run",
        "livecodebench/sum_pair",
    }


def test_an_unknown_case_link_says_so_and_lists_every_trajectory(page: Any, base: str, demo: Demo) -> None:
    with Store(demo.store) as store:
        every = len(store.trajectories(demo.run_id))
    open_route(page, base, f"run/{demo.run_id}/cases?case=regresions", "#case-list")
    said = page.text_content("#unknown-case")
    assert said is not None and "No case is called “regresions”" in said and "regressions" in said
    assert len(case_rows(page)) == every
    open_route(page, base, f"run/{demo.run_id}/cases?case=regressions", "#case-list")
    assert page.query_selector("#unknown-case") is None


def test_the_sanitize_hands_trajectory_reads_as_in_the_case_study(page: Any, base: str, demo: Demo) -> None:
    open_route(page, base, f"run/{demo.run_id}/cases?case=regressions", "#case-list tbody tr a")
    page.click("#case-list tbody tr a")
    wait_drawn(page)
    page.wait_for_selector("#attempt-1")
    first, second = page.locator("#attempt-0"), page.locator("#attempt-1")
    assert "break" in first.locator("pre.code").inner_text()
    assert "break" not in second.locator("pre.code").inner_text()
    assert first.locator(".critic [data-verdict]").first.get_attribute("data-verdict") == "refine"
    assert "false rejection" in first.locator(".critic").inner_text() and HALLUCINATED in first.inner_text()
    assert second.locator(".critic [data-verdict]").first.get_attribute("data-verdict") == "pass"
    assert "false acceptance" in second.locator(".critic").inner_text()
    assert "hidden tests 4/4" in first.inner_text() and "hidden tests 2/4" in second.inner_text()
    second.locator("button", has_text="diff from attempt 0").click()
    assert "-    else:" in second.locator("pre.diff").inner_text()
    shoot(page, base, "sanitize-hands")


def test_every_trajectory_page_shows_each_attempts_code_and_verdict(page: Any, base: str, demo: Demo) -> None:
    with Store(demo.store) as store:
        details = store.trajectory_details(demo.run_id)
    for trajectory in details:
        route = f"run/{demo.run_id}/t/{trajectory.config}/{quote(trajectory.problem, safe='')}/{trajectory.repeat}"
        open_route(page, base, route, f"#attempt-{len(trajectory.attempts) - 1}")
        for attempt in trajectory.attempts:
            card = page.locator(f"#attempt-{attempt.index}")
            assert card.locator("pre.code").inner_text().strip() == (attempt.code or "").strip()
            verdicts = card.locator(".critic [data-verdict]")
            if attempt.critic is None:
                assert verdicts.count() == 0
            else:
                assert verdicts.first.get_attribute("data-verdict") == (attempt.critic.verdict or "unreadable")
    assert len(details) == 20


def compare_fields(page: Any) -> dict[str, str]:
    return dict(page.evaluate(
        """() => [...document.querySelectorAll("#compare-summary td[data-field]")].map((c) => [c.dataset.field, c.textContent])"""
    ))  # fmt: skip


def test_compare_shows_the_reports_paired_numbers_in_either_order(page: Any, base: str, demo: Demo) -> None:
    configs = {c["label"]: c["config"] for c in demo.report["overview"][0]["rows"]}
    comparisons = demo.report["comparisons"]
    assert len(comparisons) == 4
    for c in comparisons:  # refinelab report's "paired against single pass" table, row by row
        single, other = configs[c["baseline"]], configs[c["label"]]
        diff = "{:+.1f} [{:+.1f}, {:+.1f}]".format(*(100 * x for x in c["difference"]))
        open_route(page, base, f"compare?a={demo.run_id}:{single}&b={demo.run_id}:{other}", "#compare-summary")
        fields = compare_fields(page)
        assert (fields["pairs"], fields["only-a"], fields["only-b"]) == tuple(
            str(c[k]) for k in ("pairs", "only_baseline", "only_this")
        )
        assert (fields["p"], fields["difference"]) == (f"{c['p_value']:.3g}", diff)
        assert int(fields["both"]) + int(fields["neither"]) + c["only_baseline"] + c["only_this"] == c["pairs"]
        open_route(page, base, f"compare?a={demo.run_id}:{other}&b={demo.run_id}:{single}", "#compare-summary")
        swapped = compare_fields(page)
        assert (swapped["only-a"], swapped["only-b"], swapped["p"]) == (fields["only-b"], fields["only-a"], fields["p"])
        assert (swapped["both"], swapped["neither"]) == (fields["both"], fields["neither"])


def test_compare_lists_what_only_one_side_solved_with_links(page: Any, base: str, demo: Demo) -> None:
    with Store(demo.store) as store:
        trajectories = store.trajectories(demo.run_id)
    configs = [c["config"] for c in demo.report["overview"][0]["rows"]]
    single, small = configs[0], configs[2]
    pairs = paired([t for t in trajectories if t.config == single], [t for t in trajectories if t.config == small])
    open_route(page, base, f"compare?a={demo.run_id}:{single}&b={demo.run_id}:{small}", "#compare-summary")
    assert compare_fields(page)["p"] == f"{mcnemar(pairs):.3g}"
    only_a = page.locator("#only-a tbody tr td:first-child").all_inner_texts()
    only_b = page.locator("#only-b tbody tr td:first-child").all_inner_texts()
    assert only_a == [p for p, _ in pairs.only("a")] == ["livecodebench/abc357_a"]
    assert only_b == [p for p, _ in pairs.only("b")]
    shoot(page, base, "compare")
    page.locator("#only-a tbody tr a").nth(1).click()  # side B's trajectory of the problem only A solved
    wait_drawn(page)
    page.wait_for_selector("#attempt-1")
    assert "abc357_a" in page.inner_text("h1")


def small_critic(demo: Demo) -> str:
    return str(
        next(c["config"] for c in demo.report["overview"][0]["rows"] if c["label"].endswith(f"/ {SMALL_CRITIC}"))
    )


def test_each_attempt_shows_its_failing_tests_expected_against_actual(page: Any, base: str, demo: Demo) -> None:
    config = small_critic(demo)
    with Store(demo.store) as store:
        (trajectory,) = [
            t for t in store.trajectory_details(demo.run_id, "livecodebench/abc357_a") if t.config == config
        ]
    open_route(page, base, f"run/{demo.run_id}/t/{config}/{quote(trajectory.problem, safe='')}/0", "#attempt-1")
    checked = 0
    for attempt in trajectory.attempts:
        panel = page.locator(f"#attempt-{attempt.index} .tests-panel")
        failing = [(i, o) for i, o in enumerate(attempt.hidden.outcomes or ()) if o.verdict != "pass"]
        visible = (attempt.visible.outcomes or ()) if attempt.visible is not None else ()
        assert panel.locator(".failure").count() == len(failing) + sum(o.verdict != "pass" for o in visible)
        for i, outcome in failing:
            shown = panel.locator(f".failure[data-test='{i}']").first
            assert shown.locator("pre.expected").inner_text().strip() == (outcome.expected or "").strip()
            assert shown.locator("pre.actual").inner_text().strip() == (outcome.actual or "").strip()
            assert outcome.message and outcome.message in shown.locator(".message").inner_text()
            checked += 1
    assert checked == 2  # attempt 1 fails two hidden tests: expected 3, got 4; expected 1, got 3
    shoot(page, base, "failing-tests")
    for selector in ("pre.code", "pre.out", ".critique"):  # long lines wrap instead of running off the card
        wraps = page.evaluate(
            """(selector) => { const box = document.querySelector(selector);
                 box.textContent += " " + "x".repeat(600) + " " + "word ".repeat(200);
                 return box.scrollWidth <= box.clientWidth + 1 && box.getBoundingClientRect().right <= innerWidth; }""",
            selector,
        )
        assert wraps, selector


def test_coming_back_from_a_trajectory_keeps_the_lists_scroll_position(page: Any, base: str, demo: Demo) -> None:
    page.set_viewport_size({"width": 1200, "height": 420})
    open_route(page, base, f"run/{demo.run_id}/cases?case=all", "#case-list tbody tr")
    page.evaluate("window.scrollTo(0, 380)")
    page.wait_for_function("window.scrollY === 380")
    link = page.locator("#case-list tbody tr:nth-child(12) td:first-child a")
    problem = link.inner_text()
    link.scroll_into_view_if_needed()
    before = page.evaluate("window.scrollY")
    assert before > 300
    link.click()
    wait_drawn(page)
    page.wait_for_selector("#attempt-0")
    assert problem in page.inner_text("h1") and page.evaluate("window.scrollY") == 0
    page.go_back()
    wait_drawn(page)
    page.wait_for_selector("#case-list")
    assert page.evaluate("window.scrollY") == before


def test_deep_links_with_the_full_run_id_open_the_attempt(page: Any, base: str, demo: Demo) -> None:
    config = small_critic(demo)
    written = f"run/{demo.run_id}/t/{config}/livecodebench/abc357_a/0?attempt=1"  # as a person types it
    open_route(page, base, written, "#attempt-1.focus")
    permalink = page.locator("#attempt-1 a.permalink").get_attribute("href")
    assert permalink == f"#/run/{demo.run_id}/t/{config}/{quote('livecodebench/abc357_a', safe='')}/0?attempt=1"
    fresh = page.context.new_page()
    try:
        fresh.goto(f"{base}{permalink}")
        wait_drawn(fresh)
        fresh.wait_for_selector("#attempt-1.focus")
        assert "abc357_a" in fresh.inner_text("h1") and fresh.evaluate("window.scrollY") > 0
    finally:
        fresh.close()
    open_route(
        page, base, f"run/{demo.run_id[:8]}/t/{config}/{quote('livecodebench/abc357_a', safe='')}/0", "#attempt-1"
    )
    assert f"#/run/{demo.run_id}/" in str(page.locator("#attempt-0 a.permalink").get_attribute("href"))


def test_each_figure_downloads_as_svg_and_png_from_the_page(page: Any, base: str, demo: Demo) -> None:
    from pathlib import Path

    open_route(page, base, f"run/{demo.run_id}/figures", "figure a.download")
    where = page.url
    for name, _ in demo.figures:
        for extension, magic in (("svg", b"<?xml"), ("png", b"\x89PNG")):
            with page.expect_download(timeout=30_000) as started:
                page.click(f"#figure-{name} a.download[data-format={extension}]")
            download = started.value
            assert download.suggested_filename == f"{name}.{extension}"
            saved = Path(download.path()).read_bytes()
            assert saved.lstrip().startswith(magic)
            on_disk = demo.site / "figures" / slug(demo.run_id) / f"{name}.{extension}"
            assert on_disk.read_bytes().startswith(magic)  # the static site holds the file itself too
            if mode(base) == "static":
                assert saved == on_disk.read_bytes()
            assert page.url == where  # the viewer stays open
