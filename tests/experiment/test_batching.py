"""``run``'s sandbox path: concurrent units' programs go to the pool together, each distinct program is
scored once per run, and the limits follow the spec's ``[sandbox]`` table."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from refinelab.experiment import load_spec
from refinelab.experiment._batching import HiddenScoring, RunLimits
from refinelab.models import ScriptedModel
from refinelab.problems import CallTest, Problem
from refinelab.records import Usage
from refinelab.runtime import SandboxChoice
from refinelab.sandbox import FakeSandbox, Item, Limits, RunResult, Suite
from refinelab.strategies import Attempt, Env, Trajectory, single_pass

SUITE = Suite.of([CallTest("f(1)", 1)], entry_point="f")


def program(i: int) -> str:
    return f"def f(x):\n    return x + {i}\n"


class Gated(FakeSandbox):
    """The fake sandbox, holding every run on the visible tests back until ``release``; ``hidden`` is set
    when a program is run on the hidden tests."""

    def __init__(self, visible: Suite) -> None:
        super().__init__()
        self.visible = visible
        self.release = asyncio.Event()
        self.hidden = asyncio.Event()

    async def run_items(
        self, items: Sequence[Item], *, limits: Limits | None = None, isolate: bool = False
    ) -> list[RunResult]:
        if any(suite.tests == self.visible.tests for _, suite in items):
            await self.release.wait()
        else:
            self.hidden.set()
        return await super().run_items(items, limits=limits, isolate=isolate)


def test_an_attempts_hidden_tests_start_beside_its_visible_tests() -> None:
    """``run`` scores an attempt on the hidden tests as soon as the strategy has its program: the hidden run
    starts while the visible run is still held back (before, it waited for the strategy to end)."""
    problem = Problem("p", "f", "function", (CallTest("f(0)", 0),), (CallTest("f(1)", 1),), entry_point="f")

    async def body() -> tuple[bool, list[RunResult | None]]:
        sandbox = Gated(Suite.visible(problem))
        scoring = HiddenScoring(sandbox, Limits(stop_at_failure=True))
        env = Env(ScriptedModel([f"```python\n{program(0)}```"]), sandbox)
        env.on_attempt = lambda code: scoring.start(code, problem)
        unit = asyncio.ensure_future(single_pass(problem, env))
        await sandbox.hidden.wait()  # never set while the visible run waits, if hidden scoring came after it
        visible_done = unit.done()
        sandbox.release.set()
        trajectory = await unit
        return visible_done, await scoring.score(trajectory, problem)

    visible_done, hidden = asyncio.run(asyncio.wait_for(body(), 60))
    assert not visible_done
    assert [r.passed if r else None for r in hidden] == [True]


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
