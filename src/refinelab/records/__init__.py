"""Records every layer shares: what a model call spent (:class:`Usage`, :class:`Spend`, with the one rule
for adding up costs that may be unknown), and stored trajectories as the metrics see them
(:class:`ScoredAttempt`, :class:`ScoredTrajectory`).

This package sits low: it imports nothing from the sandbox, the models or the strategies, so
``import refinelab.metrics`` stays light and every layer above can share these types.
"""

from refinelab.records._records import (
    EFFORT_ORDER,
    Origin,
    ScoredAttempt,
    ScoredTrajectory,
    Spend,
    StopReason,
    Suggestion,
    Usage,
    configuration_label,
    effort_suffix,
    total_cost,
)

__all__ = [
    "EFFORT_ORDER",
    "Origin",
    "ScoredAttempt",
    "ScoredTrajectory",
    "Spend",
    "StopReason",
    "Suggestion",
    "Usage",
    "configuration_label",
    "effort_suffix",
    "total_cost",
]
