"""``check`` progress: plain lines off a terminal (none for short jobs), a rich bar on one; rich is
imported only to draw; the self-test says what it checked; a samples file that mostly fails to parse
gets a hint."""

from __future__ import annotations

import gc
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from refinelab._collection import BATCH_THRESHOLDS
from refinelab.cli import main
from refinelab.cli._progress import ProgressDisplay


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_per_tenth_after_a_quiet_start() -> None:
    stream, clock = io.StringIO(), Clock()
    show = ProgressDisplay(stream, tty=False, clock=clock)
    show("scoring", 0, 1000)
    for done in range(0, 1001, 50):
        clock.now += 0.5
        show("scoring", done, 1000)
    lines = stream.getvalue().splitlines()
    # 0.5 s per 50 units: quiet for the first 2 s (150 units), then one line per tenth
    assert lines[0] == "scoring: 150/1,000 (15%) · 75.0/s · ETA 11s"
    shown = [line.split()[1] for line in lines]
    assert shown == [f"{n:,}/1,000" for n in (150, 200, 300, 400, 500, 600, 700, 800, 900, 1000)]
    assert lines[-1].endswith("ETA 0s")


def test_a_slow_tenth_still_shows_a_line_every_30_seconds() -> None:
    stream, clock = io.StringIO(), Clock()
    show = ProgressDisplay(stream, tty=False, clock=clock)
    show("computing expected outputs", 0, 100)
    for done in (1, 2, 3):
        clock.now += 31
        show("computing expected outputs", done, 100)
    # 3 done in 93 s: 0.032/s, 97 to go
    assert stream.getvalue().splitlines() == [
        f"computing expected outputs: {n}/100 ({n}%) · 0.0/s · ETA {eta}"
        for n, eta in ((1, "51m 09s"), (2, "50m 38s"), (3, "50m 07s"))
    ]


def test_a_short_job_prints_nothing() -> None:
    stream, clock = io.StringIO(), Clock()
    show = ProgressDisplay(stream, tty=False, clock=clock)
    for done in range(11):
        show("scoring", done, 10)
    assert stream.getvalue() == ""


def test_a_terminal_gets_a_rich_bar() -> None:
    stream = io.StringIO()
    with ProgressDisplay(stream, tty=True) as show:
        show("self-test", 0, 3)
        show("self-test", 3, 3)
    assert "self-test" in stream.getvalue() and "3/3" in stream.getvalue()


def test_rich_is_imported_only_to_draw() -> None:
    code = "import sys, refinelab, refinelab.cli; print('rich' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def _problems(tmp_path: Path, references: bool) -> Path:
    rows = []
    for i in range(3):
        row = {"id": f"p{i}", "kind": "function", "prompt": f"def f(x):\n    '''x + {i}'''\n", "entry_point": "f",
               "hidden_tests": [{"call": "f(1)", "expected": 1 + i}]}  # fmt: skip
        if references and i < 2:
            row["reference"] = f"def f(x):\n    return x + {i}\n"
        rows.append(row)
    path = tmp_path / "problems.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    ("references", "summary"),
    [
        (False, "empty stubs fail on 3 of 3 problems; no reference solutions to check; 0 discrepancies"),
        (True, "empty stubs fail on 3 of 3 problems; reference solutions pass on 2 of 2 (1 problem has none); "
               "0 discrepancies"),
    ],
)  # fmt: skip
def test_the_self_test_says_what_it_checked(
    tmp_path: Path, references: bool, summary: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--self-test", "--benchmark", "jsonl", "--data", str(_problems(tmp_path, references))]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == summary


def _samples(tmp_path: Path, field: str, codes: list[str]) -> Path:
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps({"task_id": f"HumanEval/{i}", field: c}) + "\n" for i, c in enumerate(codes)))
    return path


BODY = "    return None\n"  # a function body, as HumanEval completions are
FENCED = "```python\ndef f(x):\n    return x\n```"  # raw model output, code fence and all


@pytest.mark.parametrize(
    ("field", "codes", "hint"),
    [
        ("solution", [BODY] * 3,
         "3 of 3 programs do not parse: `solution` is a whole program; `completion` is appended to the prompt. "
         "3 of them parse when read as `completion`: rename the field to `completion`"),
        ("completion", [FENCED] * 3,
         "3 of 3 programs do not parse: 3 of them hold markdown code fences (```); a sample is the code alone"),
        ("solution", [BODY, FENCED, "def f(x):\n    return x\n"],
         "2 of 3 programs do not parse: `solution` is a whole program; `completion` is appended to the prompt; "
         "check which one the file holds"),
        ("completion", [BODY, FENCED, BODY], None),
        ("completion", [FENCED, FENCED, BODY, BODY], None),  # half of them parse: no hint
        ("completion", [BODY, BODY, FENCED, FENCED, FENCED],
         "3 of 5 programs do not parse: 3 of them hold markdown code fences (```); a sample is the code alone"),
        ("solution", [FENCED, FENCED, BODY],
         "3 of 3 programs do not parse: 2 of them hold markdown code fences (```); a sample is the code alone"),
    ],
)  # fmt: skip
def test_a_file_that_mostly_does_not_parse_gets_a_hint(
    tmp_path: Path, field: str, codes: list[str], hint: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(_samples(tmp_path, field, codes)), "--benchmark", "humaneval"]) == 0
    assert capsys.readouterr().err == ("" if hint is None else f"refinelab: hint: {hint}\n")


def test_the_reflexion_file_as_is_gets_the_hint(shared_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = shared_data / "llm-outputs/single-pass/humaneval-gpt-4.jsonl.gz"  # `solution` holds function bodies
    assert main(["check", str(raw), "--benchmark", "humaneval"]) == 0
    out, err = capsys.readouterr()
    assert "pass@1: 0.0122" in out
    assert (
        err.startswith("refinelab: hint: 132 of 164 programs do not parse")
        and "rename the field to `completion`" in err
    )


def test_a_download_counts_bytes() -> None:
    stream, clock = io.StringIO(), Clock()
    show = ProgressDisplay(stream, tty=False, clock=clock)
    show("downloading test5.jsonl", 0, 200_000_000)
    for done in range(0, 200_000_001, 20_000_000):
        clock.now += 1
        show("downloading test5.jsonl", done, 200_000_000)
    lines = stream.getvalue().splitlines()
    # 20 MB a second after a 1 s start, quiet for 2 s, then a line per tenth
    assert lines[0] == "downloading test5.jsonl: 20.0 MB/200.0 MB (10%) · 10.0 MB/s · ETA 18s"
    assert lines[-1] == "downloading test5.jsonl: 200.0 MB/200.0 MB (100%) · 18.2 MB/s · ETA 0s"


def test_a_download_of_unknown_size_shows_what_arrived() -> None:
    stream, clock = io.StringIO(), Clock()
    show = ProgressDisplay(stream, tty=False, clock=clock)
    show("downloading x", 0, 0)
    for _ in range(40):
        clock.now += 1
        show("downloading x", 1500, 0)
    assert stream.getvalue().splitlines()[0] == "downloading x: 1.5 kB · 750 B/s"


def test_a_terminal_download_bar_shows_sizes() -> None:
    stream = io.StringIO()
    with ProgressDisplay(stream, tty=True) as show:
        show("downloading test.jsonl", 0, 3_000_000)
        show("downloading test.jsonl", 3_000_000, 3_000_000)
    assert "downloading test.jsonl" in stream.getvalue() and "3.0/3.0 MB" in stream.getvalue()


def test_a_check_collects_garbage_at_the_batch_pace_and_puts_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paces: list[tuple[int, ...]] = []
    set_threshold = gc.set_threshold

    def recorded(*pace: int) -> None:
        paces.append(pace)
        set_threshold(*pace)

    monkeypatch.setattr(gc, "set_threshold", recorded)
    before = gc.get_threshold()
    assert main(["check", str(_samples(tmp_path, "completion", [BODY])), "--benchmark", "humaneval"]) == 0
    assert paces == [BATCH_THRESHOLDS, before] and gc.get_threshold() == before
