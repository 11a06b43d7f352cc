"""Matching CodeT's prompts to tasks."""

from __future__ import annotations

from refinelab.experiment._selection import match_prompt
from refinelab.problems import Problem


def problem(task_id: str, prompt: str, entry: str) -> Problem:
    return Problem(task_id, prompt, "function", (), (), entry_point=entry)


A = problem("A", 'def f(x):\n    """Double x.\n    >>> f(1)\n    2\n    """\n', "f")
B = problem("B", 'def f(x):\n    """Square x.\n    >>> f(3)\n    9\n    """\n', "f")
C = problem("C", 'def g(s):\n    """Reverse s."""\n', "g")


def test_unique_entry_point_matches_even_when_the_prompt_differs() -> None:
    assert match_prompt("def g(s: str):\n    pass\n\n# check the correctness of g\nassert ", [A, B, C]) is C


def test_shared_entry_point_falls_back_to_the_longest_common_prefix() -> None:
    codet = 'def f(x):\n    """Square x.\n    """\n    pass\n\n# check the correctness of f\nassert '
    assert match_prompt(codet, [A, B, C]) is B


def test_no_match_when_nothing_shares_the_signature() -> None:
    assert match_prompt("def h(y):\n    pass\n\n# check the correctness of h\nassert ", [A, B, C]) is None
    assert match_prompt("just text", [A, B, C]) is None
