"""Stored trajectories as the metrics see them: every attempt with its hidden-test verdict.

The experiment store produces these; metrics are pure functions over them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names of closed sets only: metrics must not load the strategies (models, sandbox)
    from refinelab.strategies import Origin, StopReason, Suggestion


@dataclass(frozen=True)
class ScoredAttempt:
    """One attempt of a stored trajectory."""

    index: int
    """0 for the first attempt."""
    origin: Origin
    """draft, refine, redraft or sample."""
    hidden_passed: bool
    """Passed every hidden test (an attempt without code fails)."""
    visible_passed: bool | None = None
    """Passed every visible test, when the strategy ran them."""
    visible_pass_count: int = 0
    """Visible tests passed (0 when not run)."""
    critic_verdict: Suggestion | None = None
    """pass, refine or redraft; ``None`` when no critic saw it or its reply was unreadable."""
    prompt_tokens: int = 0
    """Prompt tokens of the actor and critic calls for this attempt."""
    actor_prompt_tokens: int = 0
    """Prompt tokens of the actor call alone (how memory policies grow the prompt)."""
    completion_tokens: int = 0
    """Completion tokens of those calls."""
    cost_usd: float | None = None
    """Their price; ``None`` when any price is unknown."""
    latency_seconds: float = 0.0
    """Their wall time."""
    confidence: float | None = None
    """The actor's stated confidence."""
    critic_confidence: float | None = None
    """The critic's stated confidence in its verdict."""

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
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
    test_tokens: int = 0
    """Tokens of the calls that wrote tests (``codet``, ``verified``); part of :attr:`tokens`."""
    test_cost_usd: float | None = 0.0
    """Their price; ``None`` when unknown."""
    generated_tests: int = 0
    """Tests the model wrote (valid, distinct within each reply)."""
    generated_correct: int | None = None
    """How many of them the problem's reference solution passes; ``None`` without a reference."""

    @property
    def passed(self) -> bool:
        """The returned attempt passed the hidden tests."""
        return self.final is not None and self.attempts[self.final].hidden_passed

    @property
    def tokens(self) -> int:
        """All tokens spent, test-writing calls included."""
        return sum(a.tokens for a in self.attempts) + self.test_tokens

    @property
    def cost_usd(self) -> float | None:
        """All dollars spent; ``None`` when any price is unknown."""
        costs = [a.cost_usd for a in self.attempts] + [self.test_cost_usd]
        return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)

    @property
    def latency_seconds(self) -> float:
        """Model time spent."""
        return sum(a.latency_seconds for a in self.attempts)

    @property
    def label(self) -> str:
        """``strategy(args) · actor / critic``."""
        return configuration_label(
            f"{self.strategy}({self.params})" if self.params else self.strategy, self.actor, self.critic
        )


def configuration_label(strategy: str, actor: str, critic: str | None) -> str:
    """How reports name a configuration: ``strategy(args) · actor / critic``."""
    models = actor if critic is None else f"{actor} / {critic}"
    return f"{strategy} · {models}"
