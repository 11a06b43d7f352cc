"""The figures: which ones a report has, that report --html and the viewer show the same ones, and that
each is drawn readably (ticks, labels, intervals)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from refinelab.report import build_report, figure_titles, render_figure, render_figures, render_html
from refinelab.report._figures import _draw
from refinelab.store import RunHeader, RunProblem, Store, Unit
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


CRITICS = ("critic-a-32b", "critic-b-7b", "critic-c-14b", "meta-llama/Llama-3.1-8B-Instruct")


def many_critics(
    path: Path,
    truths: tuple[bool, ...] = (False, True),
    *,
    actor: str = "actor-model/Qwen2.5-Coder-32B-Instruct",
    critics: tuple[str, ...] = CRITICS,
) -> object:
    """A run with single pass, self-refine under four critics and exec-refine on six problems, where
    every refining configuration fails at first and passes after ``len(truths) - 1`` refinements."""
    from refinelab.experiment import Configuration
    from refinelab.strategies import StrategySpec, Trajectory
    from tests.report.test_report import attempt, problem, result

    configs = [Configuration(StrategySpec("single-pass"), actor, None)]
    configs += [Configuration(StrategySpec("self-refine", {"max_iters": 3}), actor, c) for c in critics]
    configs.append(Configuration(StrategySpec("exec-refine", {"max_iters": 3}), configs[0].actor, None))
    names = [f"p{i}" for i in range(6)]
    with Store(path) as store:
        store.open_run("many-1", {"name": "many", "repeats": 1}, RunHeader(versions={}, isolation="x", limits={}))
        store.add_configurations("many-1", [c.stored() for c in configs])
        store.add_problems("many-1", [RunProblem(f"jsonl/{p}", problem(p)) for p in names])
        for n, config in enumerate(configs):
            for i, name in enumerate(names):
                oks = (truths[0],) if config.critic is None and n == 0 else truths
                verdicts = [None if config.critic is None else ("pass" if ok else "refine") for ok in oks]
                oks = tuple(ok or (i + n) % 3 == 0 for ok in oks)  # some first attempts pass
                steps = tuple(attempt(k, v, 100) for k, v in enumerate(verdicts))
                done = Trajectory(name, config.strategy.name, {}, steps, len(steps) - 1, "accepted")
                store.save("many-1", Unit(config.key, f"jsonl/{name}", 0), done, [result(ok) for ok in oks])
        return build_report(store, "many-1")


def boxes(figure: Any, artists: list[Any]) -> list[Any]:
    return [a.get_window_extent() for a in artists if a.get_visible() and a.get_text()]


def test_heat_maps_of_several_critics_keep_their_labels_apart(tmp_path: Path) -> None:
    report = many_critics(tmp_path / "store.sqlite")
    figure = _draw(report, "critic-confusion")  # type: ignore[arg-type]
    panels = [a for a in figure.axes if a.images]
    assert len(panels) == len(CRITICS)  # one per critic, and no empty frame
    assert [a for a in figure.axes if not a.images and a.get_label() != "<colorbar>"] == []
    for panel in panels:
        assert all(c in panel.get_title(loc="left").replace("\n", "") for c in ("accepts", "false rejections"))
    whole = figure.bbox
    texts = [(i, box) for i, a in enumerate(panels)
             for box in boxes(figure, [a.title, _left_title(a), *a.get_xticklabels(), *a.get_yticklabels()])]  # fmt: skip
    for i, box in texts:
        assert whole.x0 - 1 <= box.x0 and box.x1 <= whole.x1 + 1 and box.y1 <= whole.y1 + 1  # nothing cut off
        for j, other in texts:
            assert i == j or not box.overlaps(other), "a label runs into another critic's panel"
        for j, panel in enumerate(panels):
            assert i == j or not box.overlaps(panel.get_window_extent())


def bar_positions(axes: Any) -> list[list[float]]:
    """The x of every interval bar (errorbar), per configuration, in display points."""
    from matplotlib.container import ErrorbarContainer

    found = []
    for container in axes.containers:
        if isinstance(container, ErrorbarContainer):
            xs = container.lines[2][0].get_segments()
            found.append([axes.transData.transform(segment[0])[0] * 72 / axes.figure.dpi for segment in xs])
    return found


def test_intervals_of_more_than_three_configurations_are_bars_standing_apart(tmp_path: Path) -> None:
    from matplotlib.collections import PolyCollection

    report = many_critics(tmp_path / "store.sqlite", (False, False, True))
    (axes,) = _draw(report, "pass-by-iteration").axes  # type: ignore[arg-type]
    assert not [c for c in axes.collections if isinstance(c, PolyCollection)]  # no band covers another
    positions = bar_positions(axes)
    iterating = [p for p in positions if len(p) == 3]
    assert len(iterating) == 5
    for step in range(3):
        xs = sorted(p[step] for p in iterating)
        assert min(b - a for a, b in itertools.pairwise(xs)) >= 6  # points: caps (2.5 pt each side) never touch


def test_three_configurations_keep_their_bands(tmp_path: Path, report: object) -> None:
    from matplotlib.collections import PolyCollection

    (axes,) = _draw(report, "pass-by-iteration").axes  # type: ignore[arg-type]
    assert len([c for c in axes.collections if isinstance(c, PolyCollection)]) == 1  # self-refine's band


def test_first_pass_axis_starts_at_the_first_attempt_with_every_integer(tmp_path: Path) -> None:
    report = many_critics(tmp_path / "store.sqlite", (False, False, True))
    (axes,) = _draw(report, "first-pass").axes  # type: ignore[arg-type]
    assert [t.get_text() for t in axes.get_xticklabels()] == ["0 (first)", "1", "2", "never"]
    assert list(axes.get_xticks()) == [0, 1, 2, 3] and axes.get_xlim()[0] <= -0.5
    assert "0 = first attempt" in axes.get_xlabel()


LONG_ACTOR = "vllm:Qwen/Qwen2.5-Coder-32B-Instruct-GPTQ-Int8-deployment-a100"
LONG_CRITICS = (LONG_ACTOR, "vllm:Qwen/Qwen2.5-Coder-7B-Instruct-GPTQ-Int8-deployment-a100")


@pytest.mark.parametrize("name", ["pass-by-iteration", "cost-vs-pass", "first-pass"])
def test_legends_of_long_model_names_stay_whole_inside_the_figure(tmp_path: Path, name: str) -> None:
    report = many_critics(tmp_path / "store.sqlite", actor=LONG_ACTOR, critics=LONG_CRITICS)
    figure = _draw(report, name)  # type: ignore[arg-type]
    (legend,) = figure.legends
    whole = figure.bbox
    for text in legend.get_texts():
        box = text.get_window_extent()
        assert whole.x0 - 1 <= box.x0 and box.x1 <= whole.x1 + 1, f"cut off: {text.get_text()!r}"
        assert whole.y0 - 1 <= box.y0 and box.y1 <= whole.y1 + 1, f"cut off: {text.get_text()!r}"
    shown = [t.get_text().replace("\n", " ") for t in legend.get_texts()]
    for critic in LONG_CRITICS:  # each model name is shown whole, on one line
        assert any(critic in line for t in legend.get_texts() for line in t.get_text().splitlines())
    assert len(set(shown)) == len(shown)


def _left_title(axes: Any) -> Any:
    """The left title's text artist (matplotlib keeps it as a private attribute; its bounds are checked)."""
    return axes._left_title


@pytest.mark.parametrize("name", ["pass-by-iteration", "cost-vs-pass"])
def test_a_run_where_nothing_passed_keeps_the_whole_percent_scale(tmp_path: Path, name: str) -> None:
    with Store(tmp_path / "store.sqlite") as store:
        fill(store)
        store._db.execute("UPDATE attempts SET hidden_passed = 0, hidden_pass_count = 0")
        report = build_report(store)
    (axes,) = _draw(report, name).axes
    low, high = axes.get_ylim()
    assert low <= 0 and high >= 100, (low, high)
