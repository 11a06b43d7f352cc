"""One record per benchmark: loading, downloading, the sandbox's preparation and the time rule all read
:data:`refinelab.problems.BENCHMARKS`, so a benchmark added there is known everywhere."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from refinelab.errors import UserError
from refinelab.experiment import load_spec
from refinelab.problems import (
    BENCHMARKS,
    COMPUTED,
    Benchmark,
    FetchOptions,
    load_benchmark,
    load_jsonl,
    open_benchmark,
    read_benchmark,
    read_humanevalplus,
)
from refinelab.problems._benchmarks import release_for
from refinelab.problems._manifest import APPS, OneRelease
from refinelab.runtime import SandboxRequest, choose_sandbox

PROBLEM = '{"id": "a", "kind": "stdio", "prompt": "x", "hidden_tests": [{"stdin": "", "stdout": ""}]}\n'


def test_the_records_say_what_the_name_lists_used_to() -> None:
    assert COMPUTED == ("humaneval-plus", "mbpp-plus")
    assert [name for name, b in BENCHMARKS.items() if b.needs_data] == ["jsonl"]
    assert {name: b.override for name, b in BENCHMARKS.items() if b.override} == {
        "humaneval-plus": "HUMANEVAL_OVERRIDE_PATH",
        "mbpp-plus": "MBPP_OVERRIDE_PATH",
    }
    assert {name: b.cpu_seconds for name, b in BENCHMARKS.items() if b.cpu_seconds != 4.0} == {"livecodebench": 6.0}
    assert [name for name, b in BENCHMARKS.items() if b.follows_reference] == ["humaneval-plus", "mbpp-plus"]
    assert all((b.read is None) == b.computed for b in BENCHMARKS.values())


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A benchmark registered as one record (read as refinelab's JSON Lines, 7 s per test, its own variable
    naming its file, a pinned download), and a file of it."""
    record = Benchmark(
        "tiny", "a test's file", read=load_jsonl, releases=OneRelease("v1", APPS), override="TINY_PATH", cpu_seconds=7.0
    )
    monkeypatch.setitem(BENCHMARKS, "tiny", record)
    data = tmp_path / "tiny.jsonl"
    data.write_text(PROBLEM)
    return data


def test_a_benchmark_added_as_one_record_is_known_everywhere(tiny: Path, tmp_path: Path) -> None:
    assert [p.id for p in asyncio.run(load_benchmark("tiny", tiny))] == ["a"]
    files = open_benchmark("tiny", options=FetchOptions(tmp_path, {"TINY_PATH": str(tiny)}))
    assert files.provenance.source == "file ($TINY_PATH)" and len(read_benchmark(files)) == 1
    assert release_for("tiny", None).files == (APPS,)
    with pytest.raises(UserError, match="tiny: unknown release 'v2'; refinelab pins only v1"):
        release_for("tiny", "v2")
    assert choose_sandbox(["tiny"], SandboxRequest()).timeout == 7.0
    spec = tmp_path / "spec.toml"
    spec.write_text(f'strategies = ["single-pass"]\nactors = ["m"]\n[[benchmarks]]\nname = "tiny"\ndata = "{tiny}"\n')
    assert load_spec(spec).sandbox.timeout == 7.0


def test_a_benchmark_whose_outputs_are_computed_is_read_only_through_the_sandbox(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(BENCHMARKS, "tiny-plus", Benchmark("tiny-plus", "a test's file", tasks=read_humanevalplus))
    data = tmp_path / "tiny.jsonl"
    data.write_text(PROBLEM)
    assert BENCHMARKS["tiny-plus"].computed and BENCHMARKS["tiny-plus"].needs_data
    with pytest.raises(UserError, match="computed in a sandbox"):
        read_benchmark(open_benchmark("tiny-plus", data))
