"""``solve`` on the research's worked examples, with scripted models and the real sandbox."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from refinelab import solve
from refinelab.errors import UserError
from refinelab.experiment import ExperimentSpec
from refinelab.models import GenerateConfig, Message
from refinelab.runtime import Settings
from refinelab.solve import Solution, SolveOptions, SolveProgress, solve_async
from refinelab.store import Store
from refinelab.testing import FunctionModel, ScriptedModel, serve
from tests.solve.conftest import (
    FIB_DRAFT,
    FIB_FIXED,
    FIB_PROMPT,
    FIB_TESTS,
    SQUARE_DRAFT,
    SQUARE_GUARDED,
    SQUARE_PROMPT,
    SQUARE_TESTS,
    SUM_DRAFT,
    SUM_FIXED,
    SUM_IO,
    SUM_PROMPT,
    fenced,
)


def test_fibonacci_draft_fails_one_and_the_refinement_fixes_it(options: SolveOptions) -> None:
    model = ScriptedModel([fenced(FIB_DRAFT), fenced(FIB_FIXED)])
    solution = solve(FIB_PROMPT, model, tests=FIB_TESTS, options=options)
    assert solution.verified
    assert solution.code is not None and "n == 1" in solution.code
    first, second = solution.trajectory.attempts
    assert first.visible is not None and [o.passed for o in first.visible.outcomes] == [False, True, True]
    assert second.origin == "refine" and second.feedback is not None and "fibonacci(1)" in second.feedback
    assert "fibonacci(1)" in model.requests[1][-1].content  # the failure drove the refinement
    assert [c.passed for c in solution.evidence.tests] == [True, True, True]
    assert solution.evidence.attempts == 2 and solution.evidence.chosen == 1


def test_square_gains_a_guard_after_a_test_passes_none(options: SolveOptions) -> None:
    model = ScriptedModel([fenced(SQUARE_DRAFT), fenced(SQUARE_GUARDED)])
    solution = solve(SQUARE_PROMPT, model, tests=SQUARE_TESTS, options=options)
    assert solution.verified
    assert solution.code is not None and "if x is None" in solution.code
    draft = solution.trajectory.attempts[0]
    assert draft.visible is not None and draft.visible.outcomes[2].verdict == "error"
    assert "TypeError" in (solution.trajectory.attempts[1].feedback or "")


def test_stdio_program_with_io_pairs(options: SolveOptions) -> None:
    model = ScriptedModel([fenced(SUM_DRAFT), fenced(SUM_FIXED)])
    solution = solve(SUM_PROMPT, model, io=SUM_IO, options=options)
    assert solution.kind == "stdio" and solution.verified
    assert (solution.code or "").strip() == SUM_FIXED.strip()
    assert [c.origin for c in solution.evidence.tests] == ["io", "io"]
    assert "Input:\n1 2" in model.requests[0][-1].content  # the pairs are shown to the model


def test_unverified_returns_the_best_attempt_not_the_last(options: SolveOptions) -> None:
    worse = "def fibonacci(n):\n    return []\n"
    model = ScriptedModel([fenced(FIB_DRAFT), fenced(worse)])
    solution = solve(FIB_PROMPT, model, tests=FIB_TESTS, options=replace(options, strategy="exec-refine(max_iters=1)"))
    assert not solution.verified
    assert solution.verdict == "UNVERIFIED: passes 2 of 3 given tests"
    assert solution.evidence.chosen == 0 and (solution.code or "").strip() == FIB_DRAFT.strip()
    assert solution.evidence.stop_reason == "max_iterations"


def test_docstring_examples_are_given_tests(options: SolveOptions) -> None:
    prompt = 'def add(a: int, b: int) -> int:\n    """Add two numbers.\n    >>> add(2, 3)\n    5\n    add(-1, 1) == 0\n    """\n'
    model = ScriptedModel([fenced("def add(a, b):\n    return a - b\n"), fenced("def add(a, b):\n    return a + b\n")])
    solution = solve(prompt, model, options=options)
    assert solution.verified and solution.evidence.attempts == 2
    assert [(c.test, c.origin) for c in solution.evidence.tests] == [
        ("add(2, 3) == 5", "docstring"),
        ("add(-1, 1) == 0", "docstring"),
    ]


def test_solve_is_recorded_and_reportable(options: SolveOptions, tmp_path: Path) -> None:
    model = ScriptedModel([fenced(FIB_DRAFT), fenced(FIB_FIXED)])
    solution = solve(FIB_PROMPT, model, tests=FIB_TESTS, options=options)
    assert solution.evidence.run_id is not None
    with Store(tmp_path / "store.sqlite") as store:
        (listing,) = store.listing()
        assert listing.info.id == solution.evidence.run_id and listing.info.status == "complete"
        assert listing.done == listing.total == 1
        (detail,) = store.trajectory_details(listing.info.id)
        assert [(a.code or "").strip() for a in detail.attempts] == [FIB_DRAFT.strip(), FIB_FIXED.strip()]


def test_settings_handed_over_are_used_as_they_are_and_the_run_records_its_sandbox(tmp_path: Path) -> None:
    """The command line resolves its settings once and hands them over: the solve does not resolve them
    again (the environment's store would win otherwise); its sandbox choice and endpoint are recorded."""
    chosen = Settings(store=tmp_path / "handed.sqlite", environ={"REFINELAB_STORE": str(tmp_path / "env.sqlite")})
    options = SolveOptions(strategy="exec-refine", settings=chosen, timeout=3.0, store=tmp_path / "ignored.sqlite")
    model = ScriptedModel([fenced(FIB_DRAFT), fenced(FIB_FIXED)])
    solution = solve(FIB_PROMPT, model, tests=FIB_TESTS, options=options)
    assert solution.verified and not (tmp_path / "env.sqlite").exists() and not (tmp_path / "ignored.sqlite").exists()
    with Store(tmp_path / "handed.sqlite") as store:
        (run,) = store.runs()
    assert ExperimentSpec.from_json(run.spec).sandbox.timeout == 3.0 and run.header.limits["cpu_seconds"] == 3.0
    assert run.header.endpoints is not None and run.header.endpoints[0].endpoint.role == "actor"


def test_progress_reports_attempts_and_tests(options: SolveOptions) -> None:
    seen: list[SolveProgress] = []
    model = ScriptedModel([fenced(FIB_DRAFT), fenced(FIB_FIXED)])
    solution = solve(FIB_PROMPT, model, tests=FIB_TESTS, options=replace(options, on_progress=seen.append))
    assert seen[-1].phase == "done" and seen[-1].attempt == 2 and seen[-1].passing == 3 and seen[-1].total == 3
    assert any(p.attempt == 1 and p.passing == 2 for p in seen)
    assert seen[-1].tokens == solution.evidence.usage.total_tokens > 0


def test_cancelling_returns_the_best_attempt_so_far(options: SolveOptions) -> None:
    stalled = asyncio.Event()

    async def main() -> Solution:
        def on_progress(progress: SolveProgress) -> None:
            if progress.attempt == 1 and progress.phase == "generating":
                stalled.set()

        never = ScriptedModel([fenced(FIB_DRAFT)], rules=[(lambda m: len(m) > 2, "unused")])
        backend = never._script

        original = backend.complete

        async def slow_second(messages, config, n):  # type: ignore[no-untyped-def]
            if backend.requests:
                await asyncio.sleep(60)
            return await original(messages, config, n)

        backend.complete = slow_second  # type: ignore[method-assign]
        task = asyncio.ensure_future(
            solve_async(FIB_PROMPT, never, tests=FIB_TESTS, options=replace(options, on_progress=on_progress))
        )
        await stalled.wait()
        await asyncio.sleep(0.2)
        task.cancel()
        return await task

    solution = asyncio.run(main())
    assert solution.evidence.stop_reason == "interrupted" and not solution.verified
    assert (solution.code or "").strip() == FIB_DRAFT.strip() and solution.evidence.attempts == 1
    assert "passes 2 of 3" in solution.verdict


def test_cancelling_the_default_strategy_keeps_its_samples_as_samples(tmp_path: Path) -> None:
    release = threading.Event()

    def reply(body: dict[str, object]) -> str:
        messages = body["messages"]
        assert isinstance(messages, list)
        if any("Previous program" in str(m["content"]) for m in messages):
            release.wait(60)  # a refinement is in flight when the cancel comes
        return fenced(FIB_DRAFT)

    async def main(url: str) -> Solution:
        options = SolveOptions(base_url=url, store=tmp_path / "s.sqlite", environ={})
        task = asyncio.ensure_future(solve_async(FIB_PROMPT, "coder", tests=FIB_TESTS, options=options))
        while not release.is_set() and not task.done():
            await asyncio.sleep(0.1)
            if sum(body.get("n", 1) for body in server.answered()) > 6:  # 4 samples, 2 test writers, a refinement
                break
        await asyncio.sleep(0.5)
        task.cancel()
        return await task

    with serve(reply) as server:
        try:
            solution = asyncio.run(main(server.base_url))
        finally:
            release.set()
    assert solution.evidence.stop_reason == "interrupted"
    assert [a.origin for a in solution.trajectory.attempts] == ["sample"] * 4


def test_user_errors_are_one_line(options: SolveOptions) -> None:
    model = ScriptedModel([])
    with pytest.raises(UserError, match="not available"):
        solve(FIB_PROMPT, model, tests=FIB_TESTS, options=replace(options, strategy="no-such-strategy"))
    with pytest.raises(UserError, match="need kind 'stdio'"):
        solve(FIB_PROMPT, model, io=SUM_IO, kind="function", options=options)
    with pytest.raises(UserError, match="prompt is empty"):
        solve("  ", model, tests=FIB_TESTS, options=options)
    assert model.requests == []


def test_renders_in_a_notebook_and_with_rich(options: SolveOptions) -> None:
    from rich.console import Console

    model = ScriptedModel([fenced(FIB_DRAFT), fenced(FIB_FIXED)])
    solution = solve(FIB_PROMPT, model, tests=FIB_TESTS, options=options)
    page = solution._repr_html_()
    assert "VERIFIED: passes 3 of 3 given tests" in page and "n == 1" in page
    assert "attempt 0 (draft): 2/3 tests" in page and "+    if n == 1:" in page
    assert "fibonacci(1) == [0]: fail" in page  # the failure that drove attempt 1
    console = Console(record=True, width=100)
    console.print(solution)
    text = console.export_text()
    assert "VERIFIED" in text and "attempt 1 (refine): 3/3 tests (returned)" in text


def test_a_pytest_style_source_is_shown_by_its_calls(options: SolveOptions) -> None:
    source = "import pytest\n\n@pytest.mark.parametrize('n', [1, 2])\ndef test_length(n):\n    assert len(fibonacci(n)) == n\n"
    model = ScriptedModel([fenced(FIB_DRAFT), fenced(FIB_FIXED)])
    solution = solve(FIB_PROMPT, model, tests=source, options=options)
    assert solution.verified and [c.label for c in solution.evidence.tests] == ["test_length(n=1)", "test_length(n=2)"]
    page = solution._repr_html_()
    assert "<code>test_length(n=1)</code>" in page and "<code>def test_length" not in page
    assert "test_length(n=1): error: len(fibonacci(n)) == n: the left side is 2" in page  # what drove attempt 1


def test_inside_a_running_event_loop(options: SolveOptions) -> None:
    async def notebook_cell() -> Solution:
        model = ScriptedModel([fenced(FIB_DRAFT), fenced(FIB_FIXED)])
        return solve(FIB_PROMPT, model, tests=FIB_TESTS, options=options)  # sync call, loop already running

    assert asyncio.run(notebook_cell()).verified


def _is_test_request(messages: Sequence[Message]) -> bool:
    return "write unit tests" in messages[0].content


FIB_GENERATED = (
    "```python\nassert fibonacci(0) == []\nassert fibonacci(1) == [0]\nassert fibonacci(5) == [0, 1, 1, 2, 3]\n```"
)


def test_without_tests_the_model_writes_them_and_the_result_says_so(options: SolveOptions) -> None:
    prompt = "Return the first n Fibonacci numbers as a list.\n\ndef fibonacci(n):"
    model = ScriptedModel([fenced(FIB_DRAFT), fenced(FIB_FIXED)], rules=[(_is_test_request, FIB_GENERATED)])
    solution = solve(prompt, model, options=options)
    assert solution.evidence.generated and solution.verified
    assert [c.origin for c in solution.evidence.tests] == ["generated"] * 3
    assert solution.verdict == "VERIFIED: passes 3 of 3 generated tests"
    (generation,) = solution.trajectory.generations
    assert len(generation.tests) == 3
    assert (
        solution.evidence.usage.total_tokens == solution.trajectory.usage.total_tokens > generation.usage.total_tokens
    )


def test_a_one_line_prompt_with_its_def_inline_gets_generated_tests(options: SolveOptions) -> None:
    # the README's example, without --test: the signature is written inline, after the sentence
    prompt = "Return the first n Fibonacci numbers. def fibonacci(n: int) -> list[int]:"
    model = ScriptedModel([fenced(FIB_FIXED)], rules=[(_is_test_request, FIB_GENERATED)])
    solution = solve(prompt, model, options=options)
    assert solution.evidence.generated and solution.verified
    assert solution.verdict == "VERIFIED: passes 3 of 3 generated tests"


TWO_SUM = """
class Solution:
    def twoSum(self, nums, target):
        seen = {}
        for i, x in enumerate(nums):
            if target - x in seen:
                return [seen[target - x], i]
            seen[x] = i
"""


def test_a_class_skeleton_signature_tests_its_method(options: SolveOptions) -> None:
    statement = "Return the indices of the two numbers that add up to target.\n\nInput: nums = [3,2,4], target = 6\nOutput: [1,2]\n"
    signature = "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
    tests = ["Solution().twoSum([3, 3], 6) == [0, 1]"]
    solution = solve(
        statement, ScriptedModel([fenced(TWO_SUM)]), tests=tests, options=replace(options, signature=signature)
    )
    assert solution.verified, solution.evidence.tests
    assert [(c.test, c.origin) for c in solution.evidence.tests] == [
        ("Solution().twoSum([3, 3], 6) == [0, 1]", "given"),
        ("Solution().twoSum([3, 2, 4], 6) == [1, 2]", "docstring"),
    ]


def test_default_strategy_is_verified(tmp_path: Path) -> None:
    def reply(messages: Sequence[Message], config: GenerateConfig) -> str:
        return FIB_GENERATED if _is_test_request(list(messages)) else fenced(FIB_FIXED)

    options = SolveOptions(store=tmp_path / "store.sqlite", environ={})
    solution = solve(FIB_PROMPT, FunctionModel(reply), tests=FIB_TESTS, options=options)
    assert solution.evidence.strategy.startswith("verified") and solution.verified
    assert solution.evidence.stop_reason == "verified"
    # the strategy's own tests, minus the one the user also gave, are shown as agreement, not as the verdict
    assert [(c.test, c.origin, c.passed) for c in solution.evidence.tests[3:]] == [
        ("fibonacci(0) == []", "generated", True),
        ("fibonacci(5) == [0, 1, 1, 2, 3]", "generated", True),
    ]
    assert solution.verdict == "VERIFIED: passes 3 of 3 given tests; agrees with 2 of 2 generated tests"


def test_a_reply_that_is_only_the_body_is_completed_with_the_prompt(options: SolveOptions) -> None:
    prompt = 'from typing import List\n\n\ndef total(xs: List[int]) -> int:\n    """Sum of xs.\n    >>> total([1, 2])\n    3\n    """\n'
    model = ScriptedModel(["    return sum(xs)"])
    solution = solve(prompt, model, options=options)
    assert solution.verified and solution.evidence.attempts == 1
    assert (
        solution.code is not None
        and solution.code.startswith("from typing import List")
        and "return sum(xs)" in solution.code
    )


def test_no_tests_at_all_is_unverified_and_says_why(options: SolveOptions) -> None:
    prompt = "Return the first n Fibonacci numbers as a list.\n\ndef fibonacci(n):"
    model = ScriptedModel([fenced(FIB_FIXED)], rules=[(_is_test_request, "I would rather not write tests.")])
    solution = solve(prompt, model, options=replace(options, strategy="single-pass"))
    assert not solution.verified and solution.evidence.tests == ()
    assert solution.verdict.startswith("UNVERIFIED: no tests to check it against")
    assert (solution.code or "").strip() == FIB_FIXED.strip()


def test_the_summary_counts_attempts_and_never_says_an_unverified_result_was_verified() -> None:
    from refinelab.cli._solve import _summary as terminal_summary
    from refinelab.models import Usage
    from refinelab.solve import Evidence, Solution
    from refinelab.solve._render import _summary as notebook_summary
    from refinelab.strategies import Trajectory

    def solution(verified: bool, attempts: int, reason: str) -> Solution:
        evidence = Evidence((), False, attempts, 0, Usage(10, 5), None, 1.0, reason, "m", "verified", False)
        return Solution("x = 1\n", verified, "function", evidence, Trajectory("p", "verified", {}, (), 0, reason))  # type: ignore[arg-type]

    for summary in (terminal_summary, notebook_summary):
        unverified = summary(solution(False, 1, "verified"))
        assert "1 attempt" in unverified and "1 attempts" not in unverified
        assert "stopped: verified's stopping rule met, by its own check (not the verdict's tests)" in unverified
        assert "stopped: verified's stopping rule met" in summary(solution(True, 3, "verified"))
        assert "3 attempts" in summary(solution(True, 3, "verified"))
        assert "stopped: interrupted" in summary(solution(False, 2, "interrupted"))


def test_a_notebook_shows_code_and_diffs_in_monospace_with_diff_colours(options: SolveOptions) -> None:
    """Inline styles (a notebook's CSS may set ``pre`` in its text font, and sanitizers drop style sheets)."""
    from refinelab.solve._render import DIFF_STYLES, MONOSPACE, _diff_html

    model = ScriptedModel([fenced(FIB_DRAFT), fenced(FIB_FIXED)])
    shown = solve(FIB_PROMPT, model, tests=FIB_TESTS, options=options)._repr_html_()
    assert shown.count(f'<pre style="{MONOSPACE}">') == 3  # the code, and each attempt's code or diff
    assert f'<code style="{MONOSPACE}">' in shown
    added = [line for line in shown.splitlines() if line.startswith(f'<span style="{DIFF_STYLES["+"]}">+')]
    assert any("n == 1" in line for line in added)
    assert f'<span style="{DIFF_STYLES["@"]}">@@' in shown
    coloured = _diff_html("--- before\n+++ after\n@@ -1 +1 @@\n-x = 1\n+x = 2\n y = 3", first=False)
    assert coloured.splitlines()[3] == f'<span style="{DIFF_STYLES["-"]}">-x = 1</span>'
    assert coloured.splitlines()[:2] == ["--- before", "+++ after"] and coloured.splitlines()[5] == " y = 3"
