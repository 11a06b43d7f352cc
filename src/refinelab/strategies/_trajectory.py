"""Trajectories: every attempt a strategy made, in order, with what produced it and how it fared.

Strategies only ever see visible tests; the experiment runner scores every attempt on the hidden tests
afterwards, so per-iteration pass rates and regressions fall out of stored trajectories.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from refinelab.models import Completion, NotSent
from refinelab.problems import Problem, Test
from refinelab.records import Origin as Origin  # re-exported for the strategies
from refinelab.records import Spend, Usage
from refinelab.records import StopReason as StopReason
from refinelab.sandbox import RunResult
from refinelab.verification import GeneratedTests, parse_tests

Verdict = Literal["pass", "refine", "redraft"]
"""A critic's decision (Self-Refine critics say pass or refine)."""
SCHEMA_VERSION = 2
"""2: ``generations`` and ``decisions`` (selecting strategies)."""


@dataclass(frozen=True)
class CriticOutput:
    """What the critic said about an attempt."""

    raw: str
    """The critic's reply as written."""
    verdict: Verdict | None
    """The decision; ``None`` when the reply could not be parsed (see ``parse_error``)."""
    critique: str
    """The critique text."""
    parse_error: str | None = None
    """Why the reply could not be read, if it could not."""
    confidence: float | None = None
    """The critic's stated confidence, when asked for."""
    usage: Usage = field(default_factory=Usage)
    """Tokens the critique cost."""
    latency_seconds: float = 0.0
    """Wall time of the critic call."""
    cost_usd: float | None = None
    """Price of the critic call; ``None`` when unknown."""
    cached: bool = False
    """True when the reply came from the response cache."""
    reasoning: str | None = None
    """The critic's thinking, where its server returned it (the verdict is read from ``raw``, the answer)."""
    not_sent: tuple[NotSent, ...] = ()
    """Settings the critic call asked for that were not sent to the model."""

    @property
    def spend(self) -> Spend:
        """Tokens and dollars of the critic call."""
        return Spend(self.usage, self.cost_usd)


@dataclass(frozen=True)
class Attempt:
    """One program the actor produced."""

    index: int
    """0 for the first attempt."""
    origin: Origin
    """draft, refine, redraft or sample."""
    code: str | None
    """The extracted program; ``None`` when no code could be extracted (``parse_error`` says why)."""
    response: str
    """The actor's reply as written."""
    usage: Usage
    """Tokens of the actor call (``usage.prompt_tokens`` shows how memory policies grow the prompt)."""
    latency_seconds: float
    """Wall time of the actor call."""
    feedback: str | None = None
    """The feedback the actor was given to produce this attempt (None for a draft or a sample)."""
    parse_error: str | None = None
    """Why no code could be extracted, if none could."""
    confidence: float | None = None
    """The actor's stated confidence, when asked for."""
    visible: RunResult | None = None
    """The attempt's result on the visible tests, when the strategy ran them."""
    critic: CriticOutput | None = None
    """The critic's view of this attempt, when a critic was consulted."""
    cost_usd: float | None = None
    """Price of the actor call; ``None`` when unknown."""
    cached: bool = False
    """True when the actor's reply came from the response cache."""
    reasoning: str | None = None
    """The actor's thinking, where its server returned it (the code is read from ``response``, the answer)."""
    not_sent: tuple[NotSent, ...] = ()
    """Settings the actor call asked for that were not sent to the model (``temperature=0.0`` to a model that
    samples only at 1)."""

    @property
    def spend(self) -> Spend:
        """Tokens and dollars of the actor call."""
        return Spend(self.usage, self.cost_usd)


@dataclass(frozen=True)
class TestGeneration:
    """One model call that wrote tests for the problem, and what was read from it."""

    raw: str
    """The reply as written."""
    tests: tuple[Test, ...]
    """The valid, distinct tests read from it, in reply order."""
    rejected: tuple[str, ...]
    """Why each rejected piece was rejected (unparsable, does not call the entry point, duplicate...)."""
    usage: Usage
    """Tokens of the call (they count in the trajectory's usage and in the budget)."""
    latency_seconds: float
    """Wall time of the call."""
    cost_usd: float | None = None
    """Price of the call; ``None`` when unknown."""
    cached: bool = False
    """True when the reply came from the response cache."""
    reference_passed: tuple[bool, ...] | None = None
    """For each test, whether the problem's reference solution passes it (filled in by the experiment
    runner when the problem ships a reference; never seen by the strategy)."""

    @property
    def spend(self) -> Spend:
        """Tokens and dollars of the call."""
        return Spend(self.usage, self.cost_usd)

    @classmethod
    def of_reply(cls, completion: Completion, problem: Problem, parsed: GeneratedTests | None = None) -> TestGeneration:
        """A test-writing call's reply (to :func:`refinelab.verification.test_request`) and the tests read
        from it (:func:`refinelab.verification.parse_tests`; ``parsed`` when they were read already)."""
        parsed = parsed or parse_tests(completion.text, problem)
        return cls(
            raw=completion.text,
            tests=parsed.tests,
            rejected=tuple(r.reason for r in parsed.rejected),
            usage=completion.usage,
            latency_seconds=completion.latency_seconds,
            cost_usd=completion.cost_usd,
            cached=completion.cached,
        )


DecisionKind = Literal["tests", "group", "refine", "keep", "discard", "critic", "choose"]
"""What a selecting strategy decided: which tests it judged by (``tests``), how programs grouped by the
tests they pass (``group``), which candidate it refined (``refine``), whether a refinement was kept
(``keep``) or discarded by the regression guard (``discard``), what the critic settled (``critic``), and
which program it returned (``choose``)."""


@dataclass(frozen=True)
class Decision:
    """One decision of a selecting strategy, with the evidence it rested on."""

    kind: DecisionKind
    """What was decided."""
    reason: str
    """Why, in words (the report shows it)."""
    attempt: int | None = None
    """The attempt it concerns (the refined, kept, discarded or chosen one)."""
    parent: int | None = None
    """For ``keep``/``discard``: the attempt the refinement started from."""
    known_passed: int | None = None
    """Known tests (visible plus generated) the attempt passes."""
    known_total: int | None = None
    """Known tests in all."""
    members: tuple[int, ...] = ()
    """For ``group``: the attempts in the group; for ``critic``: the candidates it was asked about."""


@dataclass(frozen=True)
class Trajectory:
    """A strategy's whole run on one problem."""

    problem_id: str
    """The problem."""
    strategy: str
    """Registered strategy name."""
    params: dict[str, object]
    """The arguments it ran with."""
    attempts: tuple[Attempt, ...]
    """Every attempt, in order."""
    final: int | None
    """Index of the attempt the strategy returns as its answer (None if it produced none)."""
    stop_reason: StopReason
    """Why it stopped."""
    budget_note: str | None = None
    """Which budget ran out, when ``stop_reason`` is ``budget``."""
    generations: tuple[TestGeneration, ...] = ()
    """Calls that wrote tests (``codet``, ``verified``), in order."""
    decisions: tuple[Decision, ...] = ()
    """Why a selecting strategy refined, discarded and chose what it did, in order."""
    schema_version: int = SCHEMA_VERSION
    """Version of this record's layout."""

    @property
    def final_attempt(self) -> Attempt | None:
        """The returned attempt."""
        return None if self.final is None else self.attempts[self.final]

    @property
    def spend(self) -> Spend:
        """Tokens and dollars of every actor call, then every critic call, then every test-writing call."""
        critics = [a.critic.spend for a in self.attempts if a.critic is not None]
        return Spend.total([*(a.spend for a in self.attempts), *critics, *(g.spend for g in self.generations)])

    @property
    def cost_usd(self) -> float | None:
        """Dollars of every call; ``None`` when any price is unknown."""
        return self.spend.cost_usd

    @property
    def usage(self) -> Usage:
        """Tokens of every actor, critic and test-writing call."""
        return self.spend.usage
