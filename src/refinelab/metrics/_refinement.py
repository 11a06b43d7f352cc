"""What refinement did: pass@1 after each iteration, improvements, regressions, iterations.

Pass@1 after iteration ``i`` has one definition, used by every report and export: iteration ``i`` is
attempt ``i`` (0 = the first attempt), and a trajectory that stopped before iteration ``i`` keeps its
last attempt, as in the studies. Only configurations that iterate have iterations after 0: for one
whose trajectories never refined (single pass) or that begin with independent samples (sampling, codet,
and verified, which then refines some of them), pass@1 after iteration ``i > 0`` is ``None`` (shown as
"–" or an empty cell), never a copy of iteration 0 or of the selected sample; their returned answers are
in ``pass_final``. For sampling, iteration 0 is the first sample (a single pass at the sampling
temperature).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from refinelab.metrics._cases import improved, regression_error_attempts, worsened
from refinelab.records import ScoredAttempt, ScoredTrajectory


@dataclass(frozen=True)
class Rate:
    """``count`` of ``of``; ``value`` is ``None`` when ``of`` is 0 (no case, not zero)."""

    count: int
    """Cases that happened."""
    of: int
    """Cases that could have."""

    @property
    def value(self) -> float | None:
        """The share, or None."""
        return self.count / self.of if self.of else None


def sampled(trajectory: ScoredTrajectory) -> bool:
    """True for a trajectory that begins with independent samples (sampling, codet, verified): its
    attempt indices are not iterations, even when refinements of some samples follow them (verified)."""
    return bool(trajectory.attempts) and trajectory.attempts[0].origin == "sample"


def answer_at(trajectory: ScoredTrajectory, iteration: int) -> ScoredAttempt | None:
    """The answer after ``iteration`` refinements (the last attempt if it stopped earlier); ``None`` for
    a sampling trajectory after iteration 0 (samples are not iterations) or one without attempts."""
    if not trajectory.attempts or (sampled(trajectory) and iteration > 0):
        return None
    return trajectory.attempts[min(iteration, len(trajectory.attempts) - 1)]


def _passes_at(trajectory: ScoredTrajectory, iteration: int) -> bool:
    answer = answer_at(trajectory, iteration)
    return answer is not None and answer.hidden_passed


def iterates(trajectories: Sequence[ScoredTrajectory]) -> bool:
    """True when some (non-sampling) trajectory refined at least once, so iterations after 0 exist."""
    return max_iteration(trajectories) > 0


def pass_at_iteration(trajectories: Sequence[ScoredTrajectory], iteration: int) -> float | None:
    """Share of trajectories whose answer after ``iteration`` passes the hidden tests; ``None`` without
    trajectories, and after iteration 0 for a configuration that does not iterate (see the module
    docstring)."""
    if not trajectories or (iteration > 0 and not iterates(trajectories)):
        return None
    return sum(_passes_at(t, iteration) for t in trajectories) / len(trajectories)


def pass_by_iteration(trajectories: Sequence[ScoredTrajectory], depth: int) -> tuple[float | None, ...]:
    """:func:`pass_at_iteration` for iterations ``0 .. depth`` (the columns every report shows)."""
    return tuple(pass_at_iteration(trajectories, i) for i in range(depth + 1))


def pass_final(trajectories: Sequence[ScoredTrajectory]) -> float | None:
    """Share whose returned answer passes the hidden tests."""
    return sum(t.passed for t in trajectories) / len(trajectories) if trajectories else None


def max_iteration(trajectories: Sequence[ScoredTrajectory]) -> int:
    """The largest iteration any (non-sampling) trajectory reached."""
    return max((len(t.attempts) - 1 for t in trajectories if not sampled(t) and t.attempts), default=0)


def step_rates(trajectories: Sequence[ScoredTrajectory], iteration: int) -> tuple[Rate, Rate]:
    """(improvement, regression) from iteration ``iteration - 1`` to ``iteration``: failing answers that
    came to pass, of failing ones; passing answers that came to fail, of passing ones. Both are empty
    (``Rate(0, 0)``) for a configuration that does not iterate."""
    if not iterates(trajectories):
        return Rate(0, 0), Rate(0, 0)
    before = [_passes_at(t, iteration - 1) for t in trajectories]
    after = [_passes_at(t, iteration) for t in trajectories]
    improved = sum(not b and a for b, a in zip(before, after))
    regressed = sum(b and not a for b, a in zip(before, after))
    return Rate(improved, before.count(False)), Rate(regressed, before.count(True))


def improvement_rate(trajectories: Sequence[ScoredTrajectory]) -> Rate:
    """Initially wrong answers (attempt 0) whose returned answer passes, of initially wrong ones."""
    first = [t for t in trajectories if t.attempts and not t.attempts[0].hidden_passed]
    return Rate(sum(improved(t) for t in first), len(first))


def regression_rate(trajectories: Sequence[ScoredTrajectory]) -> Rate:
    """Initially correct answers whose returned answer fails, of initially correct ones."""
    first = [t for t in trajectories if t.attempts and t.attempts[0].hidden_passed]
    return Rate(sum(worsened(t) for t in first), len(first))


def regression_errors(trajectories: Sequence[ScoredTrajectory]) -> int:
    """Passing attempts the critic rejected and the actor then refined into a failing one."""
    return sum(len(regression_error_attempts(t)) for t in trajectories)


def average_refinements(trajectories: Sequence[ScoredTrajectory]) -> float | None:
    """Mean refinement steps (attempts after the first); 0 for single pass."""
    sequential = [t for t in trajectories if not sampled(t)]
    if not sequential:
        return None
    return sum(max(len(t.attempts) - 1, 0) for t in sequential) / len(sequential)


def average_attempts(trajectories: Sequence[ScoredTrajectory]) -> float | None:
    """Mean attempts (generations) per problem; 1 for single pass."""
    return sum(len(t.attempts) for t in trajectories) / len(trajectories) if trajectories else None


def first_pass_iterations(trajectories: Sequence[ScoredTrajectory]) -> Counter[int | None]:
    """How many trajectories first passed the hidden tests at each attempt index (None: never)."""
    found: Counter[int | None] = Counter()
    for trajectory in trajectories:
        found[next((a.index for a in trajectory.attempts if a.hidden_passed), None)] += 1
    return found


def capped(trajectory: ScoredTrajectory, cap: int, *, judges_last: bool = True) -> ScoredTrajectory:
    """The trajectory as it would have been with at most ``cap`` refinements: no new model calls,
    the attempts after the cap dropped (their calls and tokens with them). ``judges_last=False`` (a critic
    strategy that does not ask about the attempt at its cap: :func:`judges_last`) drops the critic's call
    on the attempt at the new cap too, wherever a trajectory reached it: the loop would have ended there."""
    if sampled(trajectory):
        raise ValueError("an iteration cap does not apply to sampling; compare sample counts with pass@k")
    reached = len(trajectory.attempts) > cap  # an attempt at the new cap: the loop ends there
    if not reached or (len(trajectory.attempts) == cap + 1 and judges_last):
        return trajectory
    kept = trajectory.attempts[: cap + 1]
    if not judges_last:
        kept = (*kept[:-1], kept[-1].without_critic())
    return replace(trajectory, attempts=kept, final=cap, stop_reason="max_iterations")


def judges_last(trajectories: Sequence[ScoredTrajectory]) -> bool:
    """Whether a configuration's critic was asked about the attempt at the iteration cap: as recorded
    (``critique_last``), and always in runs made before Self-Refine's loop ended at the last refinement
    (they recorded nothing). False without a critic."""
    if not trajectories or trajectories[0].critic is None:
        return False
    return all(t.critique_last is not False for t in trajectories)


def prompt_tokens_by_round(trajectories: Sequence[ScoredTrajectory]) -> list[float]:
    """Mean actor prompt tokens at each attempt index, over the trajectories that reached it: how the
    memory policy grows (or holds) the prompt."""
    by_round: dict[int, list[int]] = {}
    for trajectory in trajectories:
        for attempt in trajectory.attempts:
            by_round.setdefault(attempt.index, []).append(attempt.actor_prompt_tokens)
    return [sum(v) / len(v) for _, v in sorted(by_round.items())]
