"""Temperature schedules across refinement rounds: the "dynamic temperature" the 1.5B/7B refinement study
names as a next step (e.g. start careful at 0.2, explore more by 0.8 as rounds fail)."""

from __future__ import annotations

from dataclasses import replace

from refinelab.errors import UserError
from refinelab.models import GenerateConfig

TemperatureSchedule = tuple[float, float]
"""``(first, last)``: the draft uses ``first``, the last allowed round ``last``, rounds between rise (or
fall) linearly."""


def check_schedule(schedule: TemperatureSchedule | None) -> None:
    """A user error unless the schedule is two temperatures, each at least 0."""
    if schedule is None:
        return
    if len(schedule) != 2 or not all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in schedule):
        raise UserError(f"temperature_schedule={schedule!r}: must be two numbers, (first, last)")
    if min(schedule) < 0:
        raise UserError(f"temperature_schedule={schedule!r}: temperatures must be at least 0")


def at_round(config: GenerateConfig, schedule: TemperatureSchedule | None, round_: int, rounds: int) -> GenerateConfig:
    """``config`` with the schedule's temperature for round ``round_`` (0 = the draft) of ``rounds``
    refinement rounds; ``config`` unchanged without a schedule."""
    if schedule is None:
        return config
    first, last = schedule
    share = min(round_, rounds) / rounds if rounds > 0 else 0.0
    return replace(config, temperature=round(first + (last - first) * share, 6))
