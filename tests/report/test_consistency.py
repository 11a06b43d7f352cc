"""One definition of pass@1 after each iteration: a run with single pass, a critic strategy and sampling
(model doubles, the real sandbox) shows the same numbers in the text, CSV, JSON and HTML reports, in
``refinelab export`` and in ``metrics.pass_at_iteration``, and they are the numbers worked out by hand."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
from collections import Counter
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path

import pytest

from refinelab.cli import main
from refinelab.experiment import Configuration, score_attempts
from refinelab.metrics import pass_at_iteration, pass_final
from refinelab.models import FunctionModel, GenerateConfig, Message
from refinelab.problems import Problem, load_benchmark
from refinelab.report import HEADLINE, build_report, render_html, render_text, report_csv, report_json
from refinelab.sandbox import WorkerPool
from refinelab.store import RunHeader, RunProblem, Store, Unit
from refinelab.strategies import Env, StrategySpec
from tests.experiment.fakes import write_benchmark

RUN = "mixed-1"
SINGLE = Configuration(StrategySpec("single-pass"), "actor", None)
REFINE = Configuration(StrategySpec("self-refine", {"max_iters": 2}), "actor", "critic")
SAMPLING = Configuration(StrategySpec("sampling", {"n": 3}), "actor", None)

# Worked out by hand from the model below (P passes the hidden tests, F does not):
#   drafts (temperature 0): p0 P, p1 F, p2 P, p3 F -> single pass 2/4
#   self-refine: p1 refined once into P; p3 refined into F, then into P -> 2/4, 3/4, 4/4
#   sampling: first samples p0 F, p1 F, p2 P, p3 F (1/4); selected by visible tests: p0 P (sample 1),
#   p1 P (sample 2), p2 P, p3 F (its first sample passes the visible test only) -> 3/4
EXPECTED = {
    SINGLE.label: ((0.5, None, None), 0.5),
    REFINE.label: ((0.5, 0.75, 1.0), 1.0),
    SAMPLING.label: ((0.25, None, None), 0.75),
}
RIGHT, HIDDEN_WRONG, WRONG = "x + {i}", "x + {i} if x < 5 else 0", "-1"
SAMPLES = {0: [WRONG, RIGHT, RIGHT], 1: [WRONG, WRONG, RIGHT], 2: [RIGHT] * 3, 3: [HIDDEN_WRONG, RIGHT, RIGHT]}


def _program(body: str, i: int, *, ok: bool = False) -> str:
    return f"```python\ndef f(x):{' # ok' if ok else ''}\n    return {body.format(i=i)}\n```"


class Actor:
    """Drafts, refinements and samples as in the table above."""

    def __init__(self) -> None:
        self.refined: Counter[int] = Counter()
        self.sampled: Counter[int] = Counter()

    def __call__(self, messages: Sequence[Message], config: GenerateConfig) -> str:
        i = int(re.findall(r"Problem p(\d)", messages[1].content)[0])
        if config.temperature:
            self.sampled[i] += 1
            return _program(SAMPLES[i][self.sampled[i] - 1], i)
        if "Previous program" not in messages[-1].content:
            return _program(RIGHT if i % 2 == 0 else HIDDEN_WRONG, i, ok=i % 2 == 0)
        self.refined[i] += 1
        right = i == 1 or self.refined[i] == 2
        return _program(RIGHT if right else WRONG, i, ok=right)


def critic(messages: Sequence[Message], config: GenerateConfig) -> str:
    accepted = "# ok" in messages[-1].content
    return json.dumps({"critique": "" if accepted else "Wrong for large x.", "passed": accepted})


async def _fill(store: Store, problems: list[Problem]) -> None:
    store.open_run(RUN, {"name": "mixed", "repeats": 1}, RunHeader(versions={}, isolation="?", limits={}))
    store.add_configurations(RUN, [c.stored() for c in (SINGLE, REFINE, SAMPLING)])
    store.add_problems(RUN, [RunProblem(f"jsonl/{p.id}", p) for p in problems])
    actor, critic_model = FunctionModel(Actor(), name="actor"), FunctionModel(critic, name="critic")
    async with WorkerPool(workers=2) as pool:
        for configuration in (SINGLE, REFINE, SAMPLING):
            for problem in problems:
                env = Env(actor, pool, critic=critic_model if configuration.critic else None)
                trajectory = await configuration.strategy.run(problem, env)
                hidden = await score_attempts(trajectory, problem, pool)
                store.save(RUN, Unit(configuration.key, f"jsonl/{problem.id}", 0), trajectory, hidden)


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("consistency")
    problems = asyncio.run(load_benchmark("jsonl", write_benchmark(folder / "problems.jsonl", n=4)))
    path = folder / "store.sqlite"
    with Store(path) as store:
        asyncio.run(_fill(store, problems))
    return path


Numbers = dict[str, tuple[tuple[float | None, ...], float]]


def _cell(text: str) -> float | None:
    """``75.0 (+25.0)`` -> 0.75; ``–`` -> None."""
    return None if text == "–" else float(text.split()[0]) / 100


def _from_table(header: list[str], rows: list[list[str]]) -> Numbers:
    its = [i for i, name in enumerate(header) if name == "first attempt" or name.endswith(" it.")]
    final = header.index("final")
    return {row[0]: (tuple(_cell(row[i]) for i in its), float(row[final]) / 100) for row in rows}


def from_text(text: str) -> Numbers:
    block = text.split(HEADLINE)[1].split("\n\n")[0].splitlines()
    header, *rows = [re.split(r"\s{2,}", line.strip()) for line in block[1:] if not line.startswith("-")]
    return _from_table(header, rows)


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.caption, self.row, self.text, self.where = "", [""], "", ""

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.where = tag
        if tag == "tr":
            self.row = []
        self.text = ""

    def handle_data(self, data: str) -> None:
        self.text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "caption":
            self.caption = self.text
            self.tables[self.caption] = []
        elif tag in ("td", "th"):
            self.row.append(self.text)
        elif tag == "tr" and self.caption in self.tables:
            self.tables[self.caption].append(self.row)


def from_html(page: str) -> Numbers:
    parser = _Tables()
    parser.feed(page)
    (caption,) = [c for c in parser.tables if c == HEADLINE]
    header, *rows = parser.tables[caption]
    return _from_table(header, rows)


def from_csv(text: str) -> Numbers:
    rows = list(csv.DictReader(io.StringIO(text)))
    its = sorted((k for k in rows[0] if k.startswith("pass_it")), key=lambda k: int(k[7:]))
    return {
        r["configuration"]: (tuple(float(r[k]) if r[k] else None for k in its), float(r["pass_final"])) for r in rows
    }


def from_json(text: str) -> Numbers:
    return {c["label"]: (tuple(c["by_iteration"]), c["final"]) for c in json.loads(text)["configurations"]}


def from_export(lines: list[dict[str, object]], depth: int) -> Numbers:
    """The definition applied to ``refinelab export``'s attempt lines, independently of the metrics code."""
    groups: dict[str, dict[str, list[dict[str, object]]]] = {}
    for line in lines:
        label = f"{line['strategy']}({line['params']})" if line["params"] else str(line["strategy"])
        label += f" · {line['actor']}" + (f" / {line['critic']}" if line["critic"] else "")
        groups.setdefault(label, {}).setdefault(str(line["problem_id"]), []).append(line)
    found: Numbers = {}
    for label, problems in groups.items():
        iterative = any(len(a) > 1 and a[0]["origin"] != "sample" for a in problems.values())
        values = []
        for i in range(depth + 1):
            answers = [a[min(i, len(a) - 1)]["hidden_passed"] for a in problems.values()]
            values.append(sum(map(bool, answers)) / len(answers) if i == 0 or iterative else None)
        finals = [any(x["is_final"] and x["hidden_passed"] for x in a) for a in problems.values()]
        found[label] = (tuple(values), sum(finals) / len(finals))
    return found


def test_every_output_shows_the_hand_counted_pass_after_each_iteration(store_path: Path, tmp_path: Path) -> None:
    with Store(store_path) as store:
        report = build_report(store, RUN)
        trajectories = store.trajectories(RUN)
    metrics: Numbers = {}
    for label in EXPECTED:
        group = [t for t in trajectories if t.label == label]
        metrics[label] = (tuple(pass_at_iteration(group, i) for i in range(3)), pass_final(group) or 0.0)
    assert main(["export", RUN, "--store", str(store_path), "--out", str(tmp_path / "a.jsonl")], {}) == 0
    lines = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()]
    outputs = {
        "metrics": metrics,
        "text": from_text(render_text(report)),
        "html": from_html(render_html(report)),
        "csv": from_csv(report_csv(report)),
        "json": from_json(report_json(report)),
        "export": from_export(lines, depth=2),
    }
    for name, numbers in outputs.items():
        assert numbers == EXPECTED, name


def test_the_cli_formats_agree_with_the_library(store_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for fmt, read in (("text", from_text), ("csv", from_csv), ("json", from_json)):
        assert main(["report", RUN, "--store", str(store_path), "--format", fmt], {}) == 0
        assert read(capsys.readouterr().out) == EXPECTED, fmt
