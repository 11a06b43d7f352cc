"""A reasoning run in the viewer, in a real browser, served and as a static site: the overthinking case lists
exactly the trajectories the report counts, one click from each, and an attempt's thinking is folded beside
its code. The run: vLLM serving a thinking model (the fake server returns ``reasoning_content``), single pass at
a low and a high effort, the high effort's draft of p2 wrong."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from refinelab.cli import main
from refinelab.store import Store
from refinelab.testing import VLLM_THINKING, serve
from refinelab.view import Source, serving
from tests.experiment.fakes import reply, write_benchmark

pytestmark = pytest.mark.slow
WRONG_P2 = "```python\ndef f(x):\n    return x + 2 if x < 5 else 0\n```"


def thinker(request: dict[str, object]) -> str:
    """The runner's model, except that with the high effort's budget its draft of p2 is wrong."""
    if request.get("thinking_token_budget") == 16384 and "Problem p2" in json.dumps(request["messages"]):
        return WRONG_P2
    return reply(request)


@pytest.fixture(scope="session")  # before the browser's event loop starts (the run uses asyncio.run)
def thinking(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """(store, run id, static site) of the run."""
    folder = tmp_path_factory.mktemp("reasoning-view")
    data, store = write_benchmark(folder / "problems.jsonl", n=3), folder / "store.sqlite"
    args = ["run", "--benchmark", "jsonl", "--data", str(data), "--model", "vllm:Qwen/Qwen3-8B", "--strategy"]
    args += ["single-pass", "--reasoning-effort", "low", "--reasoning-effort", "high", "--store", str(store), "--quiet"]
    with serve(thinker, mimic=VLLM_THINKING) as server:
        assert main([*args, "--base-url", server.base_url], {}) == 0
    with Store(store) as opened:
        run_id = opened.run().id
    assert main(["view", run_id, "--store", str(store), "--out", str(folder / "site")], {}) == 0
    return store, run_id, folder / "site"


@pytest.fixture(scope="module")
def served_thinking(thinking: tuple[Path, str, Path]) -> Iterator[str]:
    with serving(Source(thinking[0], live=True)) as server:
        yield server.url


@pytest.fixture(params=["served", "static"])
def where(request: pytest.FixtureRequest, thinking: tuple[Path, str, Path]) -> str:
    if request.param == "served":
        return str(request.getfixturevalue("served_thinking"))
    return (thinking[2] / "index.html").as_uri()


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


def test_the_overthinking_case_lists_what_the_report_counts_one_click_from_its_trajectory(
    tab: Any, where: str, thinking: tuple[Path, str, Path]
) -> None:
    store, run_id, _ = thinking
    with Store(store) as opened:
        high = next(c for c in opened.configurations(run_id) if c.effort == "high")
    tab.goto(f"{where}#/run/{run_id}/cases?case=overthinking")
    tab.wait_for_selector("#case-list")
    assert tab.locator('a.case[data-case="overthinking"] b').inner_text() == "1"
    rows = tab.locator("#case-list tbody tr")
    assert rows.count() == 1
    assert (rows.nth(0).get_attribute("data-problem"), rows.nth(0).get_attribute("data-config")) == (
        "jsonl/p2",
        high.key,
    )
    rows.nth(0).locator("a").first.click()
    tab.wait_for_selector("#attempt-0")
    assert tab.locator("#attempt-0 header .badge.fail").first.inner_text().startswith("hidden tests")


def test_an_attempts_thinking_is_folded_beside_its_code(tab: Any, where: str, thinking: tuple[Path, str, Path]) -> None:
    store, run_id, _ = thinking
    with Store(store) as opened:
        low = next(c for c in opened.configurations(run_id) if c.effort == "low")
        (detail,) = [t for t in opened.trajectory_details(run_id, "jsonl/p0") if t.config == low.key]
    tab.goto(f"{where}#/run/{run_id}/t/{low.key}/jsonl%2Fp0/0")
    tab.wait_for_selector("#attempt-0 .thinking")
    panel = tab.locator("#attempt-0 .thinking details")
    assert panel.get_attribute("open") is None  # folded
    assert f"{detail.attempts[0].reasoning_tokens} thinking tokens" in panel.locator("summary").inner_text()
    assert tab.locator("#attempt-0 .thinking pre.reasoning").text_content() == detail.attempts[0].reasoning
    assert "def f(x)" in tab.locator("#attempt-0 pre.code").inner_text()  # the code, read from the answer only
    assert "hmm" not in tab.locator("#attempt-0 pre.code").inner_text()
