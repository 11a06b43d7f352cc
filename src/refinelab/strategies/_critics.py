"""Strategies that ask a critic model: Self-Refine (pass/refine as JSON) and Self-Redraft
(pass/refine/redraft as tags, regeneration that sees the whole trajectory). No tests are run to decide
anything; visible-test results are recorded for analysis only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Annotated

from annotated_types import Ge

from refinelab.models import GenerateConfig, Message
from refinelab.problems import Problem
from refinelab.strategies._env import BudgetExhausted, Env
from refinelab.strategies._execution import DEFAULT_CONFIG, LIVECODEBENCH_CONFIG, _attempt, _finish, _Request
from refinelab.strategies._feedback import MemoryPolicy, compress
from refinelab.strategies._parsing import extract_confidence, parse_critique_json, parse_critique_xml
from refinelab.strategies._prompts import DEFAULT_PROMPTS, Prompts, critic_schema
from refinelab.strategies._registry import strategy
from refinelab.strategies._schedule import TemperatureSchedule, at_round, check_schedule
from refinelab.strategies._trajectory import Attempt, CriticOutput, Origin, StopReason, Trajectory


async def _critique(env: Env, problem: Problem, attempt: Attempt, loop: _CriticLoop) -> Attempt:
    """Ask the critic about an attempt; the attempt comes back with the critic's output attached."""
    code = attempt.code if attempt.code is not None else attempt.response
    redraft, ask_confidence = loop.redraft, loop.ask_confidence
    messages = loop.prompts.critic(problem, code, redraft=redraft, ask_confidence=ask_confidence)
    completion = await env.generate("critic", messages, loop.critic_config)
    text = completion.text
    if redraft:
        tagged = parse_critique_xml(text)
        verdict = None if tagged.value is None else tagged.value.suggestion
        critique, error = ("" if tagged.value is None else tagged.value.critique), tagged.error
    else:
        parsed = parse_critique_json(text)
        verdict = None if parsed.value is None else ("pass" if parsed.value.passed else "refine")
        critique, error = ("" if parsed.value is None else parsed.value.critique), parsed.error
    stated = extract_confidence(text).value if ask_confidence else None
    output = CriticOutput(
        text,
        verdict,
        critique,
        parse_error=error,
        confidence=stated,
        usage=completion.usage,
        latency_seconds=completion.latency_seconds,
        cost_usd=completion.cost_usd,
        cached=completion.cached,
        reasoning=completion.reasoning,
        not_sent=completion.not_sent,
    )
    return replace(attempt, critic=output)


@strategy("self-refine", uses_critic=True, iterates=True)
async def self_refine(  # noqa: PLR0913 - flat knobs map one to one onto ``self-refine(key=value)`` specs
    problem: Problem,
    env: Env,
    *,
    max_iters: Annotated[int, Ge(0)] = 3,
    config: GenerateConfig = DEFAULT_CONFIG,
    structured: bool = True,
    ask_confidence: bool = False,
    prompts: Prompts = DEFAULT_PROMPTS,
    temperature_schedule: TemperatureSchedule | None = None,
    critique_last: bool = False,
) -> Trajectory:
    """Actor drafts; the critic answers ``{"critique", "passed"}``; stop when it passes, else the actor
    rewrites from the problem, its previous code and the critique; at most ``max_iters`` refinements.

    As in the Self-Refine paper's loop, the attempt of the last allowed refinement is not critiqued: no
    verdict on it could change the answer, so the call would only add cost. ``critique_last=True`` asks
    the critic about it too (the critic's verdict on every attempt, for its confusion matrix; the answer
    is the same). The critic may be a different (e.g. smaller) model: give :class:`Env` a ``critic``.
    ``structured`` asks for the verdict with a JSON Schema (servers that cannot do it get plain text, then
    parsed). ``temperature_schedule`` ``(first, last)`` moves the actor's temperature linearly across
    rounds (the critic keeps ``config``'s).
    """
    check_schedule(temperature_schedule)
    schema = critic_schema(ask_confidence)
    critic_config = GenerateConfig.with_schema(schema).merge(config) if structured else config
    loop = _CriticLoop(
        config,
        critic_config,
        redraft=False,
        max_iters=max_iters,
        ask_confidence=ask_confidence,
        next_messages=lambda attempts: _refine_messages(problem, attempts, prompts),
        prompts=prompts,
        schedule=temperature_schedule,
        critique_last=critique_last,
    )
    return await _critic_loop(problem, env, "self-refine", loop)


def _refine_messages(problem: Problem, attempts: list[Attempt], prompts: Prompts) -> list[Message]:
    """Self-Refine's rewrite request: the problem, the previous program and the critique."""
    last = attempts[-1]
    critique = last.critic.critique if last.critic is not None else ""
    return [
        Message.system(prompts.refine_after_critique_system),
        Message.user(prompts.task(problem)),
        Message.user(prompts.refine(last.code or last.response, critique)),
    ]


@dataclass(frozen=True)
class _CriticLoop:
    """What differs between the critic-driven strategies."""

    config: GenerateConfig
    critic_config: GenerateConfig
    redraft: bool
    max_iters: int
    ask_confidence: bool
    next_messages: Callable[[list[Attempt]], list[Message]]
    prompts: Prompts = DEFAULT_PROMPTS
    schedule: TemperatureSchedule | None = None
    critique_last: bool = False

    def actor_config(self, round_: int) -> GenerateConfig:
        """The actor's settings for round ``round_`` (0 = the draft)."""
        return at_round(self.config, self.schedule, round_, self.max_iters)


async def _critic_loop(problem: Problem, env: Env, spec: str, loop: _CriticLoop) -> Trajectory:
    """Draft; then critique, stop or regenerate, until the critic passes, the cap, or the budget. The
    attempt at the cap is critiqued only with ``critique_last``."""
    attempts: list[Attempt] = []
    try:
        draft = _Request(
            loop.prompts.draft(problem),
            loop.actor_config(0),
            "draft",
            0,
            ask_confidence=loop.ask_confidence,
            prompts=loop.prompts,
        )
        attempts.append(await _attempt(env, problem, draft))
        while True:
            if len(attempts) > loop.max_iters and not loop.critique_last:  # nothing can follow a verdict here
                return _finish(problem, spec, attempts, "max_iterations")
            attempts[-1] = await _critique(env, problem, attempts[-1], loop)
            critic = attempts[-1].critic
            assert critic is not None
            stop = _stop(critic, len(attempts), loop.max_iters)
            if stop is not None:
                return _finish(problem, spec, attempts, stop, note=critic.parse_error)
            origin: Origin = "redraft" if critic.verdict == "redraft" else "refine"
            request = _Request(
                loop.next_messages(attempts),
                loop.actor_config(len(attempts)),
                origin,
                len(attempts),
                critic.critique,
                ask_confidence=loop.ask_confidence,
                prompts=loop.prompts,
            )
            attempts.append(await _attempt(env, problem, request))
    except BudgetExhausted as exc:
        return _finish(problem, spec, attempts, "budget", note=exc.reason)


def _stop(critic: CriticOutput, attempts: int, max_iters: int) -> StopReason | None:
    """Why to stop after this critique, or None to go on."""
    if critic.verdict is None:
        return "critic_unreadable"
    if critic.verdict == "pass":
        return "accepted"
    return "max_iterations" if attempts > max_iters else None


@strategy("self-redraft", uses_critic=True, iterates=True)
async def self_redraft(  # noqa: PLR0913 - flat knobs map one to one onto ``self-redraft(key=value)`` specs
    problem: Problem,
    env: Env,
    *,
    max_iters: Annotated[int, Ge(0)] = 16,
    memory: MemoryPolicy = "full",
    config: GenerateConfig = LIVECODEBENCH_CONFIG,
    ask_confidence: bool = False,
    prompts: Prompts = DEFAULT_PROMPTS,
    temperature_schedule: TemperatureSchedule | None = None,
    critique_last: bool = False,
) -> Trajectory:
    """Actor drafts; the critic says pass, refine or redraft; regeneration sees the trajectory
    ``(y0, c0, ..., yi, ci)`` (or the last round, or a digest: ``memory``); at most ``max_iters`` rounds.
    ``temperature_schedule`` ``(first, last)`` moves the actor's temperature linearly across rounds. The
    attempt of the last round is not critiqued unless ``critique_last`` (as in ``self-refine``)."""
    check_schedule(temperature_schedule)
    loop = _CriticLoop(
        config,
        config,
        redraft=True,
        max_iters=max_iters,
        ask_confidence=ask_confidence,
        next_messages=lambda attempts: _redraft_messages(problem, attempts, memory, prompts),
        prompts=prompts,
        schedule=temperature_schedule,
        critique_last=critique_last,
    )
    return await _critic_loop(problem, env, "self-redraft", loop)


def _round_text(attempt: Attempt) -> str:
    critic = attempt.critic
    review = "" if critic is None else f"Reviewer: {critic.critique} (suggestion: {critic.verdict})"
    return f"```python\n{(attempt.code or attempt.response).rstrip()}\n```\n{review}"


def _redraft_messages(
    problem: Problem, attempts: list[Attempt], memory: MemoryPolicy, prompts: Prompts
) -> list[Message]:
    last = attempts[-1]
    assert last.critic is not None
    redraft = last.critic.verdict == "redraft"
    instruction = prompts.redraft_instruction if redraft else prompts.refine_instruction
    messages = [Message.system(prompts.refine_after_critique_system), Message.user(prompts.task(problem))]
    if memory == "full":
        history = "\n\n".join(f"Attempt {a.index}:\n{_round_text(a)}" for a in attempts[:-1])
        if history:
            messages.append(Message.user(f"Your earlier attempts and their reviews:\n\n{history}"))
    elif memory == "compressed" and len(attempts) > 1:
        digest = compress([(a.code or "", a.critic.critique if a.critic else "") for a in attempts[:-1]])
        messages.append(Message.user(f"Earlier attempts, in short:\n{digest}"))
    messages.append(Message.user(f"Latest attempt:\n{_round_text(last)}\n\n{instruction}"))
    return messages
