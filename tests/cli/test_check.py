"""``refinelab check`` end to end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from refinelab.cli import main
from tests.sandbox.isolations import choose, reachable_tmp

PROBLEMS = [
    {
        "id": "sq",
        "kind": "function",
        "prompt": "def sq(x):\n",
        "entry_point": "sq",
        "reference": "def sq(x):\n    return x * x\n",
        "hidden_tests": [{"call": "sq(2)", "expected": 4}, {"call": "sq(3)", "expected": 9}],
    },
    {
        "id": "echo",
        "kind": "stdio",
        "prompt": "Echo the line.",
        "reference": "print(input())\n",
        "hidden_tests": [{"stdin": "hi\n", "stdout": "hi\n"}],
    },
]


@pytest.fixture
def problems(tmp_path: Path) -> Path:
    path = tmp_path / "problems.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in PROBLEMS))
    return path


def samples(tmp_path: Path, rows: Sequence[Mapping[str, object]]) -> Path:
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_scores_samples_and_writes_per_test_outcomes(
    tmp_path: Path, problems: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"task_id": "sq", "solution": "def sq(x):\n    return x * x\n"},
        {"task_id": "sq", "solution": "def sq(x):\n    return x + x\n"},
        {"task_id": "echo", "solution": "print(input())\n"},
        {"task_id": "echo", "solution": "print('no')\n"},
    ]
    out = tmp_path / "out.jsonl"
    code = main(
        ["check", str(samples(tmp_path, rows)), "--benchmark", "jsonl", "--data", str(problems), "--out", str(out)]
    )
    assert code == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["passed"] for line in lines] == [True, False, True, False]
    assert [o["verdict"] for o in lines[1]["outcomes"]] == ["pass", "fail"]
    assert lines[1]["outcomes"][1]["expected"] == "9"
    assert {(line["isolation"] in ("bwrap-uid", "bwrap"), line["node"]) for line in lines} == {(True, None)}
    printed = capsys.readouterr().out
    assert "pass@1: 0.5000" in printed
    assert "isolation:" in printed


def test_an_out_file_that_cannot_be_written_is_a_one_line_user_error(
    tmp_path: Path, problems: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"task_id": "sq", "solution": "def sq(x):\n    return x * x\n"}]
    out = tmp_path / "missing" / "out.jsonl"
    code = main(
        ["check", str(samples(tmp_path, rows)), "--benchmark", "jsonl", "--data", str(problems), "--out", str(out)]
    )
    assert code == 2
    assert capsys.readouterr().err.strip() == f"refinelab: error: {out}: cannot write: No such file or directory"


def test_self_test_passes_references_and_fails_stubs(problems: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--self-test", "--benchmark", "jsonl", "--data", str(problems)]) == 0
    assert "0 discrepancies" in capsys.readouterr().out


def test_self_test_lists_discrepancies_and_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = dict(PROBLEMS[0], reference="def sq(x):\n    return 0\n")
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(broken) + "\n")
    assert main(["check", "--self-test", "--benchmark", "jsonl", "--data", str(path)]) == 1
    out = capsys.readouterr().out
    assert "sq: reference: test 0: fail" in out
    assert (
        out.splitlines()[-1] == "empty stubs fail on 1 of 1 problem; reference solutions pass on 0 of 1; 1 discrepancy"
    )


def test_self_test_runs_references_on_their_visible_tests_and_counts_problems_without(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = dict(PROBLEMS[0], visible_tests=[{"call": "sq(2)", "expected": 4}, {"call": "sq(3)", "expected": 10}])
    path = tmp_path / "wrong-visible.jsonl"
    path.write_text(json.dumps(wrong) + "\n" + json.dumps(PROBLEMS[1]) + "\n")
    assert main(["check", "--self-test", "--benchmark", "jsonl", "--data", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "  sq: visible: the reference fails a visible test: test 1: fail: sq(3): expected 10, got 9" in out
    assert "visible tests: 1 of 2 problems have some; 1 has none" in out
    assert out[-1].endswith("reference solutions pass on 2 of 2, and their visible tests on 0 of 1; 1 discrepancy")


def test_unknown_task_is_a_one_line_user_error(
    tmp_path: Path, problems: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = samples(tmp_path, [{"task_id": "sq", "completion": "x"}, {"task_id": "nope", "completion": "x"}])
    out = tmp_path / "out.jsonl"
    code = main(["check", str(path), "--benchmark", "jsonl", "--data", str(problems), "--out", str(out)])
    assert code == 2
    error = capsys.readouterr().err.strip()
    assert error == f"refinelab: error: {path}:2: field 'task_id': unknown task 'nope' for this benchmark"
    assert not out.exists()  # nothing half-written


def test_sample_without_code(tmp_path: Path, problems: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = samples(tmp_path, [{"task_id": "sq"}])
    assert main(["check", str(path), "--benchmark", "jsonl", "--data", str(problems)]) == 2
    assert "field 'completion': missing" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("row", "said"),
    [
        (
            {"task_id": "sq", "completion": ["    return x * x\n"]},
            "field 'completion': must be a string (the program's text), not a list",
        ),
        ({"task_id": "sq", "solution": None}, "field 'solution': must be a string (the program's text), not null"),
        (
            {"task_id": "sq", "completion": {"code": "x"}},
            "field 'completion': must be a string (the program's text), not an object",
        ),
    ],
)
def test_a_completion_of_the_wrong_type_is_named_as_such(
    tmp_path: Path, problems: Path, capsys: pytest.CaptureFixture[str], row: dict[str, object], said: str
) -> None:
    path = samples(tmp_path, [row])
    assert main(["check", str(path), "--benchmark", "jsonl", "--data", str(problems)]) == 2
    assert capsys.readouterr().err.strip() == f"refinelab: error: {path}:1: {said}"


def test_file_benchmarks_need_data(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--self-test", "--benchmark", "jsonl"]) == 2
    assert "needs --data FILE" in capsys.readouterr().err


def test_mbpp_ids_are_accepted_as_evalplus_writes_them(shared_data: Path, tmp_path: Path) -> None:
    data = shared_data / "benchmarks/mbpp.jsonl.gz"
    rows: list[dict[str, object]] = [
        {"task_id": "Mbpp/2", "solution": "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n"},
        {"task_id": 2, "solution": "def similar_elements(a, b):\n    return ()\n"},
    ]
    out = tmp_path / "o.jsonl"
    assert (
        main(["check", str(samples(tmp_path, rows)), "--benchmark", "mbpp", "--data", str(data), "--out", str(out)])
        == 0
    )
    assert [json.loads(line)["passed"] for line in out.read_text().splitlines()] == [True, False]


def test_console_script_exits_2_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n")
    done = subprocess.run(
        [sys.executable, "-m", "refinelab", "check", "--self-test", "--benchmark", "jsonl", "--data", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert done.stderr.startswith(f"refinelab: error: {bad}:1: malformed JSON")


def test_an_empty_samples_file_is_a_user_error(
    tmp_path: Path, problems: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n")
    assert main(["check", str(path), "--benchmark", "jsonl", "--data", str(problems)]) == 2
    assert (
        capsys.readouterr().err
        == f"refinelab: error: {path}: no samples: expected JSON lines with task_id and completion or solution\n"
    )


@pytest.mark.parametrize("name", ["jsonl", "humaneval-plus"])
def test_an_empty_benchmark_file_is_a_user_error_and_writes_nothing(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    cache = tmp_path / "cache"
    assert main(["check", "--self-test", "--benchmark", name, "--data", str(empty), "--cache-dir", str(cache)]) == 2
    assert capsys.readouterr().err == f"refinelab: error: {empty}: no {name} problems in the file\n"
    assert not cache.exists()  # no cache of outputs for no problems


def test_only_the_verdict_by_default_and_every_test_with_test_details(
    tmp_path: Path, problems: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A program that raises on its first test is not run on the rest unless --test-details asks; each
    --out line says under which rule its tests ran."""
    rows = [
        {"task_id": "sq", "solution": "def sq(x):\n    if x == 2:\n        raise ValueError(x)\n    return x * x\n"}
    ]
    out = tmp_path / "out.jsonl"
    args = ["check", str(samples(tmp_path, rows)), "--benchmark", "jsonl", "--data", str(problems), "--out", str(out)]
    assert main(args) == 0
    (line,) = map(json.loads, out.read_text().splitlines())
    assert [o["verdict"] for o in line["outcomes"]] == ["error", "skipped"]
    assert line["stop_at_failure"] is True and line["time_limit"] == "4 CPU s per test"
    assert "--test-details runs every one" in capsys.readouterr().out
    assert main([*args, "--test-details"]) == 0
    (line,) = map(json.loads, out.read_text().splitlines())
    assert [o["verdict"] for o in line["outcomes"]] == ["error", "pass"] and line["stop_at_failure"] is False


def test_the_summary_says_which_tests_were_skipped_and_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A program that raises stops at once; one that answers wrong runs the rest of its stage (expected
    values are judged outside the sandbox), and only the later stages are skipped."""
    tests = [{"call": f"sq({i})", "expected": i * i} for i in range(10)]  # a first stage of 8, then 2
    data = tmp_path / "ten.jsonl"
    data.write_text(
        json.dumps({"id": "sq", "kind": "function", "entry_point": "sq", "prompt": "Square.", "hidden_tests": tests})
        + "\n"
    )
    rows = [
        {"task_id": "sq", "solution": "def sq(x):\n    return x * x + (x == 1)\n"},  # wrong on the second test
        {"task_id": "sq", "solution": "def sq(x):\n    if x == 3:\n        raise ValueError(x)\n    return x * x\n"},
    ]
    out = tmp_path / "out.jsonl"
    assert (
        main(["check", str(samples(tmp_path, rows)), "--benchmark", "jsonl", "--data", str(data), "--out", str(out)])
        == 0
    )
    wrong, raising = (json.loads(line)["outcomes"] for line in out.read_text().splitlines())
    assert [o["verdict"] for o in wrong] == ["pass", "fail", *["pass"] * 6, "skipped", "skipped"]
    assert [o["verdict"] for o in raising] == ["pass"] * 3 + ["error"] + ["skipped"] * 6
    printed = capsys.readouterr().out
    assert "test outcomes: error 1, fail 1, pass 10, skipped 8" in printed
    assert (
        "  skipped: 6 after an error, timeout or crash (the program's later tests); 2 after a wrong answer" in printed
    )
    assert "tests run in stages of 8, 64, 512..." in printed  # as README.md shows it
    assert "--test-details runs every one" in printed


def test_sigterm_ends_a_check_as_ctrl_c_does_leaving_no_scratch_directory(tmp_path: Path, problems: Path) -> None:
    # `timeout`, `docker stop` and a cancelled CI job send SIGTERM: it used to end Python on the spot,
    # leaving the landlock pool's directory (its canary, the workers' scratch) in $TMPDIR.
    rows = [{"task_id": "sq", "solution": "def sq(x):\n    while True:\n        pass\n"}]
    command = [sys.executable, "-m", "refinelab", "check", str(samples(tmp_path, rows)), "--benchmark", "jsonl",
               "--data", str(problems), "--isolation", choose("landlock"), "--timeout", "600", "--workers", "1"]  # fmt: skip
    with reachable_tmp() as scratch:
        _terminated_leaving_nothing(command, scratch)


def _terminated_leaving_nothing(command: list[str], scratch: Path) -> None:
    """``command`` run with ``scratch`` as its TMPDIR, sent SIGTERM once its program runs: it exits 143 with
    one line, and ``scratch`` is left empty."""
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(scratch)})
    deadline = time.monotonic() + 120
    while not _running(scratch) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, f"the check ended before its program ran: {process.communicate()[1]}"
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 143, err
    assert err.endswith("refinelab: terminated (SIGTERM)\n") and "Traceback" not in err
    assert list(scratch.iterdir()) == []


def _running(scratch: Path) -> bool:
    """The candidate's job has a working directory: the workers are up and running it."""
    return any(path.name.startswith("job") for path in scratch.glob("refinelab-*/worker*/*"))
