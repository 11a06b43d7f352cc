"""``run``'s sandbox path: concurrent units' programs go to the pool together, each distinct program is
scored once per run, and the limits follow the spec's ``[sandbox]`` table."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from refinelab.experiment._batching import Batching, HiddenScoring, RunLimits
from refinelab.experiment._spec import load_spec
from refinelab.problems import CallTest, Problem
from refinelab.records import Usage
from refinelab.runtime import SandboxChoice
from refinelab.sandbox import FakeSandbox, Item, Limits, RunResult, Suite
from refinelab.strategies import Attempt, Trajectory

SUITE = Suite.of([CallTest("f(1)", 1)], entry_point="f")


class Recording(FakeSandbox):
    """The fake sandbox, recording each ``run_items`` call's size; the first call waits for ``release``."""

    def __init__(self) -> None:
        super().__init__()
        self.size = 1
        self.calls: list[tuple[int, Limits | None]] = []
        self.release = asyncio.Event()

    async def run_items(
        self, items: Sequence[Item], *, limits: Limits | None = None, isolate: bool = False
    ) -> list[RunResult]:
        self.calls.append((len(items), limits))
        if len(self.calls) == 1:
            await self.release.wait()
        return await super().run_items(items, limits=limits, isolate=isolate)


def program(i: int) -> str:
    return f"def f(x):\n    return x + {i}\n"


def test_programs_asked_for_while_the_pool_is_busy_go_together_in_order() -> None:
    async def body() -> tuple[list[RunResult], list[tuple[int, Limits | None]]]:
        pool = Recording()
        sandbox = Batching(pool)
        first = asyncio.ensure_future(sandbox.run(program(0), SUITE))
        while not pool.calls:  # the first call holds the only slot (an event, not a wait of some ms)
            await asyncio.sleep(0)
        later = [asyncio.ensure_future(sandbox.run(program(i), SUITE)) for i in range(1, 10)]
        while len(sandbox._pending) < 9:  # every later call is waiting for the slot
            await asyncio.sleep(0)
        pool.release.set()
        results = [await first, *[await task for task in later]]
        await sandbox.aclose()
        return results, pool.calls

    results, calls = asyncio.run(body())
    assert [r.passed for r in results] == [True] + [False] * 9  # each caller gets its own program's result
    assert [size for size, _ in calls] == [1, 9]


def test_requests_under_different_limits_are_sent_apart() -> None:
    async def body() -> list[tuple[int, Limits | None]]:
        pool = Recording()
        pool.release.set()
        sandbox = Batching(pool)
        short = Limits(cpu_seconds=0.1)
        await asyncio.gather(
            sandbox.run(program(0), SUITE), sandbox.run(program(1), SUITE, limits=short), sandbox.run(program(2), SUITE)
        )
        await sandbox.aclose()
        return pool.calls

    calls = asyncio.run(body())
    assert sorted((size, limits.cpu_seconds) for size, limits in calls if limits is not None) == [(1, 0.1), (2, 4.0)]


def test_a_program_is_scored_on_hidden_tests_once_per_run() -> None:
    problem = Problem("p", "f", "function", (), (CallTest("f(1)", 1), CallTest("f(2)", 2)), entry_point="f")
    right, wrong = program(0), program(1)

    def trajectory(*codes: str) -> Trajectory:
        attempts = tuple(Attempt(i, "sample", code, "", Usage(), 0.0) for i, code in enumerate(codes))
        return Trajectory("p", "sampling", {}, attempts, 0, "sampled")

    async def body() -> tuple[list[RunResult | None], list[RunResult | None], int]:
        pool = FakeSandbox()
        scoring = HiddenScoring(pool, Limits(stop_at_failure=True))
        first = await scoring.score(trajectory(right, wrong, right), problem)
        second = await scoring.score(trajectory(wrong, right), problem)
        return first, second, len(pool.runs)

    first, second, runs = asyncio.run(body())
    assert [r.passed if r else None for r in first] == [True, False, True]
    assert second == [first[1], first[0]] and runs == 2


def test_run_limits_follow_the_sandbox_table(tmp_path: Path) -> None:
    limits = RunLimits.of(SandboxChoice(timeout=4.0, follow_reference=True))
    assert limits.pool.reference_factor == 4.0 and not limits.pool.stop_at_failure  # visible runs: every outcome
    assert limits.hidden.stop_at_failure and limits.hidden.reference_factor == 4.0
    assert limits.agreement.cpu_seconds == 0.1 and limits.agreement.after_timeout == "continue"
    detailed = RunLimits.of(SandboxChoice(timeout=2.0, test_details=True, agreement_timeout=0.5))
    assert not detailed.hidden.stop_at_failure and detailed.hidden.reference_factor is None
    assert detailed.agreement.cpu_seconds == 0.5


SPEC = """name = "x"
actors = ["fake"]
strategies = [{strategy}]
[[benchmarks]]
name = "{benchmark}"
data = "plus.jsonl"
{sandbox}
"""


def spec(
    tmp_path: Path, benchmark: str = "humaneval-plus", sandbox: str = "", strategy: str = '"single-pass"'
) -> object:
    path = tmp_path / "spec.toml"
    path.write_text(SPEC.format(benchmark=benchmark, sandbox=sandbox, strategy=strategy))
    return load_spec(path)


def test_a_spec_without_a_timeout_follows_humanevalplus_references(tmp_path: Path) -> None:
    assert spec(tmp_path).sandbox.follow_reference  # type: ignore[attr-defined]
    assert not spec(tmp_path, sandbox="[sandbox]\ntimeout = 3").sandbox.follow_reference  # type: ignore[attr-defined]
    assert not spec(tmp_path, benchmark="jsonl").sandbox.follow_reference  # type: ignore[attr-defined]
    chosen = spec(tmp_path, sandbox="[sandbox]\ntest_details = true\nagreement_timeout = 0.5").sandbox  # type: ignore[attr-defined]
    assert chosen.test_details and chosen.agreement_timeout == 0.5


def test_the_agreement_time_is_part_of_the_run_only_where_agreement_chooses(tmp_path: Path) -> None:
    slow = "[sandbox]\nagreement_timeout = 0.5"
    single = [spec(tmp_path, benchmark="jsonl", sandbox=s).run_id for s in ("", slow)]  # type: ignore[attr-defined]
    codet = [spec(tmp_path, "jsonl", s, '"codet(n=2, m=1)"').run_id for s in ("", slow)]  # type: ignore[attr-defined]
    assert single[0] == single[1] and codet[0] != codet[1]
