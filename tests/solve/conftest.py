"""Shared pieces of the solve tests: the research's worked examples as scripted replies."""

from __future__ import annotations

from pathlib import Path

import pytest

from refinelab.solve import SolveOptions


def fenced(code: str) -> str:
    """A model reply holding ``code`` in a python block."""
    return f"Here is the program.\n```python\n{code.strip()}\n```\n"


FIB_PROMPT = "Return the first n Fibonacci numbers as a list.\n\ndef fibonacci(n: int) -> list[int]:"
FIB_DRAFT = """
def fibonacci(n):
    seq = [0, 1]
    while len(seq) < n:
        seq.append(seq[-1] + seq[-2])
    return seq
"""
FIB_FIXED = """
def fibonacci(n):
    if n <= 0:
        return []
    if n == 1:
        return [0]
    seq = [0, 1]
    while len(seq) < n:
        seq.append(seq[-1] + seq[-2])
    return seq
"""
FIB_TESTS = ["fibonacci(1) == [0]", "fibonacci(2) == [0, 1]", "fibonacci(10) == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]"]

SQUARE_PROMPT = "Return the square of x; when x is None, return None.\n\ndef square(x):"
SQUARE_DRAFT = "def square(x):\n    return x * x\n"
SQUARE_GUARDED = "def square(x):\n    if x is None:\n        return None\n    return x * x\n"
SQUARE_TESTS = ["square(3) == 9", "square(-2) == 4", "square(None) is None"]

SUM_PROMPT = "Read two integers from standard input on one line and print their sum."
SUM_DRAFT = "a, b = input().split(',')\nprint(int(a) + int(b))\n"
SUM_FIXED = "a, b = map(int, input().split())\nprint(a + b)\n"
SUM_IO = [("1 2", "3"), ("10 -4", "6")]


@pytest.fixture
def options(tmp_path: Path) -> SolveOptions:
    """Options that record into a store in the test's own folder and use ``exec-refine``."""
    return SolveOptions(strategy="exec-refine", store=tmp_path / "store.sqlite", environ={})
