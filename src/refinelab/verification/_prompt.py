"""The request that asks a model to write tests for a problem.

Function problems get CodeT's framing (the problem's signature and docstring, then "check the
correctness of f" with asserts that call it); stdio problems get input/expected-output pairs in tagged
blocks that :func:`~refinelab.verification.parse_tests` reads back.
"""

from __future__ import annotations

from refinelab.models import Message
from refinelab.problems import Problem

SYSTEM = (
    "You write unit tests for programming problems. You never write the solution itself. "
    "Each test is small, checks one behaviour, and its expected value follows from the problem statement."
)

_FUNCTION = """{statement}

Write {count} distinct tests that check the correctness of `{entry}`. Each test is one `assert` statement \
that calls `{entry}` with literal arguments and compares the result with the expected value, for example:

```python
assert {entry}(...) == ...
```

Cover typical inputs and edge cases. Do not define `{entry}`, do not import anything the problem does not \
import, and put all the asserts in one ```python code block, one per line."""

_STDIO = """{statement}

The solution is a complete program that reads standard input and writes standard output. Write {count} \
distinct tests for it. Each test is an input and the exact expected output, written as:

<input>
(the whole standard input)
</input>
<output>
(the whole expected standard output)
</output>

Cover typical inputs and edge cases; keep each input small enough to check by hand. Write nothing inside \
the tags but the input and the output."""


def test_request(problem: Problem, *, count: int = 10) -> list[Message]:
    """The messages that ask a model for ``count`` tests of ``problem``.

    The reply format is the one :func:`~refinelab.verification.parse_tests` reads: asserts calling the
    entry point in a code block (function problems), or ``<input>``/``<output>`` pairs (stdio problems).
    The problem's statement (with its signature, or its starter code when the prompt lacks it) is shown
    as the model would see it when solving.
    """
    if count < 1:
        raise ValueError("count must be at least 1")
    statement = _statement(problem)
    if problem.kind == "stdio":
        body = _STDIO.format(statement=statement, count=count)
    else:
        entry = (problem.entry_point or "solution").rsplit(".", 1)[-1]
        body = _FUNCTION.format(statement=statement, count=count, entry=entry)
    return [Message.system(SYSTEM), Message.user(body)]


def _statement(problem: Problem) -> str:
    text = problem.prompt.strip()
    starter = problem.starter_code.strip()
    if starter and starter not in text:
        text += f"\n\nStarter code:\n```python\n{starter}\n```"
    if problem.kind == "function" and "```" not in text:
        text = f"```python\n{text}\n```"
    return text


test_request.__test__ = False  # type: ignore[attr-defined]  # not a pytest test, despite the name
