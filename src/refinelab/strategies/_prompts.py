"""Default prompts, in our own words, following the structure of the studies refinelab reproduces.

Every template is a plain ``str.format`` string; a strategy takes replacements as parameters.
"""

from __future__ import annotations

from refinelab.models import Message
from refinelab.problems import Problem

ACTOR_SYSTEM = (
    "You are an expert Python programmer. Write a correct, efficient Python program that meets the "
    "specification exactly."
)

FORMAT_STDIO = (
    "Read the input from standard input and write the answer to standard output. "
    "Give the complete program in a single ```python code block."
)

FORMAT_FUNCTION = (
    "Give the complete implementation, including the function signature, in a single ```python code block."
)

REFINE_SYSTEM = (
    "You are an expert Python programmer. Your previous program did not pass the tests shown below. "
    "Fix it and give the full corrected program in a single ```python code block."
)

CONFIDENCE_REQUEST = (
    "After the code block, state your confidence that the program is correct as 'Confidence: X' with X between 0 and 1."
)


def task_text(problem: Problem) -> str:
    """The problem statement with its starter code and the output format."""
    parts = [problem.prompt.strip()]
    if problem.starter_code.strip() and problem.starter_code.strip() not in problem.prompt:
        parts.append(f"Starter code:\n```python\n{problem.starter_code.rstrip()}\n```")
    parts.append(FORMAT_STDIO if problem.kind == "stdio" else FORMAT_FUNCTION)
    return "\n\n".join(parts)


def draft_messages(problem: Problem, *, ask_confidence: bool = False) -> list[Message]:
    """The actor's first request."""
    text = task_text(problem) + (f"\n\n{CONFIDENCE_REQUEST}" if ask_confidence else "")
    return [Message.system(ACTOR_SYSTEM), Message.user(text)]


def refine_message(code: str, feedback: str) -> str:
    """The user turn that asks for a fix: the previous program and what went wrong."""
    return f"Previous program:\n```python\n{code.rstrip()}\n```\n\nTest results:\n{feedback}"
