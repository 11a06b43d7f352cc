"""The error tree.

::

    RefinelabError
    ├── UserError                 bad input, config or environment: one line, exit code 2
    │   ├── InputError            a file's content is wrong (names file, line, field)
    │   └── MissingDependency     an optional package or system tool is absent (names the fix)
    └── InfrastructureError       something outside the model failed (sandbox, endpoint);
                                  recorded and retried, never scored as a wrong answer

Generated code that fails is data (a :class:`~refinelab.sandbox.TestOutcome`), never an exception.
Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations


class RefinelabError(Exception):
    """Base of every error refinelab raises on purpose."""


class UserError(RefinelabError):
    """The user can fix this: the CLI prints the message on one line and exits with code 2."""


class InputError(UserError):
    """Bad content in an input file, located by file, line and field."""

    def __init__(self, path: object, line: int | None, field: str | None, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.problem = problem
        where = self.path if line is None else f"{self.path}:{line}"
        what = f"field {field!r}: " if field else ""
        super().__init__(f"{where}: {what}{problem}")


class MissingDependency(UserError):
    """An optional dependency is missing; the message says how to install it."""


class InfrastructureError(RefinelabError):
    """A failure outside the candidate and the model's answer (a sandbox worker died, an endpoint failed)."""
