"""What a strategy is handed: generate with a role, run code on visible tests, and a budget.

Strategies never build clients; swapping a model or a sandbox never touches a strategy.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Annotated, Literal

from annotated_types import Ge, Gt

from refinelab._validate import problem_with, type_hints
from refinelab.errors import BudgetExhausted as BudgetExhausted  # part of the error tree; strategies name it here
from refinelab.errors import UserError
from refinelab.models import Completion, GenerateConfig, Message, Model
from refinelab.problems import Problem
from refinelab.records import Spend, Usage
from refinelab.sandbox import Limits, RunResult, Sandbox, Suite
from refinelab.verification import agreement_limits

Role = Literal["actor", "critic"]
REPEAT_STRIDE = 1_000_000
"""Sample indices of repeat ``r`` start at ``r * REPEAT_STRIDE`` (a strategy's own samples stay below it)."""


@dataclass(frozen=True)
class Budget:
    """Limits per problem, checked before every call; ``None`` means no limit."""

    max_calls: Annotated[int, Ge(1)] | None = None
    """Model calls (actor and critic)."""
    max_tokens: Annotated[int, Ge(1)] | None = None
    """Prompt plus completion tokens."""
    max_cost_usd: Annotated[float, Gt(0)] | None = None
    """Dollars; calls with an unknown price count as unknown, so this limit stops them too."""

    def __post_init__(self) -> None:
        for name, hint in type_hints(Budget).items():
            problem = problem_with(getattr(self, name), hint)
            if problem is not None:
                raise UserError(f"budget {name}={getattr(self, name)!r}: {problem}")


@dataclass
class Spent:
    """What one problem has used so far."""

    calls: int = 0
    """Model calls made."""
    spend: Spend = field(default_factory=Spend)
    """Their tokens and dollars (dollars ``None`` once any price was unknown)."""

    @property
    def usage(self) -> Usage:
        """Tokens of the calls."""
        return self.spend.usage

    @property
    def cost_usd(self) -> float | None:
        """Dollars of the calls; ``None`` once any price was unknown."""
        return self.spend.cost_usd


@dataclass(frozen=True)
class Efforts:
    """The reasoning effort of each role's calls (``None``: the model's default); part of a configuration."""

    actor: str | None = None
    """The actor's (and the test-writing calls')."""
    critic: str | None = None
    """The critic's."""

    def of(self, role: Role) -> str | None:
        """The effort of ``role``'s calls."""
        return self.actor if role == "actor" else self.critic


@dataclass(frozen=True)
class Samples:
    """What :meth:`Env.generate_n` drew: the samples, in sample order, and why there are fewer than asked."""

    completions: tuple[Completion, ...]
    """The samples drawn (the first ones asked for: sample indices ``first_sample`` upwards)."""
    refused: str | None = None
    """The budget limit that refused the rest (``None`` when every sample was drawn)."""


class Env:
    """The capabilities a strategy gets for one problem."""

    def __init__(
        self,
        actor: Model,
        sandbox: Sandbox,
        *,
        critic: Model | None = None,
        budget: Budget | None = None,
        repeat: int = 0,
        agreement: Limits | None = None,
    ) -> None:
        self.actor = actor
        self.critic = critic or actor
        self.sandbox = sandbox
        self.budget = budget or Budget()
        self.spent = Spent()
        self._in_flight = 0
        self._settled = asyncio.Condition()
        self.agreement = agreement or agreement_limits()
        """Limits of generated tests in dual agreement (CodeT's 0.1 s each by default; a problem's own tests
        joined to them keep the sandbox's)."""
        self._visible_runs: dict[tuple[str, int], asyncio.Task[RunResult]] = {}
        self._visible_suites: dict[int, tuple[Problem, Suite]] = {}  # by id(problem), the problem kept alive
        self.repeat = repeat
        """Which repetition of the same problem and configuration this is: repeats are distinct samples
        (their own cache entries), so a repeated run is a new draw, not a cache hit."""
        self.on_attempt: Callable[[str], None] | None = None
        """Told each attempt's program as soon as it exists (``run`` starts its hidden scoring then)."""
        self.efforts = Efforts()
        """The reasoning effort every call of each role asks for (over the strategy's own settings), set by
        whoever runs the strategy (a configuration's efforts): strategies stay unaware of it, and it joins each
        request's cache key."""

    def attempted(self, code: str) -> None:
        """Say that an attempt's program exists (strategies call it as soon as they have the code): ``run``
        starts scoring it on the hidden tests at once, beside its visible tests, so a looping program's
        limits overlap instead of adding up. The strategy never sees that result."""
        if self.on_attempt is not None:
            self.on_attempt(code)

    def _with_effort(self, role: Role, config: GenerateConfig) -> GenerateConfig:
        effort = self.efforts.of(role)
        return config if effort is None else replace(config, reasoning_effort=effort)

    def check_budget(self) -> None:
        """Raise :class:`BudgetExhausted` if the next call would go over a limit (calls in flight count as
        made)."""
        budget, spent = self.budget, self.spent
        if budget.max_calls is not None and spent.calls + self._in_flight >= budget.max_calls:
            raise BudgetExhausted(f"max_calls={budget.max_calls}")
        if budget.max_tokens is not None and spent.usage.total_tokens >= budget.max_tokens:
            raise BudgetExhausted(f"max_tokens={budget.max_tokens}")
        if budget.max_cost_usd is not None and (spent.cost_usd is None or spent.cost_usd >= budget.max_cost_usd):
            raise BudgetExhausted(f"max_cost_usd={budget.max_cost_usd}")

    async def generate(
        self, role: Role, messages: Sequence[Message], config: GenerateConfig, *, sample: int = 0
    ) -> Completion:
        """One call to the actor or the critic, after checking the budget.

        Concurrent calls are safe: a call reserves its place in ``max_calls`` before it starts; under a
        token or cost limit, whose next spending is unknown until a reply arrives, a call waits for the
        calls in flight to settle and is checked against everything they spent (so concurrency never
        overspends, and callers started in order are served in order).
        """
        return await self._one(role, messages, config, sample)

    async def generate_n(
        self, role: Role, messages: Sequence[Message], config: GenerateConfig, *, n: int, first_sample: int = 0
    ) -> Samples:
        """``n`` samples of one request (indices ``first_sample`` ...), drawn with one request where the
        server allows ``n`` (:meth:`Model.generate_n`); each is its own call in the budget and the
        trajectory, and has the cache key, text and numbers ``generate(..., sample=i)`` would give it.

        The budget: ``n`` calls are reserved against ``max_calls`` at once; when fewer remain, the request
        shrinks to the first samples that fit and ``refused`` names the limit (as ``n`` separate calls
        started in order would end: the first ones made, the rest refused). Under a token or cost limit,
        which a reply can cross, the samples are drawn one call at a time exactly as :meth:`generate` draws
        them, so a limit is never overspent by a batch. Never raises :class:`BudgetExhausted`.

        Each sample's usage and cost are its share of the request's (a server reports one usage block per
        request: the prompt once, the completions summed; it is divided evenly, the remainder to the first
        samples), so the samples add up to exactly what the request cost, never more; each sample's latency
        is the request's wall time (docs/design/models.md, "Several samples in one request").
        """
        if n < 1:
            return Samples(())
        if self.budget.max_tokens is not None or self.budget.max_cost_usd is not None:
            return await self._one_by_one(role, messages, config, n, first_sample)
        allowed, refused = await self._reserve_n(n)
        if allowed == 0:
            return Samples((), refused)
        model = self.actor if role == "actor" else self.critic
        completions: list[Completion] = []
        try:
            first = first_sample + self.repeat * REPEAT_STRIDE
            config = self._with_effort(role, config)
            completions = await model.generate_n(messages, config, n=allowed, first_sample=first)
            return Samples(tuple(completions), refused)
        finally:
            async with self._settled:
                for completion in completions:
                    self._account(completion)
                self._in_flight -= allowed
                self._settled.notify_all()

    async def _one(self, role: Role, messages: Sequence[Message], config: GenerateConfig, sample: int) -> Completion:
        await self._reserve()
        model = self.actor if role == "actor" else self.critic
        completion: Completion | None = None
        try:
            config = self._with_effort(role, config)
            completion = await model.generate(messages, config, sample=sample + self.repeat * REPEAT_STRIDE)
            return completion
        finally:
            async with self._settled:  # spending is recorded before the reservation is released
                if completion is not None:
                    self._account(completion)
                self._in_flight -= 1
                self._settled.notify_all()

    async def _one_by_one(
        self, role: Role, messages: Sequence[Message], config: GenerateConfig, n: int, first_sample: int
    ) -> Samples:
        """``n`` calls as :meth:`generate` makes them, concurrently (the budget serves them in order): the
        samples made before the first refusal, and its reason."""
        calls = (self._one(role, messages, config, first_sample + i) for i in range(n))
        results = await asyncio.gather(*calls, return_exceptions=True)
        failed = [r for r in results if isinstance(r, BaseException) and not isinstance(r, BudgetExhausted)]
        if failed:
            raise failed[0]
        completions: list[Completion] = []
        for result in results:
            if isinstance(result, BudgetExhausted):
                return Samples(tuple(completions), result.reason)
            assert not isinstance(result, BaseException)
            completions.append(result)
        return Samples(tuple(completions))

    def _account(self, completion: Completion) -> None:
        self.spent.calls += 1
        self.spent.spend += completion.spend

    async def _reserve(self) -> None:
        """Wait until the budget can be judged, check it, and count this call as in flight."""
        async with self._settled:
            if self.budget.max_tokens is not None or self.budget.max_cost_usd is not None:
                await self._settled.wait_for(lambda: self._in_flight == 0)
            self.check_budget()
            self._in_flight += 1

    async def _reserve_n(self, n: int) -> tuple[int, str | None]:
        """Reserve up to ``n`` calls against ``max_calls`` (no token or cost limit is set): how many, and the
        limit that refused the rest."""
        async with self._settled:
            try:
                self.check_budget()
            except BudgetExhausted as exc:
                return 0, exc.reason
            limit = self.budget.max_calls
            left = n if limit is None else min(n, limit - self.spent.calls - self._in_flight)
            self._in_flight += left
            return left, (None if left == n else f"max_calls={limit}")

    async def execute(self, code: str, problem: Problem) -> RunResult:
        """Run a program on the problem's visible tests (never the hidden ones).

        A program already run on the same tests for this problem is not run again: its result is shared
        (samples repeat one another often, and a wrong one looping on a test would cost the full limit,
        and its confirming rerun, every time). A run that failed in the sandbox is retried."""
        if id(problem) not in self._visible_suites:
            self._visible_suites[id(problem)] = (problem, Suite.visible(problem))
        suite = self._visible_suites[id(problem)][1]
        key = (code, id(problem))
        task = self._visible_runs.get(key)
        if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
            task = asyncio.ensure_future(self.sandbox.run(code, suite))
            task.add_done_callback(_retrieved)
            self._visible_runs[key] = task
        return await asyncio.shield(task)


def _retrieved(task: asyncio.Task[RunResult]) -> None:
    """Mark a shared run's failure as seen (whoever awaits it gets it; nobody may be left to)."""
    if not task.cancelled():
        task.exception()
