"""``verified``: width first, depth grounded in execution, a regression guard, and selection by tests.

1. ``k`` independent samples and ``m`` test-writing samples, all concurrently.
2. Known tests = the visible tests (unless ``hide_visible``) + the distinct generated ones.
3. Stop rule, checked after every round: among the current candidates (the latest kept version of each
   sample) that pass every visible test, group them by the generated tests they pass (dual agreement,
   :func:`refinelab.verification.dual_agreement`); a candidate *agrees with the generated tests* when it
   belongs to the best-ranked group. Stop at the earliest such candidate when the problem has visible
   tests (they are the ground truth; the generated ones only choose among visible passers), or, in the
   execution-free setting, when that group also passes every generated test.
4. Otherwise refine the ``refine_top`` candidates that fail known tests (most known tests passed first,
   ties to the earliest), each from its own code and ONLY the execution feedback of its last run (the
   failing tests, expected vs actual): compressed memory, no history.
5. Regression guard: a refinement that passes fewer known tests than its parent, or fails a visible test
   its parent passed, is discarded (the parent stays the candidate).
6. After ``max_rounds`` rounds or at the budget, choose as in 3 among the candidates passing the most
   visible tests. A critic, when consulted, only settles ties the tests cannot separate.

Every decision is recorded in :attr:`Trajectory.decisions`; see docs/design/verified.md.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Annotated

from annotated_types import Ge

from refinelab.models import GenerateConfig, Message
from refinelab.problems import Problem, Test
from refinelab.sandbox import Suite
from refinelab.strategies._critics import _CriticLoop, _critique
from refinelab.strategies._env import BudgetExhausted, Env
from refinelab.strategies._execution import LIVECODEBENCH_CONFIG, _finish, _Request, concurrently, draw_samples
from refinelab.strategies._feedback import feedback
from refinelab.strategies._prompts import DEFAULT_PROMPTS, Prompts
from refinelab.strategies._registry import strategy
from refinelab.strategies._schedule import TemperatureSchedule, at_round, check_schedule
from refinelab.strategies._tests import (
    TestPlan,
    generated_pool,
    group_decisions,
    hidden_view,
    pass_matrix,
    write_tests,
)
from refinelab.strategies._trajectory import Attempt, Decision, StopReason, TestGeneration, Trajectory
from refinelab.verification import Agreement, dual_agreement

FEEDBACK_FAILURES = 3
"""Failing tests shown in one refinement request."""


@dataclass(frozen=True)
class Knobs:
    """``verified``'s settings."""

    width: int
    """Independent samples (``k``)."""
    max_rounds: int
    """Refinement rounds at most."""
    refine_top: int
    """Candidates refined per round at most."""
    consult_critic: bool
    """Ask the critic to settle ties the tests cannot separate."""
    config: GenerateConfig
    """The actor's settings (its temperature follows ``schedule``, from the samples to the last round)."""
    schedule: TemperatureSchedule | None
    """Temperature schedule across rounds."""
    prompts: Prompts
    """Prompt set."""


@dataclass
class _State:
    """What ``verified`` knows so far."""

    problem: Problem
    """The problem as the strategy sees it (no visible tests when they are hidden)."""
    known: tuple[Test, ...] = ()
    """Visible tests first, then generated ones."""
    attempts: list[Attempt] = field(default_factory=list)
    passed: dict[int, frozenset[int]] = field(default_factory=dict)
    """Known tests each attempt passes."""
    heads: list[int] = field(default_factory=list)
    """The current candidate of each sample's lineage."""
    decisions: list[Decision] = field(default_factory=list)
    generations: list[TestGeneration] = field(default_factory=list)

    @property
    def visible(self) -> frozenset[int]:
        return frozenset(range(len(self.problem.visible_tests)))

    def passes_visible(self, attempt: int) -> bool:
        return self.visible <= self.passed[attempt]

    def generated_passed(self, attempt: int) -> frozenset[int]:
        return self.passed[attempt] - self.visible


@strategy("verified", uses_critic=True, selects=True, iterates=True, agrees=True)
async def verified(  # noqa: PLR0913 - flat knobs map one to one onto ``verified(key=value)`` specs
    problem: Problem,
    env: Env,
    *,
    k: Annotated[int, Ge(1)] = 4,
    m: Annotated[int, Ge(0)] = 2,
    tests_per_sample: Annotated[int, Ge(1)] = 10,
    max_rounds: Annotated[int, Ge(0)] = 3,
    refine_top: Annotated[int, Ge(1)] = 2,
    hide_visible: bool = False,
    consult_critic: bool = True,
    config: GenerateConfig = LIVECODEBENCH_CONFIG,
    temperature_schedule: TemperatureSchedule | None = None,
    prompts: Prompts = DEFAULT_PROMPTS,
) -> Trajectory:
    """Width first (``k`` samples, ``m`` test-writing samples, concurrently), then up to ``max_rounds``
    rounds refining the ``refine_top`` best failing candidates with execution feedback only, a regression
    guard, and selection by visible tests then dual agreement (see the module docstring for the exact
    rules). ``hide_visible``: the execution-free setting (generated tests only). ``consult_critic``: ask
    the critic model only when the tests cannot separate the top candidates."""
    check_schedule(temperature_schedule)
    knobs = Knobs(
        k,
        max_rounds,
        refine_top,
        consult_critic=consult_critic,
        config=config,
        schedule=temperature_schedule,
        prompts=prompts,
    )
    state = _State(hidden_view(problem, hide_visible))
    reason, note = await _search(env, state, knobs, TestPlan(m, tests_per_sample, None, config))
    final = None
    if state.heads:
        final, reason = await _choose(env, state, knobs, reason)
    trajectory = _finish(state.problem, "verified", state.attempts, reason, note=note)
    return replace(trajectory, final=final, generations=tuple(state.generations), decisions=tuple(state.decisions))


async def _search(env: Env, state: _State, knobs: Knobs, plan: TestPlan) -> tuple[StopReason, str | None]:
    """Sample, then refine round by round; why the search ended and the budget note, if any."""
    first = at_round(knobs.config, knobs.schedule, 0, knobs.max_rounds)  # the schedule starts at the samples
    request = _Request(knobs.prompts.draft(state.problem), first, "sample", 0, prompts=knobs.prompts)
    (samples, note), (generations, test_note) = await asyncio.gather(
        draw_samples(env, state.problem, request, knobs.width), write_tests(env, state.problem, plan)
    )
    state.generations = generations
    generated = generated_pool(generations, plan.limit)
    state.known = state.problem.visible_tests + generated
    visible = len(state.problem.visible_tests)
    state.decisions.append(
        Decision("tests", f"known tests: {visible} visible, {len(generated)} generated", known_total=len(state.known))
    )
    await _admit(env, state, samples)
    state.heads = [a.index for a in samples]
    note = note or test_note
    for round_ in range(1, knobs.max_rounds + 1):
        if note is not None or _stop_candidate(state) is not None:
            break
        note = await _refine_round(env, state, knobs, round_)
    if note is not None:
        return "budget", note
    return ("verified" if _stop_candidate(state) is not None else "max_iterations"), None


async def _admit(env: Env, state: _State, attempts: list[Attempt]) -> None:
    """Record new attempts and run each on every known test."""
    state.attempts.extend(attempts)
    visible = len(state.problem.visible_tests)
    passed = await pass_matrix(env, [a.code for a in attempts], state.known, visible, state.problem)
    for attempt, tests in zip(attempts, passed):
        state.passed[attempt.index] = tests


def _agreeing(state: _State, candidates: list[int]) -> tuple[list[int], int]:
    """The best dual-agreement group (on generated tests) among ``candidates``, as attempt indices in
    order, and how many generated tests that group passes."""
    agreement = dual_agreement([state.generated_passed(c) for c in candidates])
    best = agreement.best
    if best is None:
        return [], 0
    return [candidates[i] for i in best.members], len(best.passed)


def _stop_candidate(state: _State) -> int | None:
    """The earliest candidate meeting the stop rule (module docstring, 3), or None."""
    passing = [h for h in state.heads if state.passes_visible(h) and state.attempts[h].code is not None]
    group, generated_passed = _agreeing(state, passing)
    if not group:
        return None
    every_generated = generated_passed == len(state.known) - len(state.visible)
    return group[0] if state.visible or every_generated else None


async def _refine_round(env: Env, state: _State, knobs: Knobs, round_: int) -> str | None:
    """Refine the best failing candidates once each; the budget note if the budget ran out."""
    failing = [h for h in state.heads if len(state.passed[h]) < len(state.known)]
    chosen = sorted(failing, key=lambda h: (-len(state.passed[h]), h))[: knobs.refine_top]
    config = at_round(knobs.config, knobs.schedule, round_, knobs.max_rounds)
    requests: list[_Request] = []
    for h in chosen:
        given = await _feedback_for(env, state, h)
        index = len(state.attempts) + len(requests)
        reason = f"round {round_}: fails {len(state.known) - len(state.passed[h])} of {len(state.known)} known tests"
        state.decisions.append(Decision("refine", reason, h, None, len(state.passed[h]), len(state.known)))
        messages = _refine_messages(state.problem, state.attempts[h], given, knobs.prompts)
        requests.append(_Request(messages, config, "refine", index, given, sample=index, prompts=knobs.prompts))
    children, note = await concurrently(env, state.problem, requests)
    await _admit(env, state, children)
    for parent, child in zip(chosen, children):
        _guard(state, parent, child.index)
    return note


def _refine_messages(problem: Problem, parent: Attempt, given: str, prompts: Prompts) -> list[Message]:
    """The parent's code and its last execution feedback only: no earlier rounds, no critique."""
    return [
        Message.system(prompts.refine_system),
        Message.user(prompts.task(problem)),
        Message.user(prompts.refine(parent.code or parent.response, given)),
    ]


async def _feedback_for(env: Env, state: _State, attempt: int) -> str:
    """Execution feedback on the attempt's failing known tests: which, expected vs actual."""
    code = state.attempts[attempt].code
    failing = [t for i, t in enumerate(state.known) if i not in state.passed[attempt]]
    if code is None:
        return "No program could be read from the reply. Give the whole program in one ```python block."
    shown = failing[:FEEDBACK_FAILURES]
    problem = state.problem
    result = await env.sandbox.run(code, Suite.for_problem(problem, shown))
    details = feedback(replace(problem, visible_tests=tuple(shown)), result, "diff").split("\n", 1)
    head = f"{len(failing)} of {len(state.known)} tests failed; the first {len(shown)}:"
    return head + ("\n" + details[1] if len(details) > 1 else "")


def _guard(state: _State, parent: int, child: int) -> None:
    """Keep the refinement as its lineage's candidate, or discard it as a regression."""
    before, after, total = state.passed[parent], state.passed[child], len(state.known)
    broken = sorted((before - after) & state.visible)
    if state.attempts[child].code is None:
        reason = "no program could be read from the refinement"
    elif len(after) < len(before):
        reason = f"regression: passes {len(after)} of {total} known tests, its parent passed {len(before)}"
    elif broken:
        reason = f"regression: fails visible test(s) {broken} its parent passed"
    else:
        state.heads[state.heads.index(parent)] = child
        reason = f"passes {len(after)} of {total} known tests (its parent passed {len(before)})"
        state.decisions.append(Decision("keep", reason, child, parent, len(after), total))
        return
    state.decisions.append(Decision("discard", reason, child, parent, len(after), total))


async def _choose(env: Env, state: _State, knobs: Knobs, reason: StopReason) -> tuple[int, StopReason]:
    """The answer: the stop rule's candidate, else the best group among the candidates passing the most
    visible tests; a critic, if consulted, settles ties the tests cannot separate."""
    top = max(len(state.passed[h] & state.visible) for h in state.heads)
    pool = [h for h in state.heads if len(state.passed[h] & state.visible) == top]
    agreement = dual_agreement([state.generated_passed(c) for c in pool])
    state.decisions.extend(group_decisions_for(agreement, pool, len(state.known) - len(state.visible)))
    tied = _tied_leaders(agreement, pool)
    chosen = pool[agreement.chosen] if agreement.chosen is not None else state.heads[0]
    if knobs.consult_critic and len(tied) > 1:
        try:
            chosen = await _critic_tiebreak(env, state, knobs, tied)
        except BudgetExhausted as exc:
            state.decisions.append(Decision("critic", f"not consulted: budget {exc.reason}", members=tuple(tied)))
            reason = "budget"
    why = "meets the stop rule" if reason == "verified" else f"best available after stopping ({reason})"
    total = len(state.known)
    state.decisions.append(
        Decision("choose", f"{why}: passes {len(state.passed[chosen])} of {total} known tests", chosen, None,
                 len(state.passed[chosen]), total)
    )  # fmt: skip
    return chosen, reason


def group_decisions_for(agreement: Agreement, pool: list[int], total: int) -> list[Decision]:
    """The agreement groups with members as attempt indices."""
    return [replace(d, members=tuple(pool[i] for i in d.members)) for d in group_decisions(agreement, total)]


def _tied_leaders(agreement: Agreement, pool: list[int]) -> list[int]:
    """The earliest member of each group tied with the best one (the tests cannot separate them)."""
    tied = set(agreement.tied)
    return [pool[g.members[0]] for g in agreement.groups if g.members[0] in tied]


async def _critic_tiebreak(env: Env, state: _State, knobs: Knobs, tied: list[int]) -> int:
    """Ask the critic about each tied leader in rank order; the first it passes wins (else the first)."""
    loop = _CriticLoop(
        knobs.config,
        knobs.config,
        redraft=False,
        max_iters=0,
        ask_confidence=False,
        next_messages=lambda _: [],
        prompts=knobs.prompts,
    )
    for candidate in tied:
        state.attempts[candidate] = await _critique(env, state.problem, state.attempts[candidate], loop)
        critic = state.attempts[candidate].critic
        if critic is not None and critic.verdict == "pass":
            state.decisions.append(Decision("critic", "the critic passes it", candidate, members=tuple(tied)))
            return candidate
    state.decisions.append(
        Decision("critic", "the critic passes none; the earliest stays", tied[0], members=tuple(tied))
    )
    return tied[0]
