"""Verification outside the generation loop: tests a model writes, and choosing among programs by
dual execution agreement (CodeT).

The pieces compose as::

    replies = [await model.generate(test_request(problem)) for _ in range(m)]
    batches = [parse_tests(reply.text, problem).tests for reply in replies]
    tests = pooled(batches, limit=5)
    passed = await run_matrix(pool, programs, tests, problem, limits=agreement_limits())  # 0.1 s a test
    chosen = dual_agreement(passed).chosen
    accuracy = await test_accuracy(pool, tests, problem)  # where a reference exists

See docs/verification.md.
"""

from refinelab.verification._accuracy import TestAccuracy, test_accuracy
from refinelab.verification._agreement import Agreement, Group, Score, dual_agreement
from refinelab.verification._matrix import AGREEMENT_SECONDS, MatrixJob, agreement_limits, run_matrices, run_matrix
from refinelab.verification._parse import GeneratedTests, Rejected, occurrences, parse_tests, pooled, test_key
from refinelab.verification._prompt import test_request

__all__ = [
    "AGREEMENT_SECONDS",
    "Agreement",
    "GeneratedTests",
    "Group",
    "MatrixJob",
    "Rejected",
    "Score",
    "TestAccuracy",
    "agreement_limits",
    "dual_agreement",
    "occurrences",
    "parse_tests",
    "pooled",
    "run_matrices",
    "run_matrix",
    "test_accuracy",
    "test_key",
    "test_request",
]
