"""The public surface of refinelab.verification, and its place in the layers."""

from __future__ import annotations

import ast
from pathlib import Path

import refinelab.verification


def test_public_names() -> None:
    assert sorted(refinelab.verification.__all__) == sorted(
        [
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
    )


def test_imports_only_lower_layers() -> None:
    allowed = {
        "refinelab.problems",
        "refinelab.sandbox",
        "refinelab.models",
        "refinelab.errors",
        "refinelab.verification",
    }
    package = Path(refinelab.verification.__file__).parent
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("refinelab"):
                assert any(node.module == a or (node.module or "").startswith(a + ".") for a in allowed), (
                    path,
                    node.module,
                )
