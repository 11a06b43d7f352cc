"""The report's section on reasoning: think longer vs refine vs sample at equal tokens.

Each (strategy x effort) configuration's mean tokens per problem (prompt, answer and thinking; actor, critic
and test-writing calls) against its pass@1, both with 95% intervals, and the Pareto frontier; effort levels of
one strategy paired by problem, with the problems a higher effort got wrong that a lower one got right
("overthinking", counted as regressions are); and the settings a request asked for that its model does not
take and were not sent. Shown only for runs with an effort, with thinking, or with a setting not sent, so
other runs' reports read as they always did.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from refinelab.metrics import (
    EffortComparison,
    Interval,
    ScoredTrajectory,
    TokenPoint,
    effort_comparisons,
    token_points,
)
from refinelab.report._baseline import difference_text
from refinelab.report._table import Table


@dataclass(frozen=True)
class NotSentCount:
    """A setting one configuration asked for that was not sent, and how often."""

    label: str
    """The configuration."""
    role: str
    """``actor`` or ``critic``."""
    setting: str
    """What was not sent and why (``temperature=0.0: openai:o4-mini samples only at temperature 1 ...``)."""
    calls: int
    """Calls it was left out of."""
    of: int
    """Calls of that role in all."""


@dataclass(frozen=True)
class EffortSection:
    """Everything the section shows."""

    points: tuple[TokenPoint, ...] = ()
    """Every configuration on the tokens-against-pass@1 plane."""
    comparisons: tuple[EffortComparison, ...] = ()
    """Effort levels of one strategy, lower against higher."""
    not_sent: tuple[NotSentCount, ...] = ()
    """Settings asked for and not sent, per configuration and role."""

    @property
    def shown(self) -> bool:
        """The run has something for the section to show."""
        return bool(self.points)


def effort_section(groups: Mapping[str, Sequence[ScoredTrajectory]]) -> EffortSection:
    """The section of a run's configurations (empty when no configuration has an effort, thinking tokens or
    a setting not sent)."""
    ordered = [g for g in groups.values() if g]
    not_sent = tuple(count for group in ordered for count in _not_sent(group))
    thinking = any(t.reasoning_tokens or t.effort is not None for group in ordered for t in group)
    if not (thinking or not_sent):
        return EffortSection()
    return EffortSection(token_points(ordered), effort_comparisons(ordered), not_sent)


def _not_sent(group: Sequence[ScoredTrajectory]) -> list[NotSentCount]:
    actor: Counter[str] = Counter()
    critic: Counter[str] = Counter()
    calls = judged = 0
    for attempt in (a for t in group for a in t.attempts):
        calls += 1
        judged += attempt.critic_verdict is not None or bool(attempt.critic_spend.usage.total_tokens)
        actor.update(attempt.not_sent)
        critic.update(attempt.critic_not_sent)
    label = group[0].label
    return [NotSentCount(label, "actor", s, n, calls) for s, n in actor.items()] + [
        NotSentCount(label, "critic", s, n, judged) for s, n in critic.items()
    ]


def effort_tables(section: EffortSection) -> list[Table]:
    """The section as terminal tables (none when there is nothing to show)."""
    if not section.shown:
        return []
    found = [_points(section.points)]
    if section.comparisons:
        found.append(_comparisons(section.comparisons))
    if section.not_sent:
        found.append(_not_sent_table(section.not_sent))
    return found


def _interval(value: Interval, percent: bool) -> str:
    scale, digits = (100.0, ".1f") if percent else (1.0, ",.0f")
    return f"{scale * value.value:{digits}} [{scale * value.low:{digits}}, {scale * value.high:{digits}}]"


def _points(points: Sequence[TokenPoint]) -> Table:
    header = ["configuration", "n", "tokens/task [95% CI]", "prompt", "answer", "thinking", "pass@1 [95% CI]"]
    header.append("frontier")
    body = [
        [p.label, str(p.trajectories), _interval(p.tokens, False), f"{p.prompt:,.0f}", f"{p.visible:,.0f}",
         f"{p.thinking:,.0f}", _interval(p.pass_at_1, True), "*" if p.frontier else ""]
        for p in points
    ]  # fmt: skip
    title = (
        "Tokens against pass@1 per configuration (prompt + answer + thinking; actor, critic and test-writing calls; "
        "* = Pareto frontier: nothing uses fewer tokens and passes as often)"
    )
    return Table(title, header, body)


def _comparisons(comparisons: Sequence[EffortComparison]) -> Table:
    header = ["higher effort", "vs lower effort", "pairs", "only lower", "only higher", "McNemar p"]
    header += ["difference [95% CI]", "overthinking"]
    body = []
    for c in comparisons:
        paired = c.paired
        pairs = str(paired.pairs) + (f" ({len(paired.unpaired_a) + len(paired.unpaired_b)} unpaired)" if
                                     paired.unpaired_a or paired.unpaired_b else "")  # fmt: skip
        overthought = ", ".join(_case(*key) for key in c.overthinking[:5]) + (" ..." if len(c.overthinking) > 5 else "")
        body.append([c.higher, c.lower, pairs, str(paired.only_a), str(paired.only_b), f"{paired.p_value:.3g}",
                     difference_text(paired.difference), f"{len(c.overthinking)}" + (f": {overthought}" if overthought
                                                                                      else "")])  # fmt: skip
    title = (
        "Effort levels of one strategy, paired by problem (exact McNemar; bootstrap interval of higher - lower); "
        "overthinking: solved at the lower effort, wrong at the higher"
    )
    return Table(title, header, body)


def _case(problem: str, repeat: int) -> str:
    """A (problem, repeat) as the table names it: the problem, with ``#repeat`` after the first repeat."""
    return problem if repeat == 0 else f"{problem}#{repeat}"


def _not_sent_table(counts: Sequence[NotSentCount]) -> Table:
    header = ["configuration", "role", "calls", "not sent (why)"]
    body = [[c.label, c.role, f"{c.calls}/{c.of}", c.setting] for c in counts]
    title = "Settings asked for but not sent (the model does not take them: its replies are what it gives without)"
    return Table(title, header, body)
