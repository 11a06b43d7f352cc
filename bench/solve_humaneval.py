"""``solve`` on HumanEval prompts against a local server that answers with programs real models wrote.

The server replays ChatGPT's Reflexion trajectories (shared data): the first implementation for a first
request, the next one for each refinement request, and the first implementation again for anything else
(test-writing requests get a program, as a server that only writes programs would). For each task it
prints nothing; at the end:

- exit-code agreement: ``verified`` against whether the returned code passes the given tests (the
  docstring examples solve read; and, separately, LLMDebugger's corrected given tests);
- hidden-test pass rate of what solve returns against that of the server's first answers.

    python bench/solve_humaneval.py [--limit 40] [--strategy verified]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from refinelab.problems import Problem, load_humaneval, tests_from_statements
from refinelab.sandbox import Suite, WorkerPool
from refinelab.solve import Solution, SolveOptions, solve_async
from refinelab.testing import serve

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TRAJECTORIES = DATA / "llm-outputs" / "refinement-trajectories" / "humaneval-chatgpt-reflexion-10.jsonl.gz"
GIVEN = DATA / "benchmarks" / "humaneval-visible-tests.jsonl.gz"


def _records(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt") as handle:
        for line in handle:
            yield json.loads(line)


class Replay:
    """The server's answers: per task, the Reflexion implementations in order."""

    def __init__(self, implementations: dict[str, list[str]]) -> None:
        self.implementations = implementations
        self.refinements: dict[str, int] = {}
        self.lock = threading.Lock()

    def reply(self, body: dict[str, object]) -> str:
        messages = body["messages"]
        assert isinstance(messages, list)
        text = "\n".join(str(m["content"]) for m in messages)
        entry = next((e for e in self.implementations if f"def {e}(" in text), None)
        if entry is None:
            return "I cannot help with that."
        programs = self.implementations[entry]
        if "Test results" in text or "failing tests" in text.lower():
            with self.lock:
                self.refinements[entry] = self.refinements.get(entry, 0) + 1
                index = min(self.refinements[entry], len(programs) - 1)
            return f"```python\n{programs[index]}\n```"
        return f"```python\n{programs[0]}\n```"


def as_program(problem: Problem, code: str) -> str:
    """The server's answer as a program, scored as fairly as solve's: a bare body goes under the prompt,
    a whole function gets the prompt's imports."""
    if f"def {problem.entry_point}" not in code:
        return problem.prompt + code
    imports = [line for line in problem.prompt.splitlines() if line.startswith(("import ", "from "))]
    return "\n".join([*imports, code])


async def passes(pool: WorkerPool, code: str | None, problem: Problem) -> bool:
    if code is None:
        return False
    suite = Suite.of(problem.hidden_tests, entry_point=problem.entry_point, setup=problem.test_setup)
    return (await pool.run(code, suite)).passed


async def passes_given(pool: WorkerPool, code: str | None, asserts: list[str], problem: Problem) -> bool:
    tests = tests_from_statements("\n".join(asserts)) or []
    if code is None or not tests:
        return False
    return (await pool.run(code, Suite.of(tests, entry_point=problem.entry_point))).passed


async def main(limit: int, strategy: str) -> None:
    trajectories = {str(r["entry_point"]): r for r in _records(TRAJECTORIES)}
    given = {str(r["task_id"]): [str(t) for t in r["given_tests"]] for r in _records(GIVEN)}
    problems = [p for p in load_humaneval() if p.entry_point in trajectories][:limit]
    programs = {
        str(p.entry_point): [str(c) for c in trajectories[str(p.entry_point)]["implementations"]] for p in problems
    }
    replay = Replay(programs)
    counts = dict.fromkeys(
        ["tasks", "verified", "agree_docstring", "agree_llmdebugger", "first_hidden", "solve_hidden"], 0
    )
    with tempfile.TemporaryDirectory() as folder, serve(replay.reply) as server:
        options = SolveOptions(strategy=strategy, base_url=server.base_url, store=Path(folder) / "s.sqlite", environ={})
        async with WorkerPool(workers=2) as pool:
            for problem in problems:
                solution: Solution = await solve_async(problem.prompt, "replay", options=options)
                first = programs[str(problem.entry_point)][0]
                passed_given = all(c.passed for c in solution.evidence.deciding) and bool(solution.evidence.deciding)
                counts["tasks"] += 1
                counts["verified"] += solution.verified
                counts["agree_docstring"] += solution.verified == passed_given
                counts["agree_llmdebugger"] += solution.verified == await passes_given(
                    pool, solution.code, given[problem.id], problem
                )
                counts["first_hidden"] += await passes(pool, as_program(problem, first), problem)
                counts["solve_hidden"] += await passes(pool, solution.code, problem)
    n = counts["tasks"]
    print(f"{n} HumanEval tasks, strategy {strategy}; verified {counts['verified']}")
    print(f"exit code agrees with the docstring tests solve read: {counts['agree_docstring']}/{n}")
    print(f"exit code agrees with LLMDebugger's given tests: {counts['agree_llmdebugger']}/{n}")
    print(f"hidden pass rate: first answers {counts['first_hidden'] / n:.3f}, solve {counts['solve_hidden'] / n:.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--strategy", default="verified")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.limit, arguments.strategy))
