"""Every file of the viewer, computed from the store: the server answers each request with one, and
``view --out`` writes them all as a static site.

The pages are one HTML file, a script and a style sheet; data travels as script files
(``REFINELAB.put(path, {...})``) rather than JSON fetched at run time, because Chromium refuses
``fetch()`` of local files: the same pages then work from ``file://`` and from the server. Links are
URL hashes (``#/run/ID/t/CONFIG/PROBLEM/REPEAT``), which work on both.

Every file is one of :data:`ROUTES`: a path pattern, what the file holds, how it is made, and which of
its kind a static site writes. The server answers a request by the first route whose pattern matches;
``view --out`` writes every file the routes list. A new kind of file is one more route.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from importlib import resources
from pathlib import Path

from refinelab.errors import UserError
from refinelab.metrics import ScoredTrajectory
from refinelab.report import (
    REPORT_CSS,
    Figure,
    Report,
    build_report,
    figure_titles,
    figures_missing,
    render_figure,
)
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
            if not self.chosen:
                opened.run()  # a user error when there is no experiment to show (solves are shown by id)
        self._bundles: dict[str, _Bundle] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()  # guards the two dicts only: one run's work never blocks another's pages

    def runs(self, store: Store) -> list[RunInfo]:
        """The runs shown, newest last: those chosen, else every experiment (a solve only when chosen)."""
        every = store.runs()
        return (
            [r for r in every if r.id in self.chosen] if self.chosen else [r for r in every if r.kind == "experiment"]
        )

    def get(self, path: str) -> tuple[str, bytes] | None:
        """The content type and body of one file, or None when there is no such file."""
        path = path.lstrip("/") or "index.html"
        body = self._body(path)
        if body is None:
            return None
        return CONTENT_TYPES.get(Path(path).suffix, "application/octet-stream"), body

    def _body(self, path: str) -> bytes | None:
        """The file of the first route that matches ``path`` and has it."""
        for route in ROUTES:
            parts = route.match(path)
            if parts is None:
                continue
            if not route.reads_store:
                found = route.make(self, None, _File(path, parts))
            else:
                with Store(self.store) as store:
                    found = route.make(self, store, _File(path, parts))
            if found is not None:
                return found
        return None

    def _asset(self, path: str) -> bytes:
        text = resources.files("refinelab.view").joinpath("assets").joinpath(Path(path).name).read_text("utf-8")
        if path == "index.html":
            text = text.replace("/*LIVE*/false", "true" if self.live else "false")
        return text.encode()

    def _run(self, store: Store, run_slug: str) -> RunInfo | None:
        return next((r for r in self.runs(store) if slug(r.id) == run_slug), None)

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

    def _figure_file(self, store: Store, run: RunInfo, file: _File, *, script: bool) -> bytes | None:
        """``NAME.svg``, ``NAME.png``, or either as a data script (``NAME.svg.js``) for the download links."""
        figure = self._figure(self.bundle(store, run), file.parts["figure"])
        if figure is None:
            return None
        extension = file.parts["image"]
        body = figure.svg.encode() if extension == "svg" else figure.png
        if not script:
            return body
        return _script(file.path, {"type": CONTENT_TYPES[f".{extension}"], "base64": base64.b64encode(body).decode()})

    @staticmethod
    def _figure(bundle: _Bundle, name: str) -> Figure | None:
        """One figure of the run, drawn on first request (None: the run has no such figure)."""
        if figures_missing() or name not in dict(figure_titles(bundle.report)):
            return None  # without matplotlib the pages link to no figure (they say figures need it)
        if name not in bundle.figures:
            bundle.figures[name] = render_figure(bundle.report, name)
        return bundle.figures[name]

    def _compare(self, store: Store, path: str, left: str, right: str) -> bytes | None:
        """Two configurations compared (``left`` and ``right``: their sides' file names)."""
        sides = {side.file: (run, side) for run in self.runs(store) for side in run_sides(store, run)}
        if left not in sides or right not in sides:
            return None
        (run_a, a), (run_b, b) = sides[left], sides[right]
        first, second = self.bundle(store, run_a).trajectories, self.bundle(store, run_b).trajectories
        return _script(path, compare_payload(a, b, first, second))

    def paths(self) -> Iterator[str]:
        """Every file of the static site: each route's files, as its ``each`` lists them."""
        for route in ROUTES:
            if not route.reads_store:
                yield from (route.path(parts) for parts in route.each(self, None))
                continue
            with Store(self.store) as store:
                listed = [route.path(parts) for parts in route.each(self, store)]
            yield from listed


def _compared_pairs(sides: Sequence[Side]) -> Iterator[tuple[Side, Side]]:
    """Each pair in both orders: the page shows A against B as computed here, never swapped by script."""
    for a, b in itertools.permutations(sides, 2):
        if len(sides) <= MAX_COMPARE_SIDES or a.run == b.run or a.label == b.label:
            yield a, b


def _script(path: str, payload: object) -> bytes:
    """A data file: a script handing ``payload`` to the page under its own path."""
    return f"REFINELAB.put({json.dumps(path)}, {json.dumps(payload, default=str)});\n".encode()


@dataclass(frozen=True)
class _File:
    """A requested file: its path, and the parts of it its route's pattern names."""

    path: str
    """The file's path in the site."""
    parts: dict[str, str]
    """The parts its route's pattern names (``run``, ``problem``...)."""


Make = Callable[[Source, "Store | None", _File], "bytes | None"]
Each = Callable[[Source, "Store | None"], Iterable[dict[str, str]]]
_PART = {"image": "svg|png"}
"""What a named part may be, where not any path segment."""


def _once(source: Source, store: Store | None) -> list[dict[str, str]]:
    return [{}]


@dataclass(frozen=True)
class Route:
    """One kind of file of the viewer (see the module docstring)."""

    pattern: str
    """Its path, with ``{name}`` for each part that varies: ``data/{run}/p/{problem}.js``."""
    what: str
    """What it holds."""
    make: Make
    """Its content, given the store and the request (``None``: there is no such file)."""
    each: Each = _once
    """The named parts of every such file a static site holds."""
    reads_store: bool = True
    """Making it reads the store (opened for the request)."""

    @cached_property
    def _regex(self) -> re.Pattern[str]:
        pieces = re.split(r"\{(\w+)\}", self.pattern)
        body = "".join(
            re.escape(piece) if i % 2 == 0 else f"(?P<{piece}>{_PART.get(piece, '[^/]+?')})"
            for i, piece in enumerate(pieces)
        )
        return re.compile(body)

    def match(self, path: str) -> dict[str, str] | None:
        """The named parts of ``path`` when it is one of this route's files."""
        found = self._regex.fullmatch(path)
        return None if found is None else found.groupdict()

    def path(self, parts: dict[str, str]) -> str:
        """The file's path for these parts."""
        return self.pattern.format(**parts)


def _run_of(source: Source, store: Store | None, file: _File) -> RunInfo | None:
    assert store is not None
    return source._run(store, file.parts["run"])


def _each_run(source: Source, store: Store | None) -> list[dict[str, str]]:
    assert store is not None
    return [{"run": slug(run.id)} for run in source.runs(store)]


def _each_problem(source: Source, store: Store | None) -> list[dict[str, str]]:
    assert store is not None
    runs = source.runs(store)
    return [{"run": slug(r.id), "problem": key} for r in runs for key in source.bundle(store, r).problems]


def _each_figure(source: Source, store: Store | None) -> list[dict[str, str]]:
    assert store is not None
    if figures_missing():  # without matplotlib: every page, no figure
        return []
    return [
        {"run": slug(run.id), "figure": name, "image": image}
        for run in source.runs(store)
        for name, _ in figure_titles(source.bundle(store, run).report)
        for image in ("svg", "png")
    ]


def _each_pair(source: Source, store: Store | None) -> list[dict[str, str]]:
    assert store is not None
    sides = [side for run in source.runs(store) for side in run_sides(store, run)]
    return [{"a": a.file, "b": b.file} for a, b in _compared_pairs(sides)]


def _in_run(make: Callable[[Source, Store, RunInfo, _File], bytes | None]) -> Make:
    """A run's file: ``None`` unless the ``run`` part names a run the source shows."""

    def made(source: Source, store: Store | None, file: _File) -> bytes | None:
        run = _run_of(source, store, file)
        return None if run is None or store is None else make(source, store, run, file)

    return made


ROUTES: tuple[Route, ...] = (
    Route("index.html", "the page", lambda source, _, file: source._asset(file.path), reads_store=False),
    Route("assets/app.js", "the page's script", lambda source, _, file: source._asset(file.path), reads_store=False),
    Route("assets/app.css", "the page's styles", lambda source, _, file: source._asset(file.path), reads_store=False),
    Route("assets/report.css", "the report's table styles", lambda *_: REPORT_CSS.encode(), reads_store=False),
    Route(
        "data/runs.js",
        "the runs and every configuration (compare sides)",
        lambda source, store, file: _script(file.path, runs_payload(store, source.runs(store))) if store else None,
    ),
    Route(
        "data/{run}/run.js",
        "one run: report numbers, tables, case lists",
        _in_run(lambda source, store, run, file: source.bundle(store, run).run_js),
        _each_run,
    ),
    Route(
        "data/{run}/problems.js",
        "one run's problems (what a trajectory page needs; never waits for the run's report)",
        _in_run(lambda source, store, run, file: _script(file.path, problems_payload(store, run))),
        _each_run,
    ),
    Route(
        "data/{run}/p/{problem}.js",
        "one problem: every trajectory in full",
        _in_run(lambda source, store, run, file: source._problem(store, run, file.path, file.parts["problem"])),
        _each_problem,
    ),
    Route(
        "figures/{run}/{figure}.{image}",
        "the report's figures (SVG and PNG)",
        _in_run(lambda source, store, run, file: source._figure_file(store, run, file, script=False)),
        _each_figure,
    ),
    Route(
        "figures/{run}/{figure}.{image}.js",
        "the same bytes as data scripts, for the download links",
        _in_run(lambda source, store, run, file: source._figure_file(store, run, file, script=True)),
        _each_figure,
    ),
    Route(
        "data/compare/{a}--{b}.js",
        "two configurations compared",
        lambda source, store, file: (
            source._compare(store, file.path, file.parts["a"], file.parts["b"]) if store else None
        ),
        _each_pair,
    ),
)
"""Every file of the viewer, in the order a request is matched against them."""
