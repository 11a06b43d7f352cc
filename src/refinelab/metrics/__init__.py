"""Metrics: pure functions over results."""

from refinelab.metrics._passk import mean_pass_at_k, pass_at_k

__all__ = ["mean_pass_at_k", "pass_at_k"]
