"""Strategies grounded in execution: single pass, execution-feedback refinement, parallel sampling."""

from __future__ import annotations

import ast
import asyncio
from dataclasses import dataclass, replace
from typing import Annotated, Literal

from annotated_types import Ge

from refinelab.models import Completion, GenerateConfig, Message
from refinelab.problems import Problem, Test, as_value_test
from refinelab.strategies._env import BudgetExhausted, Env
from refinelab.strategies._feedback import FeedbackFormat, MemoryPolicy, compress, feedback
from refinelab.strategies._parsing import extract_code, extract_confidence
from refinelab.strategies._prompts import DEFAULT_PROMPTS, Prompts
from refinelab.strategies._registry import strategy
from refinelab.strategies._schedule import TemperatureSchedule, at_round, check_schedule
from refinelab.strategies._tests import (
    DEFAULT_TESTS_PER_SAMPLE,
    TestPlan,
    agreement_choice,
    generated_pool,
    tests_decision,
    write_tests,
)
from refinelab.strategies._trajectory import Attempt, Origin, StopReason, TestGeneration, Trajectory
from refinelab.verification import Score

DEFAULT_CONFIG = GenerateConfig(temperature=0.0)
"""Temperature 0, as the refinement studies use."""
LIVECODEBENCH_CONFIG = GenerateConfig(temperature=0.2, top_p=0.95)
"""LiveCodeBench's sampling settings."""


@dataclass(frozen=True)
class _Request:
    """One actor request and how to label the attempt it produces."""

    messages: list[Message]
    config: GenerateConfig
    origin: Origin
    index: int
    given: str | None = None
    sample: int = 0
    ask_confidence: bool = False
    prompts: Prompts = DEFAULT_PROMPTS


def _messages(request: _Request) -> list[Message]:
    ask = [Message.user(request.prompts.confidence_request)] if request.ask_confidence else []
    return request.messages + ask


async def _attempt(env: Env, problem: Problem, request: _Request) -> Attempt:
    """Ask the actor, extract the code, run it on the visible tests."""
    completion = await env.generate("actor", _messages(request), request.config, sample=request.sample)
    return await _judged(env, problem, request, completion)


async def _judged(env: Env, problem: Problem, request: _Request, completion: Completion) -> Attempt:
    """The attempt a reply to ``request`` makes: its code extracted and run on the visible tests."""
    parsed = extract_code(completion.text, problem.entry_point)
    confidence = extract_confidence(completion.text).value if request.ask_confidence else None
    code = None if parsed.value is None else with_prompt_imports(problem, parsed.value)
    if code is not None:
        env.attempted(code)
    visible = await env.execute(code, problem) if code is not None and problem.visible_tests else None
    return Attempt(
        request.index,
        request.origin,
        code,
        completion.text,
        usage=completion.usage,
        latency_seconds=completion.latency_seconds,
        feedback=request.given,
        parse_error=parsed.error,
        confidence=confidence,
        visible=visible,
        cost_usd=completion.cost_usd,
        cached=completion.cached,
        reasoning=completion.reasoning,
        not_sent=completion.not_sent,
    )


def with_prompt_imports(problem: Problem, code: str) -> str:
    """The program with the prompt's import lines it lacks (HumanEval prompts import ``List`` and such;
    models often return only the function), placed after the program's ``from __future__`` imports,
    which must come first."""
    imports = [
        line for line in problem.prompt.splitlines() if line.startswith(("import ", "from ")) and line not in code
    ]
    if not imports:
        return code
    lines = code.splitlines(keepends=True)
    after = _future_imports_end(code)
    return "".join(lines[:after]) + "\n".join(imports) + "\n" + "".join(lines[after:])


def _future_imports_end(code: str) -> int:
    """The line after the program's leading docstring and ``from __future__`` imports (0 when it has none
    or does not parse)."""
    try:
        body = ast.parse(code).body
    except (SyntaxError, ValueError):
        return 0
    end = 0
    for index, node in enumerate(body):
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            end = node.end_lineno or end
        elif not (index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            break
    return end


def _finish(
    problem: Problem,
    spec: str,
    attempts: list[Attempt],
    reason: StopReason,
    *,
    note: str | None = None,
    final: int | None = None,
) -> Trajectory:
    chosen = final if final is not None else (len(attempts) - 1 if attempts else None)
    # the arguments are recorded by the registry (``@strategy``), from the call itself
    return Trajectory(problem.id, spec, {}, tuple(attempts), chosen, reason, budget_note=note)


@strategy("single-pass", baseline="single")
async def single_pass(
    problem: Problem,
    env: Env,
    *,
    config: GenerateConfig = DEFAULT_CONFIG,
    ask_confidence: bool = False,
    prompts: Prompts = DEFAULT_PROMPTS,
) -> Trajectory:
    """One generation (its visible-test result is recorded, never used to choose)."""
    spec = "single-pass"
    request = _Request(prompts.draft(problem), config, "draft", 0, ask_confidence=ask_confidence, prompts=prompts)
    try:
        first = await _attempt(env, problem, request)
    except BudgetExhausted as exc:
        return _finish(problem, spec, [], "budget", note=exc.reason)
    return _finish(problem, spec, [first], "single_pass")


NoTestsPolicy = Literal["generate", "stop"]
"""What ``exec-refine`` does on a problem without visible tests: ``generate`` them with the actor (one
test-writing call through :mod:`refinelab.verification`, as execution-feedback tools do: tests "given or
generated"), or ``stop`` after the draft. It never refines with nothing to run."""


@strategy("exec-refine", iterates=True)
async def exec_refine(  # noqa: PLR0913 - flat knobs map one to one onto ``exec-refine(key=value)`` specs
    problem: Problem,
    env: Env,
    *,
    max_iters: Annotated[int, Ge(0)] = 5,
    feedback_format: FeedbackFormat = "raw",
    memory: MemoryPolicy = "full",
    config: GenerateConfig = DEFAULT_CONFIG,
    ask_confidence: bool = False,
    prompts: Prompts = DEFAULT_PROMPTS,
    temperature_schedule: TemperatureSchedule | None = None,
    when_no_tests: NoTestsPolicy = "generate",
) -> Trajectory:
    """Generate, run the visible tests, stop when all pass, else feed the failures back and refine.

    ``max_iters`` counts refinements (so at most ``max_iters + 1`` attempts). ``temperature_schedule``
    ``(first, last)`` moves the actor's temperature linearly from the draft to the last allowed round.
    ``when_no_tests`` (see :data:`NoTestsPolicy`): where the problem has no visible tests, the tests the
    actor writes take their place (recorded in the trajectory's ``generations`` and its ``tests``
    decision; the draft's prompt is the same either way), or the draft is the answer (stop reason
    ``no_tests``, also when the written tests hold none that can be run).
    """
    check_schedule(temperature_schedule)
    spec = "exec-refine"
    attempts: list[Attempt] = []
    found = _Tests()
    try:
        if not problem.visible_tests and max_iters > 0 and when_no_tests == "generate":
            found = await _generated_tests(env, problem, config)
        judged = replace(problem, visible_tests=found.tests) if found.tests else problem
        first = at_round(config, temperature_schedule, 0, max_iters)
        draft = _Request(prompts.draft(problem), first, "draft", 0, ask_confidence=ask_confidence, prompts=prompts)
        attempts.append(await _attempt(env, judged, draft))
        while not _passes(attempts[-1]):
            if len(attempts) > max_iters:
                return found.recorded(_finish(problem, spec, attempts, "max_iterations"))
            if not judged.visible_tests:
                return found.recorded(_finish(problem, spec, attempts, "no_tests"))
            shown = _Memory(feedback_format, memory, "generated" if found.tests else "visible")
            messages, given = _refinement(judged, attempts, shown, prompts)
            now = at_round(config, temperature_schedule, len(attempts), max_iters)
            request = _Request(
                messages, now, "refine", len(attempts), given, ask_confidence=ask_confidence, prompts=prompts
            )
            attempts.append(await _attempt(env, judged, request))
    except BudgetExhausted as exc:
        return found.recorded(_finish(problem, spec, attempts, "budget", note=exc.reason))
    return found.recorded(_finish(problem, spec, attempts, "visible_tests_passed"))


@dataclass(frozen=True)
class _Tests:
    """Tests ``exec-refine`` wrote for a problem without visible ones, and the calls that wrote them."""

    tests: tuple[Test, ...] = ()
    generations: tuple[TestGeneration, ...] = ()

    def recorded(self, trajectory: Trajectory) -> Trajectory:
        """The trajectory with the test-writing calls and the ``tests`` decision (unchanged without)."""
        if not self.generations:
            return trajectory
        decision = tests_decision(0, len(self.tests))
        return replace(trajectory, generations=self.generations, decisions=(decision, *trajectory.decisions))


async def _generated_tests(env: Env, problem: Problem, config: GenerateConfig) -> _Tests:
    """One test-writing call by the actor (its tokens count in the budget; a refused call is raised)."""
    plan = TestPlan(1, DEFAULT_TESTS_PER_SAMPLE, None, config)
    generations, refused = await write_tests(env, problem, plan)
    if refused is not None:
        raise BudgetExhausted(refused)
    return _Tests(tuple(as_value_test(t) for t in generated_pool(generations, None)), tuple(generations))


def _passes(attempt: Attempt) -> bool:
    return attempt.visible is not None and attempt.visible.passed


def _outcome_text(problem: Problem, attempt: Attempt, style: FeedbackFormat, kind: str) -> str:
    if attempt.code is None:
        return f"No program could be read from the reply ({attempt.parse_error}). Give the code in a ```python block."
    assert attempt.visible is not None, "exec-refine refines only where it has tests to run"
    return feedback(problem, attempt.visible, style, kind=kind)


@dataclass(frozen=True)
class _Memory:
    """How earlier attempts reach the next request."""

    style: FeedbackFormat
    """How test results are written."""
    policy: MemoryPolicy
    """Which earlier attempts are shown."""
    kind: str = "visible"
    """What the tests are called to the actor: ``visible`` (the problem's), ``generated`` (its own)."""


def _refinement(
    problem: Problem, attempts: list[Attempt], shown: _Memory, prompts: Prompts
) -> tuple[list[Message], str]:
    """The request for the next attempt under the memory policy, and the feedback it carries."""
    style, memory, kind = shown.style, shown.policy, shown.kind
    last = attempts[-1]
    given = _outcome_text(problem, last, style, kind)
    messages = [Message.system(prompts.refine_system), Message.user(prompts.task(problem))]
    if memory == "full":
        for attempt in attempts[:-1]:
            given_then = _outcome_text(problem, attempt, style, kind)
            messages += [Message.assistant(attempt.response), Message.user(given_then)]
    elif memory == "compressed" and len(attempts) > 1:
        digest = compress([(a.code or "", _outcome_text(problem, a, "summary", kind)) for a in attempts[:-1]])
        messages.append(Message.user(f"Earlier attempts, in short:\n{digest}"))
    messages.append(Message.user(prompts.refine(last.code or last.response, given)))
    return messages, given


@strategy("sampling", agrees={"select": "dual-agreement"}, baseline="samples")
async def sampling(  # noqa: PLR0913 - flat knobs map one to one onto ``sampling(key=value)`` specs
    problem: Problem,
    env: Env,
    *,
    n: Annotated[int, Ge(1)] = 8,
    config: GenerateConfig = LIVECODEBENCH_CONFIG,
    ask_confidence: bool = False,
    prompts: Prompts = DEFAULT_PROMPTS,
    select: Literal["visible", "dual-agreement"] = "visible",
    m: Annotated[int, Ge(0)] = 2,
) -> Trajectory:
    """``n`` independent samples, requested concurrently; every sample is kept, in sample order, so pass@k
    can be computed. The answer (``select``): ``visible``, the first that passes the visible tests, else the
    one that passes most (ties to the earliest); ``dual-agreement``, the best dual-agreement group over the
    visible tests and those ``m`` test-writing samples produce (as ``codet`` chooses)."""
    spec = "sampling"
    request = _Request(prompts.draft(problem), config, "sample", 0, ask_confidence=ask_confidence, prompts=prompts)
    if select == "dual-agreement":
        plan = TestPlan(m, DEFAULT_TESTS_PER_SAMPLE, None, config)
        how = AgreementChoice(spec, problem.visible_tests)
        return await sample_and_agree(env, problem, request, n, plan, how)
    attempts, note = await draw_samples(env, problem, request, n)
    reason: StopReason = "sampled" if note is None else "budget"
    return _finish(problem, spec, attempts, reason, note=note, final=_select(attempts))


@dataclass(frozen=True)
class AgreementChoice:
    """How a sampling strategy chooses its answer by dual agreement."""

    strategy: str
    """The trajectory's strategy name."""
    visible: tuple[Test, ...] = ()
    """The visible tests that join the generated ones."""
    score: Score = "codet"
    """The group score (see :func:`refinelab.verification.dual_agreement`)."""


async def sample_and_agree(
    env: Env, problem: Problem, request: _Request, n: int, plan: TestPlan, how: AgreementChoice
) -> Trajectory:
    """``n`` samples of ``request`` and the tests written concurrently; the answer chosen by dual agreement
    over the visible tests ``how`` joins plus the generated tests."""
    spec, visible, score = how.strategy, how.visible, how.score
    (attempts, note), (generations, test_note) = await asyncio.gather(
        draw_samples(env, problem, request, n), write_tests(env, problem, plan)
    )
    tests = visible + generated_pool(generations, plan.limit)
    final, decisions = await agreement_choice(env, problem, attempts, tests, visible=len(visible), score=score)
    note = note or test_note
    trajectory = _finish(problem, spec, attempts, "budget" if note else "agreement", note=note, final=final)
    steps = (tests_decision(len(visible), len(tests)), *decisions)
    return replace(trajectory, final=final, generations=tuple(generations), decisions=steps)


async def concurrently(env: Env, problem: Problem, requests: list[_Request]) -> tuple[list[Attempt], str | None]:
    """Run independent requests at once; the attempts made, in request order, and the budget note when
    the budget refused some (the refused ones are the last: the budget reserves calls in request order).
    Any other failure propagates."""
    results = await asyncio.gather(*(_attempt(env, problem, r) for r in requests), return_exceptions=True)
    attempts = [r for r in results if isinstance(r, Attempt)]
    refused = [r for r in results if isinstance(r, BudgetExhausted)]
    failed = [r for r in results if isinstance(r, BaseException) and not isinstance(r, BudgetExhausted)]
    if failed:
        raise failed[0]
    return attempts, (refused[0].reason if refused else None)


async def draw_samples(env: Env, problem: Problem, request: _Request, n: int) -> tuple[list[Attempt], str | None]:
    """``n`` samples of one request (attempt and sample indices ``request.index`` and ``request.sample``
    upwards) drawn by :meth:`Env.generate_n`, each run on the visible tests as it is judged; the attempts,
    in sample order, and the budget note when the budget refused some (the refused ones are the last)."""
    drawn = await env.generate_n("actor", _messages(request), request.config, n=n, first_sample=request.sample)
    labelled = [replace(request, index=request.index + i, sample=request.sample + i) for i in range(n)]
    judged = (_judged(env, problem, r, c) for r, c in zip(labelled, drawn.completions))
    results = await asyncio.gather(*judged, return_exceptions=True)  # every run ends before a failure is raised
    failed = [r for r in results if isinstance(r, BaseException)]
    if failed:
        raise failed[0]
    return [r for r in results if isinstance(r, Attempt)], drawn.refused


def _select(attempts: list[Attempt]) -> int | None:
    if not attempts:
        return None
    scores = [a.visible.pass_count if a.visible is not None else -1 for a in attempts]
    passing = [i for i, a in enumerate(attempts) if _passes(a)]
    return passing[0] if passing else scores.index(max(scores))
