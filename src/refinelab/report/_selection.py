"""The report's section on selecting strategies (those registered with ``selects``: ``codet``,
``verified``): generated-test accuracy, selection accuracy, and a selecting strategy that also refines
(``verified``) against those that only refine, at equal tokens (against sampling it appears in the
sampling-at-equal-tokens table). Which strategy is which is read from its registry record's traits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from refinelab.metrics import (
    AtEqualTokens,
    Rate,
    ScoredTrajectory,
    generated_test_accuracy,
    refinement_at_equal_tokens,
    selection_accuracy,
)
from refinelab.report._table import Table
from refinelab.strategies import Traits, strategy_traits


@dataclass(frozen=True)
class SelectionRow:
    """One selecting configuration's measures."""

    label: str
    """The configuration."""
    test_accuracy: Rate
    """Generated tests its problems' reference solutions pass (problems with a reference)."""
    generated_per_problem: float
    """Generated tests per problem, on average."""
    selection: Rate
    """Chosen program passes, of the problems where any candidate passes."""


@dataclass(frozen=True)
class SelectionSection:
    """Everything the section shows."""

    rows: tuple[SelectionRow, ...] = ()
    """One per selecting configuration."""
    against: tuple[tuple[str, str, AtEqualTokens], ...] = ()
    """(verified, iterative strategy, numbers) for each pair with the same actor."""


def selection_section(groups: Mapping[str, Sequence[ScoredTrajectory]]) -> SelectionSection:
    """The section's numbers for a run's configurations (empty when it ran no selecting strategy)."""
    rows = tuple(_row(group) for group in groups.values() if group and _traits(group).selects)
    pairs = []
    for mine in (g for g in groups.values() if g and _refines_and_selects(_traits(g))):
        iterative = (g for g in groups.values() if g and _traits(g).iterates and not _traits(g).selects)
        for other in (g for g in iterative if g[0].actor_at == mine[0].actor_at):
            result = refinement_at_equal_tokens(mine, other)
            if result is not None:
                pairs.append((mine[0].label, other[0].label, result))
    return SelectionSection(rows, tuple(pairs))


def _traits(group: Sequence[ScoredTrajectory]) -> Traits:
    return strategy_traits(group[0].strategy)


def _refines_and_selects(traits: Traits) -> bool:
    """A strategy that selects and refines (``verified``): compared with those that only refine."""
    return traits.selects and traits.iterates


def _row(group: Sequence[ScoredTrajectory]) -> SelectionRow:
    generated = sum(t.generated_tests for t in group) / len(group)
    return SelectionRow(group[0].label, generated_test_accuracy(group), generated, selection_accuracy(group))


def _rate(rate: Rate) -> str:
    return "–" if rate.value is None else f"{100 * rate.value:.1f}% ({rate.count}/{rate.of})"


def selection_tables(section: SelectionSection) -> list[Table]:
    """The section as terminal tables (none when there is nothing to show)."""
    found: list[Table] = []
    if section.rows:
        header = ["configuration", "tests/problem", "test accuracy", "selection accuracy"]
        body = [
            [r.label, f"{r.generated_per_problem:.1f}", _rate(r.test_accuracy), _rate(r.selection)]
            for r in section.rows
        ]
        title = "Generated tests (share the reference passes) and selection (chosen passes, where any candidate does)"
        found.append(Table(title, header, body))
    if section.against:
        header = ["verified", "refinement", "problems", "verified pass", "refinement pass", "tokens", "its tokens"]
        body = [
            [a, b, str(e.problems), f"{100 * e.reference:.1f}%", f"{100 * e.other:.1f}%",
             f"{e.reference_tokens:.0f}", f"{e.other_tokens:.0f}"]
            for a, b, e in section.against
        ]  # fmt: skip
        found.append(Table("verified against iterative refinement cut at the same tokens per problem", header, body))
    return found
