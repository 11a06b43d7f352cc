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


def draft_messages(problem: Problem) -> list[Message]:
    """The actor's first request."""
    return [Message.system(ACTOR_SYSTEM), Message.user(task_text(problem))]


def refine_message(code: str, feedback: str) -> str:
    """The user turn that asks for a fix: the previous program and what went wrong."""
    return f"Previous program:\n```python\n{code.rstrip()}\n```\n\nTest results:\n{feedback}"


CRITIC_SYSTEM = (
    "You are a senior code reviewer. Examine the program for logic errors, syntax problems and edge cases "
    "it would get wrong{stdio}. Do not rewrite the program. Answer only with JSON of the form "
    '{{"critique": "<the specific mistakes, or empty>", "passed": <true if the program is fully correct, else false>}}.'
)

CRITIC_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"critique": {"type": "string"}, "passed": {"type": "boolean"}},
    "required": ["critique", "passed"],
    "additionalProperties": False,
}

REFINE_AFTER_CRITIQUE_SYSTEM = (
    "You are an expert Python programmer. A reviewer flagged problems in your previous program. Fix them and "
    "give only the full corrected program in a single ```python code block."
)

REDRAFT_CRITIC_SYSTEM = (
    "You are a senior code reviewer. Judge whether the program solves the problem. Write your critique inside "
    "<critique></critique>, then your decision inside <suggestion></suggestion>: pass if it is correct, refine if "
    "the approach is right but details are wrong, redraft if the approach itself is wrong."
)

REFINE_INSTRUCTION = "Keep your approach and fix the problems the reviewer found."
REDRAFT_INSTRUCTION = "Your approach is fundamentally flawed: write a new solution that takes a different approach."


CRITIC_CONFIDENCE_JSON = ' Also include "confidence": a number from 0 to 1, how sure you are of your verdict.'
CRITIC_CONFIDENCE_XML = " Finally give how sure you are of your verdict, from 0 to 1, as <confidence>X</confidence>."


def critic_messages(problem: Problem, code: str, system: str, confidence: str = "") -> list[Message]:
    """The critic's request: the problem and the program to review (and, if given, a confidence request)."""
    stdio = " (it must read standard input and write standard output)" if problem.kind == "stdio" else ""
    body = f"Problem:\n{problem.prompt.strip()}\n\nProgram:\n```python\n{code.rstrip()}\n```"
    return [Message.system(system.format(stdio=stdio) + confidence), Message.user(body)]


def critic_schema(ask_confidence: bool) -> dict[str, object]:
    """The critic's JSON Schema, with a confidence field when asked for one."""
    if not ask_confidence:
        return CRITIC_SCHEMA
    properties = {"critique": {"type": "string"}, "passed": {"type": "boolean"}, "confidence": {"type": "number"}}
    return {**CRITIC_SCHEMA, "properties": properties, "required": ["critique", "passed", "confidence"]}
