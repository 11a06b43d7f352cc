"""Without a timeout, tests get the CPU time the benchmark's own grader allows: LiveCodeBench's 6 s,
evalplus's rule for HumanEval+ and MBPP+, 4 s elsewhere; a timeout the user gives always wins. A run from
flags and one from a spec file choose alike (one function: ``refinelab.runtime.choose_sandbox``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from refinelab.cli import _run as run_cli
from refinelab.cli import build_parser, main
from refinelab.experiment import ExperimentSpec, load_spec
from refinelab.problems import BENCHMARKS
from refinelab.runtime import Settings
from refinelab.store import Store
from refinelab.testing import serve
from tests.experiment.fakes import reply

SPEC = """\
actors = ["vllm:big"]
strategies = ["single-pass"]
{benchmarks}
{sandbox}
"""


def spec_timeout(tmp_path: Path, names: list[str], sandbox: str = "") -> float:
    tables = "".join(f'[[benchmarks]]\nname = "{name}"\ndata = "x.jsonl"\n' for name in names)
    path = tmp_path / "spec.toml"
    path.write_text(SPEC.format(benchmarks=tables, sandbox=sandbox), encoding="utf-8")
    return load_spec(path).sandbox.timeout


def test_each_benchmark_has_its_graders_time() -> None:
    assert BENCHMARKS["livecodebench"].cpu_seconds == 6.0
    assert {b.cpu_seconds for name, b in BENCHMARKS.items() if name != "livecodebench"} == {4.0}


def test_a_spec_without_a_timeout_takes_its_benchmarks_longest(tmp_path: Path) -> None:
    assert spec_timeout(tmp_path, ["livecodebench"]) == 6.0
    assert spec_timeout(tmp_path, ["jsonl"]) == 4.0
    assert spec_timeout(tmp_path, ["jsonl", "livecodebench"]) == 6.0
    assert spec_timeout(tmp_path, ["livecodebench"], "[sandbox]\ntimeout = 2.5") == 2.5


@pytest.mark.parametrize(("options", "seconds"), [([], "6"), (["--timeout", "3"], "3")])
def test_check_uses_livecodebench_graders_time_unless_told(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], seconds: str
) -> None:
    source = shared_data / "benchmarks" / "livecodebench-v5-public-tests.jsonl.gz"
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        record = next(json.loads(line) for line in handle if json.loads(line)["question_id"] == "abc357_a")
    data = tmp_path / "one.jsonl"  # one real problem, read from the shared file into this test's folder
    data.write_text(json.dumps(record) + "\n", encoding="utf-8")
    args = ["check", "--self-test", "--benchmark", "livecodebench", "--data", str(data), "--workers", "1"]
    assert main([*args, *options]) == 0
    assert f", {seconds} CPU s per test)" in capsys.readouterr().out


def test_check_on_other_benchmarks_keeps_4_seconds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    problem = {"id": "echo", "kind": "stdio", "prompt": "Echo.", "hidden_tests": [{"stdin": "a\n", "stdout": "a\n"}]}
    data = tmp_path / "problems.jsonl"
    data.write_text(json.dumps(problem) + "\n", encoding="utf-8")
    assert main(["check", "--self-test", "--benchmark", "jsonl", "--data", str(data), "--workers", "1"]) == 0
    assert ", 4 CPU s per test)" in capsys.readouterr().out


SAME_RUN = """\
name = "{benchmark}"
actors = ["fake"]
strategies = ["single-pass"]

[[benchmarks]]
name = "{benchmark}"
data = "{data}"
"""


def one_problem(shared_data: Path, tmp_path: Path, benchmark: str) -> Path:
    """One real problem of the benchmark's shared file, in this test's folder."""
    source = {
        "livecodebench": "livecodebench-v5-public-tests.jsonl.gz",
        "humaneval-plus": "humanevalplus-mini-v0.1.10.jsonl.gz",
    }[benchmark]
    with gzip.open(shared_data / "benchmarks" / source, "rt", encoding="utf-8") as handle:
        line = next(handle) if benchmark == "humaneval-plus" else next(row for row in handle if "abc357_a" in row)
    data = tmp_path / f"{benchmark}.jsonl"
    data.write_text(line if line.endswith("\n") else line + "\n", encoding="utf-8")
    return data


@pytest.mark.parametrize(
    ("benchmark", "cpu_seconds", "factor"), [("livecodebench", 6.0, None), ("humaneval-plus", 4.0, 4.0)]
)
def test_a_run_from_flags_and_one_from_a_spec_file_record_the_graders_limits_and_one_id(
    shared_data: Path, tmp_path: Path, benchmark: str, cpu_seconds: float, factor: float | None
) -> None:
    """The same run started from flags, then from a spec file saying the same: one run (the second
    resumes the first), recorded with the benchmark's grader's time rule."""
    data, store = one_problem(shared_data, tmp_path, benchmark), tmp_path / "s.sqlite"
    spec = tmp_path / "spec.toml"
    spec.write_text(SAME_RUN.format(benchmark=benchmark, data=data), encoding="utf-8")
    with serve(reply) as server:
        common = ["--base-url", server.base_url, "--store", str(store), "--quiet"]
        flags = ["run", "--benchmark", benchmark, "--data", str(data), "--strategy", "single-pass", "--model", "fake"]
        assert main([*flags, *common], {}) == 0
        asked = len(server.log)
        assert main(["run", str(spec), *common], {}) == 0
        assert len(server.log) == asked  # the same run: resumed, nothing asked again
    with Store(store) as opened:
        (stored,) = opened.runs()
    limits = stored.header.limits
    assert (limits["cpu_seconds"], limits["reference_factor"]) == (cpu_seconds, factor)
    spec_sandbox = ExperimentSpec.from_json(stored.spec).sandbox
    assert spec_sandbox.timeout == cpu_seconds and spec_sandbox.follow_reference is (factor is not None)


@pytest.mark.parametrize("benchmark", ["livecodebench", "humaneval-plus", "humaneval"])
def test_flags_and_a_spec_file_resolve_the_sandbox_alike(tmp_path: Path, benchmark: str) -> None:
    """Without running anything: the same choice and the same id, with and without --timeout (which
    replaces the graders' rule, evalplus's included, from either path)."""
    data = tmp_path / "x.jsonl"
    spec = tmp_path / "spec.toml"
    spec.write_text(SAME_RUN.format(benchmark=benchmark, data=data), encoding="utf-8")
    parser = build_parser({})
    flags = ["run", "--benchmark", benchmark, "--data", str(data), "--strategy", "single-pass", "--model", "fake"]
    for extra in ([], ["--timeout", "2.5"]):
        from_flags = run_cli._spec(parser.parse_args([*flags, *extra]), Settings())
        from_file = run_cli._spec(parser.parse_args(["run", str(spec), *extra]), Settings())
        assert from_flags.sandbox == from_file.sandbox and from_flags.run_id == from_file.run_id
    timed = run_cli._spec(parser.parse_args(["run", str(spec), "--timeout", "2.5"]), Settings()).sandbox
    assert timed.timeout == 2.5 and not timed.follow_reference


@pytest.mark.parametrize(
    ("benchmark", "seconds", "follows"), [("livecodebench", 6.0, False), ("humaneval-plus", 4.0, True)]
)
def test_a_spec_built_by_hand_takes_its_benchmarks_rule_as_the_other_paths_do(
    tmp_path: Path, benchmark: str, seconds: float, follows: bool
) -> None:
    from refinelab.experiment import BenchmarkChoice
    from refinelab.runtime import SandboxChoice
    from refinelab.strategies import StrategySpec

    by_hand = ExperimentSpec((BenchmarkChoice(benchmark, "x.jsonl"),), (StrategySpec("single-pass"),), ("fake",))
    assert (by_hand.sandbox.timeout, by_hand.sandbox.follow_reference) == (seconds, follows)
    flags = ["run", "--benchmark", benchmark, "--data", "x.jsonl", "--strategy", "single-pass", "--model", "fake"]
    assert by_hand.sandbox == run_cli._spec(build_parser({}).parse_args(flags), Settings()).sandbox
    given = SandboxChoice(timeout=2.0)  # a choice given is kept as it is, the defaults' values included
    assert ExperimentSpec(by_hand.benchmarks, by_hand.strategies, by_hand.actors, sandbox=given).sandbox is given
    assert ExperimentSpec.from_json({"benchmarks": [{"name": benchmark}]}).sandbox == SandboxChoice()  # old stores
