"""Every file of the viewer, computed from the store: the server answers each request with one, and
``view --out`` writes them all as a static site.

The pages are one HTML file, a script and a style sheet; data travels as script files
(``REFINELAB.put(path, {...})``) rather than JSON fetched at run time, because Chromium refuses
``fetch()`` of local files: the same pages then work from ``file://`` and from the server. Links are
URL hashes (``#/run/ID/t/CONFIG/PROBLEM/REPEAT``), which work on both.

Layout::

    index.html, assets/app.js, assets/app.css, assets/report.css
    data/runs.js                       the runs and every configuration (compare sides)
    data/RUN/run.js                    one run: report numbers, tables, case lists
    data/RUN/problems.js               one run's problems (what a trajectory page needs; no report)
    data/RUN/p/PROBLEM.js              one problem: every trajectory in full
    data/compare/SIDE--SIDE.js         two configurations compared
    figures/RUN/NAME.svg, NAME.png     the report's figures
    figures/RUN/NAME.svg.js, .png.js   the same bytes as data scripts, for the download links
"""

from __future__ import annotations

import base64
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

from refinelab.errors import UserError
from refinelab.metrics import ScoredTrajectory
from refinelab.report import REPORT_CSS, Figure, Report, build_report, figure_titles, render_figure
from refinelab.store import ProblemInfo, RunInfo, Store
from refinelab.view._payload import (
    Side,
    compare_payload,
    problem_payload,
    problems_payload,
    run_payload,
    run_sides,
    runs_payload,
    slug,
)

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
"""Content type by file extension."""
LIVE_SECONDS = 10.0
"""How long the served viewer reuses a running run's computed pages (a finished run's are kept for good)."""
MAX_COMPARE_SIDES = 40
"""Above this many configurations in a static site, only pairs within a run or with the same label
are compared ahead of time (the served viewer compares any pair on request)."""


@dataclass(frozen=True)
class _Bundle:
    """One run's computed files, all read from one snapshot of the store."""

    run: RunInfo
    """The run as the snapshot saw it (its status says whether more may come)."""
    built: float
    """When it was computed (the source's clock)."""
    fingerprint: tuple[object, ...]
    """The run's stored data it was computed from."""
    report: Report
    trajectories: list[ScoredTrajectory]
    problems: dict[str, ProblemInfo]
    run_js: bytes
    figures: dict[str, Figure] = field(default_factory=dict)
    """The figures drawn so far: each is drawn when first asked for (its page shown, or the site written)."""


class Source:
    """The viewer's files for some runs of a store (all runs when ``runs`` is empty).

    Args:
        store: The store file (it must exist).
        runs: Run ids or unique prefixes; empty for every run (new runs appear as they start).
        live: Served (the page offers to reload data and polls a running run); False for a static site.
        clock: Seconds, for how long a running run's pages are reused (:data:`LIVE_SECONDS`).
    """

    def __init__(
        self, store: Path, runs: Sequence[str] = (), *, live: bool = False, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not store.is_file():
            raise UserError(f"{store}: no store here (run `refinelab run` first, or pass --store)")
        self.store, self.live, self.clock = store, live, clock
        with Store(store) as opened:
            self.chosen = [opened.run(run).id for run in runs]
            if not opened.runs():
                raise UserError(f"{store}: no runs stored yet (run `refinelab run` first)")
        self._bundles: dict[str, _Bundle] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()  # guards the two dicts only: one run's work never blocks another's pages

    def runs(self, store: Store) -> list[RunInfo]:
        """The runs shown, newest last."""
        every = store.runs()
        return [r for r in every if r.id in self.chosen] if self.chosen else every

    def get(self, path: str) -> tuple[str, bytes] | None:
        """The content type and body of one file, or None when there is no such file."""
        path = path.lstrip("/") or "index.html"
        body = self._body(path)
        if body is None:
            return None
        return CONTENT_TYPES.get(Path(path).suffix, "application/octet-stream"), body

    def _body(self, path: str) -> bytes | None:
        if path in ("index.html", "assets/app.js", "assets/app.css"):
            return self._asset(path)
        if path == "assets/report.css":
            return REPORT_CSS.encode()
        parts = path.split("/")
        with Store(self.store) as store:
            if path == "data/runs.js":
                return _script(path, runs_payload(store, self.runs(store)))
            run = self._run(store, parts[1]) if len(parts) >= 3 and parts[0] in ("data", "figures") else None
            if run is not None:
                return self._run_file(store, run, path, parts)
            if len(parts) == 3 and parts[:2] == ["data", "compare"] and parts[2].endswith(".js"):
                return self._compare(store, path, parts[2][: -len(".js")])
        return None

    def _asset(self, path: str) -> bytes:
        text = resources.files("refinelab.view").joinpath("assets").joinpath(Path(path).name).read_text("utf-8")
        if path == "index.html":
            text = text.replace("/*LIVE*/false", "true" if self.live else "false")
        return text.encode()

    def _run(self, store: Store, run_slug: str) -> RunInfo | None:
        return next((r for r in self.runs(store) if slug(r.id) == run_slug), None)

    def _run_file(self, store: Store, run: RunInfo, path: str, parts: list[str]) -> bytes | None:
        if parts[0] == "figures" and len(parts) == 3:
            return self._figure_file(store, run, path, parts[2])
        if parts[2:] == ["run.js"]:
            return self.bundle(store, run).run_js
        if parts[2:] == ["problems.js"]:  # never waits for the run's report (see problems_payload)
            return _script(path, problems_payload(store, run))
        if len(parts) == 4 and parts[2] == "p" and parts[3].endswith(".js"):
            return self._problem(store, run, path, parts[3][: -len(".js")])
        return None

    def _problem(self, store: Store, run: RunInfo, path: str, name: str) -> bytes | None:
        """One problem's page data. Served, it is read from the store as of now (its own snapshot: a
        trajectory page never waits for a run's report); a static site reuses the run's one snapshot."""
        if not self.live:
            bundle = self.bundle(store, run)
            problem = bundle.problems.get(name)
            found = None if problem is None else problem_payload(store, run.id, problem, bundle.trajectories)
            return None if found is None else _script(path, found)
        with store.snapshot():
            trajectories = store.trajectories(run.id)
            problem = next((p for p in store.problem_details(run.id) if slug(p.key) == name), None)
            return None if problem is None else _script(path, problem_payload(store, run.id, problem, trajectories))

    def bundle(self, store: Store, run: RunInfo) -> _Bundle:
        """The run's computed files: reused for :data:`LIVE_SECONDS` while the run is running (longer when
        nothing new is stored), for good once it has ended."""
        with self._lock:
            lock = self._locks.setdefault(run.id, threading.Lock())
        with lock:
            cached = self._bundles.get(run.id)
            if cached is not None and self._fresh(store, cached, run):
                return cached
            bundle = self._compute(store, run.id)
            self._bundles[run.id] = bundle
            return bundle

    def _fresh(self, store: Store, cached: _Bundle, run: RunInfo) -> bool:
        if not self.live:
            return True
        if run.status != cached.run.status:
            return False
        if run.status != "running" or self.clock() - cached.built < LIVE_SECONDS:
            return True
        if store.fingerprint(run.id) != cached.fingerprint:
            return False
        self._bundles[run.id] = replace(cached, built=self.clock())  # nothing new: keep it another while
        return True

    def _compute(self, store: Store, run_id: str) -> _Bundle:
        """Everything from one snapshot, so the report's counts and the lists always agree."""
        with store.snapshot():
            trajectories = store.trajectories(run_id)  # the first read fixes the snapshot
            run, built, fingerprint = store.run(run_id), self.clock(), store.fingerprint(run_id)
            report = build_report(store, run_id)
            payload = run_payload(store, report, figure_titles(report), trajectories)
            problems = {slug(p.key): p for p in store.problem_details(run_id)}
        path = f"data/{slug(run_id)}/run.js"
        return _Bundle(
            run,
            built,
            fingerprint,
            report,
            trajectories=trajectories,
            problems=problems,
            run_js=_script(path, payload),
        )

    def _figure_file(self, store: Store, run: RunInfo, path: str, file: str) -> bytes | None:
        """``NAME.svg``, ``NAME.png``, or either as a data script (``NAME.svg.js``) for the download links."""
        script = file.endswith(".js")
        name, _, extension = file.removesuffix(".js").rpartition(".")
        figure = self._figure(self.bundle(store, run), name) if extension in ("svg", "png") else None
        if figure is None:
            return None
        body = figure.svg.encode() if extension == "svg" else figure.png
        if not script:
            return body
        return _script(path, {"type": CONTENT_TYPES[f".{extension}"], "base64": base64.b64encode(body).decode()})

    @staticmethod
    def _figure(bundle: _Bundle, name: str) -> Figure | None:
        """One figure of the run, drawn on first request (None: the run has no such figure)."""
        if name not in dict(figure_titles(bundle.report)):
            return None
        if name not in bundle.figures:
            bundle.figures[name] = render_figure(bundle.report, name)
        return bundle.figures[name]

    def _compare(self, store: Store, path: str, name: str) -> bytes | None:
        wanted = name.split("--")
        sides = {side.file: (run, side) for run in self.runs(store) for side in run_sides(store, run)}
        if len(wanted) != 2 or any(w not in sides for w in wanted):
            return None
        (run_a, a), (run_b, b) = sides[wanted[0]], sides[wanted[1]]
        first, second = self.bundle(store, run_a).trajectories, self.bundle(store, run_b).trajectories
        return _script(path, compare_payload(a, b, first, second))

    def paths(self) -> Iterator[str]:
        """Every file of the static site."""
        yield from ("index.html", "assets/app.js", "assets/app.css", "assets/report.css", "data/runs.js")
        with Store(self.store) as store:
            runs = self.runs(store)
            sides: list[Side] = []
            for run in runs:
                bundle = self.bundle(store, run)
                base = slug(run.id)
                yield f"data/{base}/run.js"
                yield f"data/{base}/problems.js"
                yield from (f"data/{base}/p/{key}.js" for key in bundle.problems)
                figures = figure_titles(bundle.report)
                files = (f"{name}.{ext}" for name, _ in figures for ext in ("svg", "png"))
                yield from (f"figures/{base}/{file}{script}" for file in files for script in ("", ".js"))
                sides += run_sides(store, run)
        for a, b in _compared_pairs(sides):
            yield f"data/compare/{a.file}--{b.file}.js"


def _compared_pairs(sides: Sequence[Side]) -> Iterator[tuple[Side, Side]]:
    """Each pair in both orders: the page shows A against B as computed here, never swapped by script."""
    for a, b in itertools.permutations(sides, 2):
        if len(sides) <= MAX_COMPARE_SIDES or a.run == b.run or a.label == b.label:
            yield a, b


def _script(path: str, payload: object) -> bytes:
    """A data file: a script handing ``payload`` to the page under its own path."""
    return f"REFINELAB.put({json.dumps(path)}, {json.dumps(payload, default=str)});\n".encode()
