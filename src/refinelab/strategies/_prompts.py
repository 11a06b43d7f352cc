"""Prompts, in our own words, following the structure of the studies refinelab reproduces.

Every template is a plain ``str.format`` string held by :class:`Prompts`; a run may replace any of them
(``self-refine(prompts=my_prompts.toml)``), and the trajectory records which set ran.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

from refinelab._toml import located, read_toml
from refinelab.models import Message
from refinelab.problems import Problem

CRITIC_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"critique": {"type": "string"}, "passed": {"type": "boolean"}},
    "required": ["critique", "passed"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Prompts:
    """Every prompt a strategy sends. Placeholders: ``{stdio}`` in the critic systems (a note that the
    program must use standard input and output, or nothing); ``{code}`` and ``{feedback}`` in
    ``refine_turn``."""

    actor_system: str = (
        "You are an expert Python programmer. Write a correct, efficient Python program that meets the "
        "specification exactly."
    )
    """The actor's role for a first attempt or a sample."""
    format_stdio: str = (
        "Read the input from standard input and write the answer to standard output. "
        "Give the complete program in a single ```python code block."
    )
    """Output format for stdin/stdout problems."""
    format_function: str = (
        "Give the complete implementation, including the function signature, in a single ```python code block."
    )
    """Output format for function problems."""
    refine_system: str = (
        "You are an expert Python programmer. Your previous program did not pass the tests shown below. "
        "Fix it and give the full corrected program in a single ```python code block."
    )
    """The actor's role when refining from test results (exec-refine)."""
    refine_turn: str = "Previous program:\n```python\n{code}\n```\n\nTest results:\n{feedback}"
    """The user turn asking for a fix: the previous program and what went wrong."""
    confidence_request: str = (
        "After the code block, state your confidence that the program is correct as 'Confidence: X' "
        "with X between 0 and 1."
    )
    """Appended when the actor is asked for a confidence."""
    critic_system: str = (
        "You are a senior code reviewer. Examine the program for logic errors, syntax problems and edge cases "
        "it would get wrong{stdio}. Do not rewrite the program. Answer only with JSON of the form "
        '{{"critique": "<the specific mistakes, or empty>", "passed": <true if the program is fully correct, '
        "else false>}}."
    )
    """Self-Refine's critic: JSON with ``critique`` and ``passed``."""
    redraft_critic_system: str = (
        "You are a senior code reviewer. Judge whether the program solves the problem. Write your critique "
        "inside <critique></critique>, then your decision inside <suggestion></suggestion>: pass if it is "
        "correct, refine if the approach is right but details are wrong, redraft if the approach itself is wrong."
    )
    """Self-Redraft's critic: tagged critique and pass/refine/redraft."""
    refine_after_critique_system: str = (
        "You are an expert Python programmer. A reviewer flagged problems in your previous program. Fix them and "
        "give only the full corrected program in a single ```python code block."
    )
    """The actor's role when rewriting after a critique."""
    refine_instruction: str = "Keep your approach and fix the problems the reviewer found."
    """Self-Redraft, after 'refine'."""
    redraft_instruction: str = (
        "Your approach is fundamentally flawed: write a new solution that takes a different approach."
    )
    """Self-Redraft, after 'redraft'."""
    critic_confidence_json: str = ' Also include "confidence": a number from 0 to 1, how sure you are of your verdict.'
    """Appended to the JSON critic's role when a confidence is asked for."""
    critic_confidence_xml: str = (
        " Finally give how sure you are of your verdict, from 0 to 1, as <confidence>X</confidence>."
    )
    """Appended to the tagged critic's role when a confidence is asked for."""
    source: str = field(default="default", compare=False)
    """Where the set came from (``default`` or a file path); recorded with the digest."""

    @classmethod
    def load(cls, path: str | Path) -> Prompts:
        """Prompts from a TOML file of ``name = "template"`` lines; names left out keep their defaults."""
        path = Path(path)
        table = read_toml(path)
        known = {f.name for f in fields(cls)} - {"source"}
        for key, value in table.items():
            if key not in known:
                raise located(path, key, f"unknown prompt; known: {', '.join(sorted(known))}")
            if not isinstance(value, str):
                raise located(path, key, "must be a string")
        return replace(cls(), **table, source=str(path))  # type: ignore[arg-type]

    @property
    def digest(self) -> str:
        """A short hash of the texts, so results say which prompts produced them."""
        texts = {k: v for k, v in asdict(self).items() if k != "source"}
        return hashlib.sha256(json.dumps(texts, sort_keys=True).encode()).hexdigest()[:12]

    def label(self) -> str:
        """``default`` for the shipped set, else ``source#digest``."""
        return "default" if self == DEFAULT_PROMPTS else f"{self.source}#{self.digest}"

    def task(self, problem: Problem) -> str:
        """The problem statement with its starter code and the output format."""
        parts = [problem.prompt.strip()]
        if problem.starter_code.strip() and problem.starter_code.strip() not in problem.prompt:
            parts.append(f"Starter code:\n```python\n{problem.starter_code.rstrip()}\n```")
        parts.append(self.format_stdio if problem.kind == "stdio" else self.format_function)
        return "\n\n".join(parts)

    def draft(self, problem: Problem) -> list[Message]:
        """The actor's first request."""
        return [Message.system(self.actor_system), Message.user(self.task(problem))]

    def refine(self, code: str, feedback: str) -> str:
        """The user turn that asks for a fix."""
        return self.refine_turn.format(code=code.rstrip(), feedback=feedback)

    def critic(self, problem: Problem, code: str, *, redraft: bool, ask_confidence: bool) -> list[Message]:
        """The critic's request: the problem and the program to review."""
        stdio = " (it must read standard input and write standard output)" if problem.kind == "stdio" else ""
        system = (self.redraft_critic_system if redraft else self.critic_system).format(stdio=stdio)
        if ask_confidence:
            system += self.critic_confidence_xml if redraft else self.critic_confidence_json
        body = f"Problem:\n{problem.prompt.strip()}\n\nProgram:\n```python\n{code.rstrip()}\n```"
        return [Message.system(system), Message.user(body)]


DEFAULT_PROMPTS = Prompts()
"""The shipped prompts."""


def critic_schema(ask_confidence: bool) -> dict[str, object]:
    """The critic's JSON Schema, with a confidence field when asked for one."""
    if not ask_confidence:
        return CRITIC_SCHEMA
    properties = {"critique": {"type": "string"}, "passed": {"type": "boolean"}, "confidence": {"type": "number"}}
    return {**CRITIC_SCHEMA, "properties": properties, "required": ["critique", "passed", "confidence"]}
