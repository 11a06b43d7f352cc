"""Records every layer shares: what a model call spent, and stored trajectories as the metrics see them.

This module sits low: it imports nothing from the sandbox, the models or the strategies, so
``import refinelab.metrics`` stays light. The rule for adding up what calls cost lives here, once:
:class:`Spend` adds tokens, and dollars stay ``None`` (unknown) as soon as any part is unknown, so a
report says "unknown", never a false ``$0.00`` (STYLE.md practice 8).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import KW_ONLY, dataclass, field, replace
from typing import Literal

EFFORT_ORDER = ("none", "minimal", "low", "medium", "high", "xhigh")
"""Reasoning effort levels, least thinking first (a thinking-token budget is written as a number instead)."""
Origin = Literal["draft", "refine", "redraft", "sample"]
"""How an attempt came about."""
Suggestion = Literal["pass", "refine", "redraft"]
"""What a critic suggests doing with an attempt."""
StopReason = Literal[
    "accepted",
    "visible_tests_passed",
    "max_iterations",
    "single_pass",
    "sampled",
    "budget",
    "critic_unreadable",
    "agreement",
    "verified",
    "interrupted",
    "no_tests",
]
"""Why a trajectory ended (``critic_unreadable``: the critic's reply could not be parsed; never guessed;
``agreement``: chosen by dual execution agreement; ``verified``: a candidate met ``verified``'s stopping
rule; ``interrupted``: cancelled or Ctrl-C, with the attempts made until then, as ``refinelab solve``
keeps them); ``no_tests``: ``exec-refine`` had no visible tests and wrote none it could run (or was
told not to write any), so its draft is the answer)."""


@dataclass(frozen=True)
class Usage:
    """Tokens used; adds up with ``+``."""

    prompt_tokens: int = 0
    """Input tokens."""
    completion_tokens: int = 0
    """Output tokens."""
    cached_tokens: int = 0
    """Input tokens the server served from its prompt cache (part of ``prompt_tokens``)."""
    estimated: bool = False
    """True when any of these counts was estimated because the server did not report it."""
    reasoning_tokens: int = 0
    """Output tokens the model spent thinking (part of ``completion_tokens``, billed as output): the server's
    ``completion_tokens_details.reasoning_tokens``, else counted from the reasoning text it returned."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
            self.estimated or other.estimated,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    def __sub__(self, other: Usage) -> Usage:
        """What is left of these tokens without ``other``'s (a part of them)."""
        return Usage(
            self.prompt_tokens - other.prompt_tokens,
            self.completion_tokens - other.completion_tokens,
            self.cached_tokens - other.cached_tokens,
            self.estimated,
            self.reasoning_tokens - other.reasoning_tokens,
        )

    @property
    def visible_tokens(self) -> int:
        """Output tokens of the answer itself (completion tokens less the thinking ones)."""
        return self.completion_tokens - self.reasoning_tokens

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Spend:
    """What model calls spent: tokens, and dollars that may be unknown.

    ``Spend()`` is nothing spent (zero tokens, $0). Adding keeps an unknown price unknown:
    ``Spend(u, None) + Spend(v, 0.5)`` costs ``None``.
    """

    usage: Usage = field(default_factory=Usage)
    """Tokens."""
    cost_usd: float | None = 0.0
    """Dollars; ``None`` when any call's price is unknown."""

    def __add__(self, other: Spend) -> Spend:
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return Spend(self.usage + other.usage, cost)

    def __sub__(self, other: Spend) -> Spend:
        """What is left without ``other`` (a part of this spend); dollars stay unknown if either is."""
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd - other.cost_usd
        return Spend(self.usage - other.usage, cost)

    @staticmethod
    def total(spends: Iterable[Spend]) -> Spend:
        """The sum of ``spends``, added in order (``Spend()`` for none)."""
        found = Spend()
        for spend in spends:
            found += spend
        return found


def total_cost(costs: Iterable[float | None]) -> float | None:
    """Dollars of several calls, ``None`` when any is unknown (the :class:`Spend` rule, for bare costs)."""
    return Spend.total(Spend(cost_usd=cost) for cost in costs).cost_usd


@dataclass(frozen=True)
class ScoredAttempt:
    """One attempt of a stored trajectory, with its hidden-test verdict (what the metrics read)."""

    index: int
    """0 for the first attempt."""
    origin: Origin
    """draft, refine, redraft or sample."""
    hidden_passed: bool
    """Passed every hidden test (an attempt without code fails)."""
    _: KW_ONLY
    visible_passed: bool | None = None
    """Passed every visible test, when the strategy ran them."""
    visible_pass_count: int = 0
    """Visible tests passed (0 when not run)."""
    critic_verdict: Suggestion | None = None
    """pass, refine or redraft; ``None`` when no critic saw it or its reply was unreadable."""
    spend: Spend = field(default_factory=lambda: Spend(cost_usd=None))
    """Tokens and dollars of the actor and critic calls for this attempt (dollars unknown by default)."""
    actor_prompt_tokens: int = 0
    """Prompt tokens of the actor call alone (how memory policies grow the prompt)."""
    latency_seconds: float = 0.0
    """Wall time of the actor and critic calls."""
    confidence: float | None = None
    """The actor's stated confidence."""
    critic_confidence: float | None = None
    """The critic's stated confidence in its verdict."""
    critic_spend: Spend = field(default_factory=Spend)
    """The critic call's part of :attr:`spend` (nothing without a critic call)."""
    critic_latency_seconds: float = 0.0
    """The critic call's part of :attr:`latency_seconds`."""
    not_sent: tuple[str, ...] = ()
    """Settings the actor call asked for that the model does not take and were not sent (``temperature=0.0``):
    the reply was sampled as the model samples, not as the strategy asked."""
    critic_not_sent: tuple[str, ...] = ()
    """The same for the critic call."""

    def without_critic(self) -> ScoredAttempt:
        """This attempt as if the critic had not been asked about it (its call, verdict and time gone)."""
        return replace(
            self,
            critic_verdict=None,
            critic_confidence=None,
            spend=self.spend - self.critic_spend,
            critic_spend=Spend(),
            latency_seconds=self.latency_seconds - self.critic_latency_seconds,
            critic_latency_seconds=0.0,
            critic_not_sent=(),
        )

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens of the actor and critic calls for this attempt."""
        return self.spend.usage.prompt_tokens

    @property
    def completion_tokens(self) -> int:
        """Completion tokens of those calls."""
        return self.spend.usage.completion_tokens

    @property
    def cost_usd(self) -> float | None:
        """Their price; ``None`` when any price is unknown."""
        return self.spend.cost_usd

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    @property
    def reasoning_tokens(self) -> int:
        """Thinking tokens of the actor and critic calls (part of :attr:`completion_tokens`)."""
        return self.spend.usage.reasoning_tokens


@dataclass(frozen=True, kw_only=True)
class ScoredTrajectory:
    """One strategy run on one problem, scored."""

    config: str
    """Configuration key (strategy, arguments, actor, critic)."""
    strategy: str
    """Strategy name."""
    params: str
    """Strategy arguments as written (``max_iters=3, ...``)."""
    actor: str
    """Actor model."""
    critic: str | None
    """Critic model, for critic strategies."""
    problem: str
    """``benchmark/problem_id``."""
    repeat: int
    """Repetition number."""
    attempts: tuple[ScoredAttempt, ...]
    """Every attempt, in order."""
    final: int | None
    """The attempt returned as the answer."""
    stop_reason: StopReason
    """Why the strategy stopped."""
    test_spend: Spend = field(default_factory=Spend)
    """What the calls that wrote tests (``codet``, ``verified``) spent; part of :attr:`spend` (an unknown
    price there makes :attr:`cost_usd` unknown too)."""
    generated_tests: int = 0
    """Tests the model wrote (valid, distinct within each reply)."""
    generated_correct: int | None = None
    """How many of them the problem's reference solution passes; ``None`` without a reference."""
    critique_last: bool | None = None
    """Whether a critic strategy asked its critic about the attempt at the iteration cap, as it recorded
    it; ``None`` when it recorded nothing (not a critic strategy, or a run from before Self-Refine's loop
    ended at the last refinement, which always asked)."""
    effort: str | None = None
    """The reasoning effort the configuration asked of its actor (``low``, ``high``, a thinking-token budget);
    ``None`` when it set none (the model's default)."""
    critic_effort: str | None = None
    """The reasoning effort asked of its critic; ``None`` when none was set."""

    @property
    def passed(self) -> bool:
        """The returned attempt passed the hidden tests."""
        return self.final is not None and self.attempts[self.final].hidden_passed

    @property
    def spend(self) -> Spend:
        """Tokens and dollars of every call: the attempts' (actor and critic), then the test-writing ones."""
        return Spend.total(a.spend for a in self.attempts) + self.test_spend

    @property
    def test_tokens(self) -> int:
        """Tokens of the test-writing calls."""
        return self.test_spend.usage.total_tokens

    @property
    def tokens(self) -> int:
        """All tokens spent, test-writing calls included."""
        return self.spend.usage.total_tokens

    @property
    def cost_usd(self) -> float | None:
        """All dollars spent; ``None`` when any price is unknown."""
        return self.spend.cost_usd

    @property
    def latency_seconds(self) -> float:
        """Model time spent."""
        return sum(a.latency_seconds for a in self.attempts)

    @property
    def reasoning_tokens(self) -> int:
        """Thinking tokens of every call (part of :attr:`tokens`)."""
        return self.spend.usage.reasoning_tokens

    @property
    def actor_at(self) -> tuple[str, str | None]:
        """The actor and the effort it was asked for: what single pass, sampling and a refinement strategy must
        share to be compared as "the same model" (another effort is another arm of the experiment)."""
        return self.actor, self.effort

    @property
    def label(self) -> str:
        """``strategy(args) · actor / critic``, then the effort when one was set."""
        strategy = f"{self.strategy}({self.params})" if self.params else self.strategy
        return configuration_label(strategy, self.actor, self.critic, self.effort, self.critic_effort)


def configuration_label(
    strategy: str, actor: str, critic: str | None, effort: str | None = None, critic_effort: str | None = None
) -> str:
    """How reports name a configuration: ``strategy(args) · actor / critic``, with ``· effort LEVEL`` when an
    effort was set (``· effort LEVEL / critic LEVEL`` when the critic's differs). A configuration without an
    effort keeps the label it always had."""
    models = actor if critic is None else f"{actor} / {critic}"
    return f"{strategy} · {models}{effort_suffix(effort, critic_effort if critic is not None else effort)}"


def effort_suffix(effort: str | None, critic_effort: str | None) -> str:
    """`` · effort low`` (`` · effort low / critic high`` when the critic's differs; ``default`` names the
    model's own); "" without an effort."""
    if effort is None and critic_effort is None:
        return ""
    critic = f" / critic {critic_effort or 'default'}" if critic_effort != effort else ""
    return f" · effort {effort or 'default'}{critic}"
