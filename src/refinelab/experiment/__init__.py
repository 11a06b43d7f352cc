"""Experiments: scoring samples files, self-testing benchmarks (runs over models come later)."""

from refinelab.experiment._samples import Sample, ScoredSample, Summary, read_samples, score_samples, summarize
from refinelab.experiment._selftest import Discrepancy, SelfTestReport, self_test, stub_program

__all__ = [
    "Discrepancy",
    "Sample",
    "ScoredSample",
    "SelfTestReport",
    "Summary",
    "read_samples",
    "score_samples",
    "self_test",
    "stub_program",
    "summarize",
]
