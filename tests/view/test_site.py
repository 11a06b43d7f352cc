"""The viewer without a browser: the static site's files, the server's answers, live data, errors."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from refinelab.cli import main
from refinelab.errors import UserError
from refinelab.metrics import critic_call_attempts, regression_error_attempts
from refinelab.store import Store, Unit
from refinelab.view import Source, serving
from refinelab.view._payload import slug
from tests.report.test_report import REFINE, attempt, fill, result
from tests.view.conftest import Demo, SlowReports


def data_file(text: str) -> dict[str, Any]:
    """The payload of a data script ``REFINELAB.put("path", {...});`` (parsed JSON: any shape)."""
    start, end = text.index(", ") + 2, text.rindex(");")
    payload: dict[str, Any] = json.loads(text[start:end])
    return payload


def get(url: str, timeout: float = 30) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_the_static_site_holds_every_page_and_figure(demo: Demo) -> None:
    site = demo.site
    base = f"data/{slug(demo.run_id)}"
    assert (site / "index.html").read_text(encoding="utf-8").count("/*LIVE*/") == 0
    run = data_file((site / base / "run.js").read_text(encoding="utf-8"))
    assert run["report"] == demo.report  # the overview's numbers are the JSON report's, byte for byte
    names = [f["name"] for f in run["figures"]]
    assert (
        names == [n for n, _ in demo.figures] == ["pass-by-iteration", "cost-vs-pass", "critic-confusion", "first-pass"]
    )
    for name in names:
        assert (
            (site / "figures" / slug(demo.run_id) / f"{name}.svg")
            .read_text(encoding="utf-8")
            .lstrip()
            .startswith("<?xml")
        )
        assert (site / "figures" / slug(demo.run_id) / f"{name}.png").read_bytes().startswith(b"\x89PNG")
        for extension in ("svg", "png"):  # the same bytes as data scripts, for the download links
            script = data_file((site / "figures" / slug(demo.run_id) / f"{name}.{extension}.js").read_text("utf-8"))
            expected = (site / "figures" / slug(demo.run_id) / f"{name}.{extension}").read_bytes()
            assert base64.b64decode(str(script["base64"])) == expected
    assert len(list((site / base / "p").iterdir())) == 4
    assert len(list((site / "data" / "compare").iterdir())) == 20  # every pair of the five, in both orders


def test_the_case_lists_are_the_metrics_cases(demo: Demo) -> None:
    run = data_file((demo.site / "data" / slug(demo.run_id) / "run.js").read_text(encoding="utf-8"))
    with Store(demo.store) as store:
        trajectories = store.trajectories(demo.run_id)
    summaries = run["trajectories"]
    assert isinstance(summaries, list) and len(summaries) == len(trajectories) == 20
    for summary, trajectory in zip(summaries, trajectories):
        assert (summary["problem"], summary["config"]) == (trajectory.problem, trajectory.config)
        assert summary["regression_errors"] == regression_error_attempts(trajectory)
        assert summary["false_rejections"] == critic_call_attempts(trajectory, "false_reject")
        assert summary["false_acceptances"] == critic_call_attempts(trajectory, "false_accept")


def test_a_second_write_replaces_the_site_and_a_foreign_folder_is_refused(
    demo: Demo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "site"
    assert main(["view", "--store", str(demo.store), "--out", str(out)], {}) == 0
    (out / "stale.txt").write_text("from before", encoding="utf-8")
    assert main(["view", "--store", str(demo.store), "--out", str(out)], {}) == 0
    assert not (out / "stale.txt").exists() and (out / "index.html").exists()
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me", encoding="utf-8")
    capsys.readouterr()
    assert main(["view", "--store", str(demo.store), "--out", str(foreign)], {}) == 2
    err = capsys.readouterr().err.strip()
    assert "is not a site refinelab wrote" in err and len(err.splitlines()) == 1
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
    assert not list(tmp_path.glob(".*tmp"))  # nothing half-written left behind


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope-run"], "no single run 'nope-run'"),
        (["--store", "missing.sqlite"], "no store here"),
    ],
)
def test_bad_view_commands_are_one_line_errors(
    demo: Demo, tmp_path: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ["--store", str(demo.store)] if "--store" not in args else []
    args = [a if a != "missing.sqlite" else str(tmp_path / a) for a in args]
    assert main(["view", *args, *store, "--out", str(tmp_path / "site")], {}) == 2
    assert message in capsys.readouterr().err and not (tmp_path / "site").exists()


def test_without_matplotlib_the_viewer_writes_every_page_and_names_the_extra(
    demo: Demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["view", "--store", str(demo.store), "--out", str(tmp_path / "site")], {}) == 0  # every page
    assert "pip install 'refinelab[view]'" in capsys.readouterr().err
    assert not (tmp_path / "site" / "figures").exists()
    with serving(Source(demo.store, live=True)) as server:
        status, body = get(f"{server.url}data/{slug(demo.run_id)}/run.js")
        assert status == 200  # the overview opens without matplotlib, and says what figures need
        data = data_file(body.decode())
        assert data["figures"] == [] and "refinelab[view]" in data["figures_note"]
        status, body = get(f"{server.url}figures/{slug(demo.run_id)}/{demo.figures[0][0]}.svg")
    assert status == 404  # no page links to a figure


def test_the_server_serves_only_its_own_files(demo: Demo) -> None:
    source = Source(demo.store)
    with serving(Source(demo.store, live=True)) as server:
        status, page = get(server.url)
        assert status == 200 and b"window.REFINELAB_LIVE = true" in page
        for path in list(source.paths())[:12]:
            assert get(server.url + path)[0] == 200, path
        for bad in ("nope.js", "data/x/run.js", "../pyproject.toml", "assets/../../pyproject.toml", "figures/a/b.svg"):
            assert get(server.url + bad)[0] == 404, bad


def store_one_more(path: Path, name: str) -> None:
    """What a running experiment does: store one more trajectory (another connection, committed)."""
    from refinelab.strategies import Trajectory

    with Store(path) as store:
        extra = Trajectory(name, "self-refine", {}, (attempt(0, "pass", 100),), 0, "accepted")
        store.save("demo-1", Unit(REFINE.key, f"jsonl/{name}", 0), extra, [result(True)])


def run_js(source: Source) -> dict[str, object]:
    return data_file(source.get(f"data/{slug('demo-1')}/run.js")[1].decode())  # type: ignore[index]


def reported(payload: dict[str, Any]) -> int:
    """Trajectories the report's tables count."""
    return sum(c["trajectories"] for c in payload["report"]["configurations"])


def test_a_running_runs_pages_are_reused_for_ten_seconds_and_a_finished_runs_for_good(tmp_path: Path) -> None:
    path, now = tmp_path / "store.sqlite", [0.0]
    with Store(path) as store:
        fill(store)  # a running run (its process, this one, is alive)
    source = Source(path, live=True, clock=lambda: now[0])
    before = run_js(source)
    store_one_more(path, "p8")
    now[0] = 9.0
    assert run_js(source) == before  # within ten seconds: the same pages, computed once
    now[0] = 10.5
    after = run_js(source)
    assert len(after["trajectories"]) == len(before["trajectories"]) + 1 == reported(after)  # type: ignore[arg-type]
    with Store(path) as store:
        store.finish_run("demo-1", "complete")
    finished = run_js(source)  # the run ended: read again once...
    assert finished["run"]["status"] == "complete"  # type: ignore[index]
    store_one_more(path, "p9")
    now[0] = 10_000.0
    assert run_js(source) == finished  # ...then kept for good


def test_a_runs_pages_come_from_one_snapshot_while_an_experiment_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        fill(store)
    reads = Store.problem_details

    def meanwhile(self: Store, run_id: str) -> object:  # the experiment stores a trajectory mid-read
        store_one_more(path, f"p{len(written) + 5}")
        written.append(run_id)
        return reads(self, run_id)

    written: list[str] = []
    monkeypatch.setattr(Store, "problem_details", meanwhile)
    payload = run_js(Source(path, live=True))
    assert written, "the experiment did write while the page was computed"
    assert len(payload["trajectories"]) == reported(payload) == 8  # type: ignore[arg-type]  # as before the writes
    problem = data_file(Source(path, live=True).get(f"data/{slug('demo-1')}/p/{slug('jsonl/p0')}.js")[1].decode())  # type: ignore[index]
    assert len(problem["summaries"]) == len(problem["trajectories"]) == 2


def test_a_trajectory_page_never_waits_for_a_runs_report(slow_reports: SlowReports) -> None:
    import threading

    with serving(Source(slow_reports.store, live=True)) as server:
        overview = threading.Thread(target=get, args=(f"{server.url}data/{slug('demo-1')}/run.js",))
        overview.start()
        try:
            assert slow_reports.started.wait(30)
            status, body = get(f"{server.url}data/{slug('demo-1')}/p/{slug('jsonl/p2')}.js", timeout=5)
            assert status == 200 and len(data_file(body.decode())["trajectories"]) == 2
            assert get(f"{server.url}data/runs.js", timeout=5)[0] == 200
        finally:
            slow_reports.release.set()
            overview.join(60)


def test_the_view_command_serves_until_stopped(demo: Demo) -> None:
    command = [sys.executable, "-m", "refinelab", "view", "--store", str(demo.store), "--port", "0", "--no-open"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert line.startswith("refinelab view: http://127.0.0.1:"), line
        url = line.split()[2]
        status, body = get(url + "data/runs.js")
        assert status == 200 and demo.run_id.encode() in body
    finally:
        process.terminate()  # the process this test started, by its handle
        process.wait(timeout=30)
        process.stderr.close()  # type: ignore[union-attr]


def test_an_empty_store_is_a_user_error(tmp_path: Path) -> None:
    Store(tmp_path / "empty.sqlite").close()
    with pytest.raises(UserError, match="no runs stored yet"):
        Source(tmp_path / "empty.sqlite")


def test_a_store_from_before_problem_details_is_viewable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from refinelab.store import MIGRATIONS

    path = tmp_path / "old.sqlite"
    # the rows written here have the columns of m006, m007 and m008 (which needs m005's table), not m004's details
    later = tuple(
        m
        for m in MIGRATIONS
        if m[0] in ("m005_generated_tests_and_decisions", "m006_attempt_node", "m007_run_endpoints", "m008_reasoning")
    )
    monkeypatch.setattr("refinelab.store._store.MIGRATIONS", MIGRATIONS[:3] + later)
    monkeypatch.setattr("refinelab.store._store.Store.add_problems", lambda self, run, problems: None)
    with Store(path) as store:
        fill(store)
        store._db.executemany(
            "INSERT INTO problems VALUES ('demo-1', ?, 'function', 1, 2)", [(f"jsonl/p{i}",) for i in range(4)]
        )
    monkeypatch.undo()
    source = Source(path)
    run = data_file(source.get(f"data/{slug('demo-1')}/run.js")[1].decode())  # type: ignore[index]
    assert {p["difficulty"] for p in run["problems"]} == {None}
    problem = data_file(source.get(f"data/{slug('demo-1')}/p/{slug('jsonl/p0')}.js")[1].decode())  # type: ignore[index]
    assert problem["problem"]["prompt"] is None
    assert run["report"]["overview"][0]["name"] == "all problems"


def test_compare_data_is_the_reports_paired_test_computed_by_the_metrics(tmp_path: Path) -> None:
    from refinelab.report import build_report
    from refinelab.view._payload import compare_payload, run_sides

    path = tmp_path / "store.sqlite"
    with Store(path) as store:
        fill(store)
        report, run = build_report(store, "demo-1"), store.run("demo-1")
        single, refine = run_sides(store, run)
        trajectories = store.trajectories("demo-1")
    (expected,) = report.comparisons
    forward = compare_payload(single, refine, trajectories, trajectories)
    backward = compare_payload(refine, single, trajectories, trajectories)
    assert (forward["pairs"], forward["only_a"], forward["only_b"]) == (4, expected.only_baseline, expected.only_this)
    assert forward["p_value"] == backward["p_value"] == expected.p_value
    assert forward["difference"] == expected.difference and forward["both"] == backward["both"] == 1
    assert (backward["only_a"], backward["only_b"]) == (forward["only_b"], forward["only_a"])
    assert forward["shown"]["p_value"] == f"{expected.p_value:.3g}"  # type: ignore[index]


def test_one_route_table_both_lists_and_answers_every_file(demo: Demo) -> None:
    """Every file the static site lists is answered by the first route its path matches, that route
    spells the path back from its parts, and every route lists files (the site is the table's output)."""
    from refinelab.view._site import ROUTES

    source = Source(demo.store)
    listed = list(source.paths())
    assert len(listed) == len(set(listed)) and source.get(listed[0]) is not None
    used = set()
    for path in listed:
        route = next(r for r in ROUTES if r.match(path) is not None)
        parts = route.match(path)
        assert parts is not None and route.path(parts) == path
        used.add(route.pattern)
    assert used == {route.pattern for route in ROUTES}
    assert {p.relative_to(demo.site).as_posix() for p in demo.site.rglob("*") if p.is_file()} - set(listed) == {
        ".refinelab-site"
    }
    assert source.get("data/compare/nope--nothing.js") is None and source.get("figures/x/y.gif") is None
