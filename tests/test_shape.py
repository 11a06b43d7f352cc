"""The shape the style guide asks for, checked on the source tree: no call passes more than six
positional arguments (a longer call is a record waiting to be named; STYLE.md practice 15)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "refinelab"
MAX_POSITIONAL = 6


def long_calls(source: str, name: str) -> list[str]:
    """``file:line`` of every call in ``source`` with more than :data:`MAX_POSITIONAL` positional arguments
    (a ``*args`` counts as one)."""
    tree = ast.parse(source, name)
    return [
        f"{name}:{node.lineno} ({len(node.args)} positional)"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and len(node.args) > MAX_POSITIONAL
    ]


def test_the_check_finds_a_long_call() -> None:
    assert long_calls("f(1, 2, 3, 4, 5, 6, 7)\nf(1, 2, 3, 4, 5, 6, x=7)\n", "x.py") == ["x.py:1 (7 positional)"]


def test_no_call_in_src_passes_more_than_six_positional_arguments() -> None:
    found = [
        call
        for path in sorted(SRC.rglob("*.py"))
        for call in long_calls(path.read_text(encoding="utf-8"), str(path.relative_to(SRC.parent)))
    ]
    assert found == [], "calls with more than six positional arguments (use keywords or a record):\n" + "\n".join(found)
