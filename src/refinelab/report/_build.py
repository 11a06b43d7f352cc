"""The numbers a report shows, computed from a stored run by the metrics (formatting lives elsewhere)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from refinelab.metrics import (
    ConfusionMatrix,
    DecisionCount,
    EqualTokens,
    Means,
    Rate,
    ScoredTrajectory,
    actor_confidence,
    average_attempts,
    average_refinements,
    brier,
    capped,
    compare_paired,
    confusion_matrix,
    critic_confidence,
    critic_coverage,
    decisions,
    first_pass_iterations,
    improvement_rate,
    judges_last,
    max_iteration,
    means,
    multiple,
    pass_by_iteration,
    pass_final,
    prompt_tokens_by_round,
    regression_errors,
    regression_rate,
    sampled,
    sampling_at_equal_tokens,
    tests_generated,
    trajectories_pass_at_k,
)
from refinelab.report._baseline import Baseline, baseline_rows
from refinelab.report._effort import EffortSection, effort_section
from refinelab.report._overview import OverviewTable, build_overview, on_shared_problems, singles_by_actor
from refinelab.report._selection import SelectionSection, selection_section
from refinelab.store import Failure, RunInfo, Store, StoredProblem
from refinelab.strategies import strategy_traits


@dataclass(frozen=True, kw_only=True)
class Passes:
    """How often a configuration's answers passed the hidden tests."""

    by_iteration: tuple[float | None, ...]
    """Pass@1 after iteration 0, 1, ... up to the report's deepest iteration (hidden tests), as
    ``metrics.pass_at_iteration`` defines it: ``None`` after iteration 0 for a configuration that does
    not iterate (single pass, sampling)."""
    final: float
    """Pass@1 of the returned answers."""
    pass_at: dict[int, float]
    """pass@k where defined."""
    first_pass: dict[str, int]
    """Attempt index of the first passing attempt ("never" for none) -> trajectories."""


@dataclass(frozen=True, kw_only=True)
class Refinement:
    """What iterating did: steps taken, answers gained and lost, prompts grown, shorter caps."""

    regression_errors: int
    """Passing attempts rejected and refined into failing ones."""
    refinements: float | None
    """Average refinement steps (Avg It.)."""
    attempts: float
    """Average attempts (generations) per problem."""
    improvement: Rate
    """Initially wrong, finally right."""
    regression: Rate
    """Initially right, finally wrong."""
    prompt_by_round: tuple[float, ...]
    """Mean actor prompt tokens per attempt index."""
    caps: tuple[tuple[int, float, float], ...]
    """Counterfactual caps: (cap, pass@1, mean tokens) for each cap below the one used."""


@dataclass(frozen=True, kw_only=True)
class CriticNumbers:
    """The critic's verdicts against the hidden tests (critic strategies; empty otherwise)."""

    confusion: ConfusionMatrix | None
    """Critic verdicts against the tests (``None`` without a critic)."""
    decisions: dict[str, DecisionCount]
    """pass / refine / redraft counts (empty without a critic)."""
    covered: Rate = field(default_factory=lambda: Rate(0, 0))
    """Attempts the critic gave a readable verdict on, of all: the attempts the matrix covers (not the
    one at the iteration cap, unless ``critique_last``)."""


@dataclass(frozen=True, kw_only=True)
class Confidence:
    """Stated confidence and how well it was calibrated."""

    stated: float | None
    """Mean stated confidence of the returned answers."""
    brier_actor: float | None
    """Brier score of the actor's stated confidence."""
    brier_critic: float | None
    """Brier score of the critic's confidence in its verdicts."""


@dataclass(frozen=True, kw_only=True)
class Row:
    """One configuration's numbers."""

    label: str
    """``strategy(args) · actor / critic``."""
    strategy: str
    """Strategy name."""
    actor: str
    """Actor model."""
    critic: str | None
    """Critic model."""
    trajectories: int
    """Trajectories scored."""
    passes: Passes
    """Pass rates."""
    refinement: Refinement
    """What iterating did."""
    use: Means
    """Mean tokens, time, cost per problem."""
    vs_single: Means | None
    """This configuration's use as a multiple of single pass with the same actor (when the run has one)."""
    judged: CriticNumbers
    """The critic's verdicts against the tests."""
    confidence: Confidence
    """Stated confidence and its calibration."""
    tests_generated: Rate = field(default_factory=lambda: Rate(0, 0))
    """Problems (x repeats) on which the strategy wrote tests: all for ``codet`` and ``verified``; for
    ``exec-refine``, those without visible tests."""
    effort: str | None = None
    """The actor's reasoning effort (``None``: the model's default)."""
    critic_effort: str | None = None
    """The critic's reasoning effort."""
    reasoning_tokens: float = 0.0
    """Mean thinking tokens per problem (part of ``use.tokens``)."""

    @property
    def thinks(self) -> bool:
        """It ran with an effort or spent thinking tokens (its JSON then says so)."""
        return self.effort is not None or self.critic_effort is not None or self.reasoning_tokens > 0

    def to_json(self) -> dict[str, object]:
        """The numbers as one flat object, as reports have always exported them (with ``effort``,
        ``critic_effort`` and ``reasoning_tokens`` for a configuration that thinks)."""
        found = self._numbers()
        if self.thinks:
            found |= {"effort": self.effort, "critic_effort": self.critic_effort}
            found["reasoning_tokens"] = self.reasoning_tokens
        return found

    def _numbers(self) -> dict[str, object]:
        passes, refinement, judged, confidence = self.passes, self.refinement, self.judged, self.confidence
        return {
            "label": self.label, "strategy": self.strategy, "actor": self.actor, "critic": self.critic,
            "trajectories": self.trajectories, "by_iteration": list(passes.by_iteration), "final": passes.final,
            "regression_errors": refinement.regression_errors, "refinements": refinement.refinements,
            "attempts": refinement.attempts, "use": asdict(self.use),
            "vs_single": None if self.vs_single is None else asdict(self.vs_single),
            "improvement": asdict(refinement.improvement), "regression": asdict(refinement.regression),
            "confusion": None if judged.confusion is None else asdict(judged.confusion),
            "critic_covered": None if judged.confusion is None else asdict(judged.covered),
            "decisions": {k: asdict(v) for k, v in judged.decisions.items()}, "confidence": confidence.stated,
            "brier_actor": confidence.brier_actor, "brier_critic": confidence.brier_critic,
            "pass_at": passes.pass_at, "prompt_by_round": list(refinement.prompt_by_round),
            "first_pass": passes.first_pass, "caps": [list(c) for c in refinement.caps],
            "tests_generated": asdict(self.tests_generated),
        }  # fmt: skip


@dataclass(frozen=True)
class Comparison:
    """A configuration against single pass with the same actor, paired by problem (the numbers of
    :func:`refinelab.metrics.compare_paired`)."""

    label: str
    """The configuration."""
    baseline: str
    """The single-pass configuration."""
    pairs: int
    """Problems (x repeats) both ran."""
    only_baseline: int
    """Pairs only single pass solved."""
    only_this: int
    """Pairs only this configuration solved."""
    p_value: float
    """Exact McNemar."""
    difference: tuple[float, float, float] | None
    """Pass-rate difference and its 95% bootstrap interval."""
    unpaired: int = 0
    """Problems (x repeats) only one of the two ran (an unfinished run), left out of the numbers."""


@dataclass(frozen=True)
class Report:
    """Everything one report shows."""

    run: RunInfo
    """The run's header."""
    problems: int
    """Problems in the run."""
    hidden_tests: str
    """Which tests scored the attempts, in words."""
    rows: tuple[Row, ...]
    """One per configuration with stored trajectories."""
    comparisons: tuple[Comparison, ...] = ()
    """Paired tests against single pass."""
    equal_tokens: tuple[tuple[str, str, EqualTokens], ...] = ()
    """(refinement, sampling, numbers) for each pair with the same actor."""
    failures: tuple[Failure, ...] = ()
    """Infrastructure failures (kept out of every number above)."""
    pending: int = 0
    """Units not stored (still to run, or failed for infrastructure reasons)."""
    baseline: Baseline | None = None
    """Each configuration against the same one in another run, paired by problem (``--baseline``)."""
    overview: tuple[OverviewTable, ...] = ()
    """The headline table with 95% bootstrap intervals: all problems, per benchmark, per difficulty."""
    selection: SelectionSection = field(default_factory=SelectionSection)
    """Generated-test and selection accuracy of ``codet``/``verified``; ``verified`` at equal tokens."""
    efforts: EffortSection = field(default_factory=EffortSection)
    """Tokens against pass@1 per (strategy x effort), effort levels paired, overthinking, settings not sent."""


def build_report(store: Store, run_id: str | None = None, *, baseline: str | None = None) -> Report:
    """The report of one stored run (default: the newest)."""
    run = store.run(run_id)
    trajectories = store.trajectories(run.id)
    groups: dict[str, list[ScoredTrajectory]] = {}
    for trajectory in trajectories:
        groups.setdefault(trajectory.config, []).append(trajectory)
    singles = singles_by_actor(groups)
    depth = max((max_iteration(group) for group in groups.values()), default=0)
    rows = tuple(_row(group, singles.get(group[0].actor_at), depth) for group in groups.values())
    problems = store.problems(run.id)
    configs, repeats = len(store.configurations(run.id)), run.repeats
    return Report(
        run=run,
        problems=len(problems),
        hidden_tests=_hidden_text(problems),
        rows=rows,
        comparisons=_comparisons(groups, singles),
        equal_tokens=_equal_tokens(groups),
        failures=tuple(store.failures(run.id)),
        pending=configs * len(problems) * repeats - len(trajectories),
        baseline=_against(store, groups, baseline),
        overview=build_overview(trajectories, store.problem_details(run.id)),
        selection=selection_section(groups),
        efforts=effort_section(groups),
    )


def _row(group: Sequence[ScoredTrajectory], single: Sequence[ScoredTrajectory] | None, depth: int) -> Row:
    first = group[0]
    use = means(group)
    assert use is not None
    return Row(
        label=first.label,
        strategy=first.strategy,
        actor=first.actor,
        critic=first.critic,
        trajectories=len(group),
        passes=Passes(
            by_iteration=pass_by_iteration(group, depth),
            final=pass_final(group) or 0.0,
            pass_at=_pass_at(group),
            first_pass=_first_pass(group),
        ),
        refinement=_refinement(group),
        use=use,
        vs_single=_multiples(group, single),
        judged=_judged(group),
        confidence=_confidence(group),
        tests_generated=tests_generated(group),
        effort=first.effort,
        critic_effort=first.critic_effort,
        reasoning_tokens=sum(t.reasoning_tokens for t in group) / len(group),
    )


def _refinement(group: Sequence[ScoredTrajectory]) -> Refinement:
    return Refinement(
        regression_errors=regression_errors(group),
        refinements=average_refinements(group),
        attempts=average_attempts(group) or 0.0,
        improvement=improvement_rate(group),
        regression=regression_rate(group),
        prompt_by_round=tuple(prompt_tokens_by_round(group)),
        caps=_caps(group, max_iteration(group)),
    )


def _confidence(group: Sequence[ScoredTrajectory]) -> Confidence:
    actor, critic = brier(actor_confidence(group)), brier(critic_confidence(group))
    return Confidence(stated=_stated(group), brier_actor=actor, brier_critic=critic)


def _judged(group: Sequence[ScoredTrajectory]) -> CriticNumbers:
    if group[0].critic is None:
        return CriticNumbers(confusion=None, decisions={})
    return CriticNumbers(confusion=confusion_matrix(group), decisions=decisions(group), covered=critic_coverage(group))


def _multiples(group: Sequence[ScoredTrajectory], single: Sequence[ScoredTrajectory] | None) -> Means | None:
    """Mean use per problem over single pass's, both on the problems both ran (an unfinished run's
    configurations cover different problems, and a longer problem costs more under any strategy)."""
    if not single:
        return None
    here, base = on_shared_problems(group, single)
    use, base_use = means(here), means(base)
    if use is None or base_use is None:
        return None
    return Means(
        multiple(use.tokens, base_use.tokens) or 0.0,
        multiple(use.seconds, base_use.seconds) or 0.0,
        multiple(use.cost_usd, base_use.cost_usd),
    )


def _stated(group: Sequence[ScoredTrajectory]) -> float | None:
    stated = [a.confidence for t in group if (a := t.attempts[t.final] if t.final is not None else None)]
    values = [v for v in stated if v is not None]
    return statistics.fmean(values) if values else None


def _pass_at(group: Sequence[ScoredTrajectory]) -> dict[int, float]:
    found = {}
    for k in (1, 2, 4, 8, 16, 32):
        value = trajectories_pass_at_k(group, k)
        if value is None:
            break
        found[k] = value
    return found


def _first_pass(group: Sequence[ScoredTrajectory]) -> dict[str, int]:
    counts = first_pass_iterations(group)
    ordered = sorted(k for k in counts if k is not None)
    return {**{str(k): counts[k] for k in ordered}, "never": counts.get(None, 0)}


def _caps(group: Sequence[ScoredTrajectory], top: int) -> tuple[tuple[int, float, float], ...]:
    if any(sampled(t) for t in group) or top == 0:
        return ()
    rows = []
    last = judges_last(group)
    for cap in range(top):
        trimmed = [capped(t, cap, judges_last=last) for t in group]
        use = means(trimmed)
        rows.append((cap, pass_final(trimmed) or 0.0, use.tokens if use else 0.0))
    return tuple(rows)


def _comparisons(
    groups: dict[str, list[ScoredTrajectory]], singles: dict[tuple[str, str | None], list[ScoredTrajectory]]
) -> tuple[Comparison, ...]:
    found = []
    for group in groups.values():
        single = singles.get(group[0].actor_at)
        if single is None or group is single:
            continue
        pairs = compare_paired(single, group)
        found.append(
            Comparison(
                label=group[0].label,
                baseline=single[0].label,
                pairs=pairs.pairs,
                only_baseline=pairs.only_a,
                only_this=pairs.only_b,
                p_value=pairs.p_value,
                difference=pairs.difference,
                unpaired=len(pairs.unpaired_a) + len(pairs.unpaired_b),
            )
        )
    return tuple(found)


def _against(store: Store, groups: dict[str, list[ScoredTrajectory]], baseline: str | None) -> Baseline | None:
    """This run's configurations against the baseline run's, paired by problem."""
    if baseline is None:
        return None
    other = store.run(baseline)
    theirs: dict[str, list[ScoredTrajectory]] = {}
    for trajectory in store.trajectories(other.id):
        theirs.setdefault(trajectory.config, []).append(trajectory)
    return baseline_rows(groups, theirs, other.id)


def _equal_tokens(groups: dict[str, list[ScoredTrajectory]]) -> tuple[tuple[str, str, EqualTokens], ...]:
    baselines = {id(g): strategy_traits(g[0].strategy).baseline for g in groups.values()}
    samplers = [g for g in groups.values() if any(sampled(t) for t in g) and baselines[id(g)] == "samples"]
    found = []
    for group in groups.values():
        if baselines[id(group)] == "single" or group in samplers:
            continue
        for sampler in (s for s in samplers if s[0].actor_at == group[0].actor_at):
            result = sampling_at_equal_tokens(group, sampler)
            if result is not None:
                found.append((group[0].label, sampler[0].label, result))
    return tuple(found)


def _hidden_text(problems: Sequence[StoredProblem]) -> str:
    if not problems:
        return "no problems"
    benchmarks = sorted({p.key.split("/", 1)[0] for p in problems})
    hidden = statistics.median(p.hidden_tests for p in problems)
    visible = statistics.median(p.visible_tests for p in problems)
    return (
        f"every attempt scored on the hidden tests ({', '.join(benchmarks)}: median {hidden:g} per problem); "
        f"strategies saw only the visible tests (median {visible:g} per problem)"
    )
