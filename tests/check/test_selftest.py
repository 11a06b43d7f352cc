"""The self-test flags what it cannot check: a problem without tests is a discrepancy, not a pass."""

from __future__ import annotations

from pathlib import Path

from refinelab.check import self_test
from refinelab.problems import Problem, StdioTest, load_livecodebench
from tests.conftest import with_pool

ECHO = StdioTest("hi\n", "hi\n")


def problem(name: str, tests: tuple[StdioTest, ...], reference: str | None) -> Problem:
    return Problem(name, "Echo the line.", "stdio", tests, tests, reference=reference)


def test_a_problem_without_tests_is_a_discrepancy_whether_or_not_it_has_a_reference() -> None:
    problems = [
        problem("silent", (), None),
        problem("silent-with-reference", (), "print(input())\n"),
        problem("echo", (ECHO,), "print(input())\n"),
    ]
    report = with_pool(lambda pool: self_test(problems, pool), workers=1)
    assert sorted((d.problem_id, d.which) for d in report.discrepancies) == [
        ("silent", "stub"),
        ("silent-with-reference", "reference"),
        ("silent-with-reference", "stub"),
    ]
    assert all("no hidden tests" in d.detail for d in report.discrepancies)


def test_livecodebench_abc350_c_without_public_tests_is_flagged(shared_data: Path) -> None:
    """abc350_c's public tests are empty in the shared LiveCodeBench file; the self-test must say so."""
    source = shared_data / "benchmarks" / "livecodebench-v5-public-tests.jsonl.gz"
    problems = sorted((p for p in load_livecodebench(source) if p.id in ("abc350_c", "abc357_a")), key=lambda p: p.id)
    assert [len(p.hidden_tests) for p in problems] == [0, 3]
    report = with_pool(lambda pool: self_test(problems, pool), workers=1)
    assert [(d.problem_id, d.which) for d in report.discrepancies] == [("abc350_c", "stub")]
    assert "no hidden tests" in report.discrepancies[0].detail
