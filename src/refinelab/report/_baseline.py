"""Comparisons across runs and configurations, paired by problem: each configuration against single pass
with the same actor, and each against the configuration with the same label in a baseline run
(``refinelab report RUN --baseline OTHER``). The numbers are :func:`refinelab.metrics.compare_paired`'s,
the ones the viewer's Compare page shows; :func:`paired_cells` writes them as both show them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from refinelab._words import counted
from refinelab.metrics import PairedComparison, ScoredTrajectory, compare_paired


@dataclass(frozen=True)
class BaselineRow:
    """A configuration of the run against the configuration of the same label in the baseline run."""

    label: str
    """The configuration (the same label in both runs)."""
    paired: PairedComparison | None
    """Baseline (A) against this run (B), paired by problem; ``None`` when the baseline has no such
    configuration."""


@dataclass(frozen=True)
class Baseline:
    """This run against a baseline run, configuration by configuration."""

    run: str
    """The baseline run's id."""
    rows: tuple[BaselineRow, ...]
    """One per configuration of this run."""
    only_in_baseline: tuple[str, ...] = ()
    """Labels of the baseline's configurations this run does not have."""


def baseline_rows(
    mine: Mapping[str, Sequence[ScoredTrajectory]], theirs: Mapping[str, Sequence[ScoredTrajectory]], run: str
) -> Baseline:
    """Each configuration of ``mine`` (grouped by configuration) against the one of the same label in
    ``theirs``, the baseline run ``run``."""
    by_label = {group[0].label: group for group in theirs.values() if group}
    rows = []
    for group in mine.values():
        label = group[0].label
        other = by_label.get(label)
        rows.append(BaselineRow(label, None if other is None else compare_paired(other, group)))
    labels = {group[0].label for group in mine.values() if group}
    return Baseline(run, tuple(rows), tuple(label for label in by_label if label not in labels))


def difference_text(value: tuple[float, float, float] | None) -> str:
    """``+25.0 [-25.0, +75.0]``: B - A in points with its interval; ``–`` without pairs."""
    return "–" if value is None else "{:+.1f} [{:+.1f}, {:+.1f}]".format(*(100 * x for x in value))


def paired_cells(comparison: PairedComparison) -> dict[str, str]:
    """Every number of a paired comparison as the text report and the viewer's Compare page print it."""
    counts = ("pairs", "both", "neither", "only_a", "only_b")
    cells = {name: str(getattr(comparison, name)) for name in counts}
    cells["pass_a"] = _percent(comparison.pass_a)
    cells["pass_b"] = _percent(comparison.pass_b)
    cells["p_value"] = f"{comparison.p_value:.3g}"
    cells["difference"] = difference_text(comparison.difference)
    cells["unpaired_a"] = str(len(comparison.unpaired_a))
    cells["unpaired_b"] = str(len(comparison.unpaired_b))
    return cells


def unpaired_text(comparison: PairedComparison, a: str, b: str) -> str:
    """``only in RUN: 10 problems (q00, q01, ...)`` for each side that ran problems the other did not."""
    parts = []
    for name, keys in ((a, comparison.unpaired_a), (b, comparison.unpaired_b)):
        problems = list(dict.fromkeys(problem for problem, _ in keys))
        if problems:
            shown = ", ".join(problems[:5]) + (", ..." if len(problems) > 5 else "")
            parts.append(f"only in {name}: {counted(len(problems), 'problem')} ({shown})")
    return "; ".join(parts)


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"
