"""Nothing a user sees changes across issue 18's restructuring: a store written by the code of commit
1f215d4 (tests/fixtures/store_1f215d4, made by its make.py) still opens, and ``report`` in every format,
``report --list``, ``--why`` and ``--baseline``, and ``export`` print what the code before the
restructuring printed for it, byte for byte (main's code at the last merge: features merged since 1f215d4
changed some outputs on purpose); ``check`` scores, selects and self-tests as it did (issue 22 changed its
scoring output on purpose: a program's tests after its first failure are ``skipped``, and each ``--out``
line names its time rule; check.txt and check.jsonl.gz were written again by the perf branch's code, and
the merged code prints them byte for byte). Issue 20 added, on purpose, where each hidden result ran to
``export`` and ``check --out`` lines (``isolation``, ``node``): those keys are checked for their values,
then the rest of each line must be what the old code wrote; issue 28 added each attempt's reasoning effort,
reasoning tokens, thinking and the settings not sent, checked the same way. The text report's table of actor prompt
tokens per attempt no longer lists configurations whose attempts are samples (``sampling``, ``codet``,
``verified``: their attempt indices are not rounds, and with ``n=100`` the table had 100 columns), on
purpose: report-baseline.txt and report-400246.txt were written again for it. Issue 27 made ``check``'s
summary say which tests were skipped and why, on purpose: its line in check.txt and select.txt was
written again."""

from __future__ import annotations

import gzip
import json
import sqlite3
import time
from pathlib import Path

import pytest

from refinelab.cli import main

FIXTURE = Path(__file__).parents[1] / "fixtures" / "store_1f215d4"
RUNS: list[str] = json.loads((FIXTURE / "runs.json").read_text(encoding="utf-8"))

pytestmark = pytest.mark.filterwarnings("ignore::refinelab.sandbox.SandboxWarning")  # the fixture's checks ran so


def name(run: str) -> str:
    """The name of a run's files in the fixture."""
    return run.rsplit("-", 1)[-1] if run.startswith("solve-") else "baseline"


def expected(file: str) -> bytes:
    """A file of the fixture as the old code wrote it (``.gz`` files unpacked)."""
    path = FIXTURE / file
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


def without_added(written: bytes, added: dict[str, tuple[object, ...]]) -> bytes:
    """JSON lines with the keys the old code did not write taken out of each line and each record nested
    in it, once each is found holding one of its allowed values in ``added``; the rest as written."""
    lines = []
    for line in written.decode().splitlines():
        row = json.loads(line)
        for record in [row, *(v for v in row.values() if isinstance(v, dict))]:
            for key, allowed in added.items():
                if key in record:
                    assert record.pop(key) in allowed, (key, line[:200])
        lines.append(json.dumps(row) + "\n")
    return "".join(lines).encode()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("old") / "store.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(expected("store.sql.gz").decode())
    return path


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize(
    ("form", "file"), [("csv", "report-{}.csv"), ("text", "report-{}.txt"), ("json", "report-{}.json.gz")]
)
def test_the_report_of_an_old_run_is_unchanged(store: Path, tmp_path: Path, run: str, form: str, file: str) -> None:
    out = tmp_path / "report"
    assert main(["report", run, "--store", str(store), "--format", form, "--out", str(out)], {}) == 0
    assert out.read_bytes() == expected(file.format(name(run)))


@pytest.mark.parametrize("run", RUNS)
def test_the_export_of_an_old_run_is_unchanged(store: Path, tmp_path: Path, run: str) -> None:
    out = tmp_path / "export.jsonl"
    assert main(["export", run, "--store", str(store), "--out", str(out)], {}) == 0
    written = out.read_bytes()
    assert b'"node": null' in written and b'"isolation": "none"' in written  # the old store's runs ran so
    added: dict[str, tuple[object, ...]] = {"isolation": ("none", None), "node": (None,)}  # None: no hidden result
    added |= THINKING  # issue 28: nothing thought, asked with an effort or left unsent before efforts existed
    assert without_added(written, added) == expected(f"export-{name(run)}.jsonl.gz")


THINKING: dict[str, tuple[object, ...]] = {
    "reasoning_effort": (None,),
    "critic_reasoning_effort": (None,),
    "reasoning_tokens": (0,),
    "critic_reasoning_tokens": (0, None),  # None: no critic judged the attempt
    "reasoning": (None,),
    "critic_reasoning": (None,),
    "not_sent": ([],),
    "critic_not_sent": ([],),
}
"""What issue 28 added to each ``export`` line, with the only values an old store's lines may hold."""


def test_the_list_why_and_baseline_views_are_unchanged(
    store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "UTC")  # the listing shows local times; the fixture was written in UTC
    time.tzset()
    try:
        assert main(["report", "--store", str(store), "--list"], {}) == 0
        assert capsys.readouterr().out.encode() == expected("list.txt")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert main(["report", RUNS[0], "--store", str(store), "--why", "HumanEval/0"], {}) == 0
    assert capsys.readouterr().out.encode() == expected("why.txt")
    assert main(["report", RUNS[0], "--store", str(store), "--baseline", RUNS[0], "--format", "csv"], {}) == 0
    assert capsys.readouterr().out.encode() == expected("report-baseline-vs-baseline.csv")


@pytest.mark.slow
def test_check_scores_selects_and_self_tests_as_before(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    check = ["check", str(FIXTURE / "samples.jsonl"), "--benchmark", "humaneval", "--isolation", "none"]
    assert main([*check, "--out", str(tmp_path / "check.jsonl")], {}) == 0
    assert capsys.readouterr().out.encode() == expected("check.txt")
    written = (tmp_path / "check.jsonl").read_bytes()
    assert written.count(b'"node": null') == written.count(b"\n")  # every sample ran on this machine
    assert without_added(written, {"node": (None,)}) == expected("check.jsonl.gz")
    select = [
        "--select",
        "dual-agreement",
        "--generated-tests",
        str(FIXTURE / "tests.jsonl"),
        "--visible-tests",
        "join",
    ]
    assert main([*check, *select, "--out", str(tmp_path / "select.jsonl")], {}) == 0
    assert capsys.readouterr().out.encode() == expected("select.txt")
    assert (tmp_path / "select.jsonl").read_bytes() == expected("select.jsonl.gz")
    assert main(["check", "--self-test", "--benchmark", "humaneval", "--isolation", "none"], {}) == 0
    assert capsys.readouterr().out.encode() == expected("selftest.txt")
