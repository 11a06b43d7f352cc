"""Long model names in a real browser: the configuration pickers show the whole label, so the same-size
and the smaller critic never read alike, and comparing one configuration across two runs says which
run each side is. Two hand-built runs, served and as a static site."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from refinelab.experiment import Configuration
from refinelab.store import RunProblem, Store, Unit
from refinelab.strategies import StrategySpec, Trajectory
from refinelab.view import Source, serving, write_site
from tests.report.test_report import HEADER, attempt, problem, result
from tests.view.conftest import ARTIFACTS

pytestmark = pytest.mark.slow

ACTOR = "vllm:Qwen/Qwen2.5-Coder-32B-Instruct-GPTQ-Int8-deployment-a100"
SMALL = "vllm:Qwen/Qwen2.5-Coder-7B-Instruct-GPTQ-Int8-deployment-a100"
CONFIGS = [
    Configuration(StrategySpec("single-pass"), ACTOR, None),
    Configuration(StrategySpec("self-refine", {"max_iters": 3}), ACTOR, ACTOR),
    Configuration(StrategySpec("self-refine", {"max_iters": 3}), ACTOR, SMALL),
]
RUNS = ("long-names-first-1", "long-names-second-2")
# the part of each text a reader sees in the closed control, by the control's own font and width
VISIBLE = """(select) => {
  const style = getComputedStyle(select);
  const context = document.createElement("canvas").getContext("2d");
  context.font = style.font;
  const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 24;
  const text = select.selectedOptions[0].textContent;
  return { text, fits: context.measureText(text).width <= room };
}"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("long-labels") / "store.sqlite"
    names = [f"p{i}" for i in range(4)]
    with Store(path) as opened:
        for n, run in enumerate(RUNS):
            opened.open_run(run, {"name": run.rsplit("-", 1)[0], "repeats": 1}, HEADER)
            opened.add_configurations(run, [c.stored() for c in CONFIGS])
            opened.add_problems(run, [RunProblem(f"jsonl/{p}", problem(p)) for p in names])
            for config in CONFIGS:
                for i, name in enumerate(names):
                    ok = (i + n) % 2 == 0
                    verdict = None if config.critic is None else "pass"
                    done = Trajectory(name, config.strategy.name, {}, (attempt(0, verdict, 100),), 0, "accepted")
                    opened.save(run, Unit(config.key, f"jsonl/{name}", 0), done, [result(ok)])
            opened.finish_run(run, "complete")
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


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    tab = browser.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    yield tab
    tab.close()
    assert errors == []


def drawn(page: Any, base: str, route: str, selector: str) -> None:
    page.goto(f"{base}#/{route}")
    page.wait_for_function("document.body.dataset.ready === location.hash.replace(/^#\\/?/, '')")
    page.wait_for_selector(selector)


def shoot(page: Any, base: str, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    kind = "static" if base.startswith("file:") else "served"
    page.screenshot(path=str(ARTIFACTS / f"{kind}-long-labels-{name}.png"), full_page=True)


def test_the_configuration_filter_shows_the_whole_label(page: Any, base: str) -> None:
    shown = []
    for config in CONFIGS[1:]:
        drawn(page, base, f"run/{RUNS[0]}/cases?config={config.key}", "#filter-config")
        visible = page.eval_on_selector("#filter-config", VISIBLE)
        assert visible["fits"], f"cut: {visible['text']}"
        shown.append(visible["text"])
    assert shown[0].endswith(f"/ {ACTOR}") and shown[1].endswith(f"/ {SMALL}")
    shoot(page, base, "filter")


def test_compare_pickers_show_whole_labels_and_each_sides_run(page: Any, base: str) -> None:
    small = CONFIGS[2].key
    drawn(page, base, f"compare?a={RUNS[0]}:{small}&b={RUNS[1]}:{small}", "#compare-summary")
    for which in ("a", "b"):
        visible = page.eval_on_selector(f"#compare-{which}", VISIBLE)
        assert visible["fits"], f"cut: {visible['text']}"
        assert visible["text"].endswith(f"/ {SMALL}")
    rows = page.locator("#compare-summary tbody th").all_inner_texts()
    side_a = next(r for r in rows if r.startswith("A passes"))
    side_b = next(r for r in rows if r.startswith("B passes"))
    assert RUNS[0] in side_a and RUNS[1] in side_b  # one label in two runs: the run tells the sides apart
    assert side_a.endswith(f"/ {SMALL}") and side_b.endswith(f"/ {SMALL}")
    shoot(page, base, "compare")
