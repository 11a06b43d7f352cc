"""Why a selecting strategy (``codet``, ``verified``) chose what it chose on one problem: its decisions
in the order taken, with the evidence each rested on (``refinelab report --why PROBLEM``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from refinelab.store import StoredConfiguration, TrajectoryDetail
from refinelab.strategies import Decision


def why_text(
    run_id: str, problem: str, trajectories: Sequence[TrajectoryDetail], configs: Sequence[StoredConfiguration]
) -> str:
    """Every trajectory of ``run_id`` on ``problem``: what it returned, whether that passes the hidden
    tests, and, for a selecting strategy, each decision and its generated tests."""
    labels = {c.key: c.label for c in configs}
    blocks = [f"Why each configuration returned what it did on {problem} (run {run_id})\n"]
    blocks += [_trajectory(t, labels) for t in trajectories]
    return "\n".join(blocks)


def _trajectory(t: TrajectoryDetail, labels: Mapping[str, str]) -> str:
    repeat = f" (repeat {t.repeat})" if t.repeat else ""
    lines = [f"{labels.get(t.config, t.config)}{repeat}", f"  {_returned(t)}"]
    if not t.decisions:
        lines.append("  no decisions recorded (not a selecting strategy)")
    lines += [f"  {i}. {_decision(d)}" for i, d in enumerate(t.decisions, 1)]
    lines += [f"  {_generation_line(t)}"] if t.generations else []
    return "\n".join(lines) + "\n"


def _returned(t: TrajectoryDetail) -> str:
    stopped = f"stopped: {t.stop_reason}" + (f", {t.budget_note}" if t.budget_note else "")
    if t.final is None:
        return f"returned no program ({stopped})"
    passed = next(a.hidden.passed for a in t.attempts if a.index == t.final)
    return f"returned attempt {t.final} ({stopped}); hidden tests: {'pass' if passed else 'fail'}"


def _decision(d: Decision) -> str:
    about = "" if d.attempt is None else f"attempt {d.attempt}"
    if d.parent is not None:
        about += f" (refined from attempt {d.parent})"
    if d.members:
        about += (" " if about else "") + "[" + ", ".join(f"attempt {m}" for m in d.members) + "]"
    return f"{d.kind:<8} {about}: {d.reason}" if about else f"{d.kind:<8} {d.reason}"


def _generation_line(t: TrajectoryDetail) -> str:
    tests = [test for g in t.generations for test in g.tests]
    rejected = sum(len(g.rejected) for g in t.generations)
    judged = [test.reference_passed for test in tests if test.reference_passed is not None]
    reference = f", the reference passes {sum(judged)} of {len(judged)}" if judged else ", no reference to judge them"
    calls = len(t.generations)
    return f"generated tests: {len(tests)} from {calls} call{'s' if calls != 1 else ''}{reference}; {rejected} rejected"
