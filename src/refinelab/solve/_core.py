"""``solve_async``: the one async core behind ``solve``, ``refinelab solve`` and the notebook.

Build the problem from the prompt and its tests (generated ones when none are given), run the strategy
in the sandbox, score every attempt on the tests, return the passing answer or else the best attempt,
and record the whole trajectory in the store. Cancelling returns the best attempt made so far.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from refinelab._validate import is_seconds
from refinelab.errors import UserError
from refinelab.experiment import ScoredRun, score_attempts
from refinelab.models import EndpointSetting, Model, RoleEndpoint, checked_effort, choose_endpoint
from refinelab.problems import Problem, ProblemKind
from refinelab.runtime import (
    NOT_GIVEN,
    Flags,
    Runtime,
    SandboxChoice,
    SandboxRequest,
    Settings,
    choose_sandbox,
    open_runtime,
    resolve_settings,
)
from refinelab.sandbox import RunResult, Sandbox, SandboxSettings, TestOutcome, default_workers
from refinelab.solve._generate import StrategyTests, generated_tests, strategy_tests, with_generation
from refinelab.solve._progress import WatchedEnv
from refinelab.solve._record import SolveRun, record
from refinelab.solve._solution import Evidence, Solution, TestCheck
from refinelab.solve._task import SolveOptions, Task, build_task
from refinelab.solve._tests import GivenTest, completed_body
from refinelab.store import EndpointUse, RunHeader
from refinelab.strategies import STRATEGIES, Attempt, Efforts, StrategySpec, Trajectory

_WORKERS = 2
"""Sandbox workers of a solve unless the settings name a count: one program at a time, and its tests."""


async def solve_async(
    prompt: str,
    model: str | Model,
    *,
    tests: str | Sequence[str] = (),
    io: Sequence[tuple[str, str]] = (),
    kind: ProblemKind | None = None,
    options: SolveOptions | None = None,
) -> Solution:
    """Code for ``prompt`` that passes its tests, written by ``model`` under a strategy.

    Args:
        prompt: What the code should do; a function's signature and docstring examples
            (``>>> fib(3)`` then ``[0, 1, 1]``) are read as a signature and as tests.
        model: A model string (``vllm:NAME``, an alias from ``refinelab.toml``, ``NAME`` with
            ``options.base_url``) or a :class:`~refinelab.models.Model`.
        tests: Assertions (``"fib(1) == [0]"``), or one source of asserts or pytest-style ``test_*`` functions.
        io: ``(stdin, expected stdout)`` pairs for a whole program.
        kind: ``function`` or ``stdio``; detected when omitted.
        options: Strategy, budget, signature, store, sandbox and progress settings.

    Returns:
        The solution; ``verified`` says whether its code passes every given test (or, with none given,
        every generated one). Cancelling returns the best attempt so far, its stop reason ``interrupted``.
    """
    options = options or SolveOptions()
    effort = None if options.reasoning_effort is None else checked_effort(options.reasoning_effort, "reasoning effort")
    task = build_task(prompt, tests, io, kind, options.signature)
    spec = bind_strategy(options.strategy)
    settings = solve_settings(options)
    sandbox = solve_sandbox(options, settings)
    endpoint = _endpoint(model, options, settings)
    started = time.monotonic()
    async with open_runtime(settings) as runtime:
        actor = _actor(runtime, model, endpoint, effort)
        pool = await runtime.open_sandbox(_sandbox(sandbox, settings))
        entry = task.problem.entry_point
        env = WatchedEnv(
            actor,
            pool,
            budget=options.budget,
            on_progress=options.on_progress,
            complete=lambda reply: completed_body(prompt, entry, reply),
            efforts=Efforts(effort, effort),
        )
        generation = None
        if not task.tests.tests:
            env.report("writing tests")
            found, generation = await generated_tests(task, env)
            task = task.with_tests(found)
        trajectory, hidden = await _run(spec, task, env, pool)
        chosen = choose(trajectory, hidden)
        code = None if chosen is None else trajectory.attempts[chosen].code
        agreement = await strategy_tests(task, trajectory, code, pool)
        trajectory = with_generation(trajectory, generation)
        meta = _Meta(actor.name, str(spec), time.monotonic() - started, effort)
        solution = conclude(task, ScoredRun(trajectory, hidden), agreement, meta)
        if options.record:
            used = (EndpointUse(endpoint=endpoint, since=time.time()),)
            header = RunHeader.of(pool, endpoints=used)
            run = SolveRun(
                task=task, strategy=spec, model=meta.model, header=header, sandbox=sandbox, effort=effort,
                models=settings.models,
            )  # fmt: skip
            run_id = record(runtime.open_store(), run, solution, hidden)
            solution = replace(solution, evidence=replace(solution.evidence, run_id=run_id))
    return solution


def solve_settings(options: SolveOptions) -> Settings:
    """The settings of a solve: those it was handed, else its options over ``REFINELAB_*``, the project
    config, and the defaults."""
    if options.settings is not None:
        return options.settings
    environ = os.environ if options.environ is None else options.environ
    flags = Flags(
        config=NOT_GIVEN if options.config is None else options.config,
        store=NOT_GIVEN if options.store is None else Path(options.store),
        cache=NOT_GIVEN if options.cache is None else Path(options.cache),
        cluster=NOT_GIVEN if options.cluster is None else options.cluster,
    )
    return resolve_settings(flags, environ, Path.cwd())


def _actor(runtime: Runtime, model: str | Model, endpoint: RoleEndpoint, effort: str | None) -> Model:
    """The solve's model, opened over the response cache; an effort it does not take is a user error first,
    before the cache is made or anything is asked."""
    if isinstance(model, Model):
        return model
    runtime.check_model(model, base_url=endpoint.base_url, efforts=(effort,))
    return runtime.model(model, base_url=endpoint.base_url)


def _endpoint(model: str | Model, options: SolveOptions, settings: Settings) -> RoleEndpoint:
    """Where the solve's model is served: ``base_url`` over its own ``[models.endpoints]`` entry (a
    :class:`Model` handed in is where its backend says)."""
    if isinstance(model, Model):
        return RoleEndpoint("actor", model.name, (model.backend.endpoint,), "the Model handed to solve")
    return choose_endpoint("actor", model, settings.models, over=[EndpointSetting(options.base_url, "base_url")])


def bind_strategy(text: str) -> StrategySpec:
    """A registered strategy with checked arguments; a one-line user error naming the choices otherwise."""
    name = text.strip().partition("(")[0].strip()
    if name not in STRATEGIES:
        choices = ", ".join(sorted(STRATEGIES))
        raise UserError(f"strategy {name!r} is not available in this refinelab; choose one of: {choices}")
    spec = StrategySpec.parse(text)
    spec.bind()
    return spec


def solve_sandbox(options: SolveOptions, settings: Settings) -> SandboxChoice:
    """The sandbox of a solve, chosen as ``run`` and ``check`` choose theirs (no benchmark: its timeout
    applies to every test): its options over the ``sandbox`` setting."""
    if not is_seconds(options.timeout):
        raise UserError(f"timeout must be a positive number of seconds, not {options.timeout:g}")
    given = SandboxRequest(isolation=options.isolation, timeout=options.timeout)
    return choose_sandbox((), given, settings.sandbox_request())


def _sandbox(chosen: SandboxChoice, settings: Settings) -> SandboxSettings:
    workers = settings.workers or min(_WORKERS, default_workers())
    return chosen.sandbox_settings((), chosen.visible_limits(), workers=workers)


async def _run(
    spec: StrategySpec, task: Task, env: WatchedEnv, pool: Sandbox
) -> tuple[Trajectory, list[RunResult | None]]:
    """The strategy's trajectory and every attempt's results on the tests; what was done so far when
    cancelled (re-raised when nothing was)."""
    env.total = len(task.problem.visible_tests)
    try:
        trajectory = await spec.run(task.problem, env)
    except asyncio.CancelledError:
        partial = _interrupted(spec, task.problem, env)
        if partial is None:
            raise
        _uncancel()
        env.report("done")
        return partial, [a.visible for a in partial.attempts]
    env.report("done")
    return trajectory, await score_attempts(trajectory, task.problem, pool)


def _uncancel() -> None:
    """Take back the cancel request this solve answered with its best attempt (Python 3.11+), so the
    caller's own timeouts and task groups keep working."""
    task = asyncio.current_task()
    uncancel = getattr(task, "uncancel", None)
    if uncancel is not None:
        uncancel()


def _interrupted(spec: StrategySpec, problem: Problem, env: WatchedEnv) -> Trajectory | None:
    """A trajectory of the programs run before a cancel, or None when none was."""
    if not env.runs:
        return None
    sampled = any(run.origin == "sample" for run in env.runs)  # then sample 0 was a sample too
    attempts = tuple(
        Attempt(
            i,
            "sample" if sampled and run.origin == "draft" else run.origin,
            run.code,
            run.response,
            run.usage,
            0.0,
            visible=run.result,
        )
        for i, run in enumerate(env.runs)
    )
    return Trajectory(problem.id, spec.name, dict(spec.params), attempts, len(attempts) - 1, "interrupted")


@dataclass(frozen=True)
class _Meta:
    model: str
    strategy: str
    seconds: float
    effort: str | None = None


def conclude(task: Task, scored: ScoredRun, agreement: StrategyTests, meta: _Meta) -> Solution:
    """The solution: the strategy's answer when it passes every test, else the attempt passing the most;
    verified when it passes every test of the task (``agreement``: the strategy's own generated tests
    beside given ones, shown but not part of the verdict)."""
    trajectory, hidden = scored.trajectory, scored.hidden
    chosen = choose(trajectory, hidden)
    result = None if chosen is None else hidden[chosen]
    outcomes = result.outcomes if result is not None else ()
    checks = _checks(task.tests.tests, outcomes)
    verified = result is not None and result.passed and len(outcomes) == len(checks)
    checks += _checks(agreement.tests, agreement.result.outcomes if agreement.result is not None else ())
    attempts = trajectory.attempts
    evidence = Evidence(
        tests=checks,
        generated=task.generated,
        attempts=len(attempts),
        chosen=chosen,
        usage=trajectory.usage,
        cost_usd=trajectory.cost_usd,
        seconds=meta.seconds,
        stop_reason=trajectory.stop_reason,
        model=meta.model,
        strategy=meta.strategy,
        cached=bool(attempts) and all(a.cached for a in attempts),
        effort=meta.effort,
    )
    code = None if chosen is None else attempts[chosen].code
    return Solution(code, verified, task.problem.kind, evidence, trajectory)


def _checks(tests: Sequence[GivenTest], outcomes: Sequence[TestOutcome]) -> tuple[TestCheck, ...]:
    return tuple(TestCheck(t.text, t.origin, outcomes[i] if i < len(outcomes) else None) for i, t in enumerate(tests))


def choose(trajectory: Trajectory, hidden: Sequence[RunResult | None]) -> int | None:
    """The strategy's answer if it passes every test; else the attempt passing the most tests (the
    strategy's answer among equals, else the latest)."""
    final = trajectory.final
    scored = {i: r.pass_count for i, r in enumerate(hidden) if r is not None and trajectory.attempts[i].code}
    if final is not None and final in scored and (result := hidden[final]) is not None and result.passed:
        return final
    if not scored:
        return final
    most = max(scored.values())
    best = [i for i, count in scored.items() if count == most]
    return final if final in best else best[-1]
