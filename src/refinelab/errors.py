"""The error tree.

::

    RefinelabError
    ├── UserError                 bad input, config or environment: one line, exit code 2
    │   ├── InputError            a file's content is wrong (names file, line, field)
    │   ├── MissingDependency     an optional package or system tool is absent (names the fix)
    │   ├── EndpointError         the model endpoint cannot work as configured (key, model, URL)
    │   └── CacheMiss             replay mode found no stored response for a request
    └── InfrastructureError       something outside the model failed (sandbox, endpoint);
        ├── EndpointFailed        recorded and retried, never scored as a wrong answer
        └── SandboxUnavailable    no sandbox is left to run programs (every cluster node lost): the
                                  run stops, and resumes when run again

    Raised by a model backend and handled inside :class:`~refinelab.models.Model`, never escaping it:

    TransientError                worth retrying (429, 5xx, timeout, dropped connection)
    NotSupported                  the server rejected a feature; the request goes again without it

    Raised by a strategy's :class:`~refinelab.strategies.Env` before a call and handled inside the strategy:

    BudgetExhausted               the next call would go over a budget; the trajectory ends ("budget")

Generated code that fails is data (a :class:`~refinelab.sandbox.TestOutcome`), never an exception.
Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations

__all__ = [
    "BudgetExhausted",
    "CacheMiss",
    "EndpointError",
    "EndpointFailed",
    "InfrastructureError",
    "InputError",
    "MissingDependency",
    "NotSupported",
    "RefinelabError",
    "SandboxUnavailable",
    "TransientError",
    "UserError",
]


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


class TransientError(Exception):
    """A failure worth retrying: 429, 5xx, a timeout, a dropped connection, a malformed response.

    ``connection`` is True when no connection could be made at all (refused, unknown host, no answer to
    the connection, not an http(s) URL): retried only if the server has answered this model before.
    """

    def __init__(self, reason: str, *, retry_after: float | None = None, connection: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.connection = connection


class NotSupported(Exception):
    """The server rejected a feature (``n`` > 1, structured output, a sampling setting or one of its values,
    a reasoning effort); the request can go without it, or with the field the server named instead.

    ``value``: the refused value, when the server refused that value rather than the setting; ``reason``: the
    server's words; ``rename``: the field to use instead (``max_completion_tokens`` for ``max_tokens``).
    """

    def __init__(self, feature: str, *, value: str | None = None, reason: str = "", rename: str | None = None) -> None:
        super().__init__(feature)
        self.feature = feature
        self.value = value
        self.reason = reason
        self.rename = rename


class EndpointError(UserError):
    """The request cannot succeed as configured (bad key, unknown model, request too long, nothing listening).

    The message says what to do; the CLI prints it and exits with code 2.
    """


class EndpointFailed(InfrastructureError):
    """The endpoint kept failing after every retry. Never scored as a wrong answer."""

    def __init__(self, message: str, retries: int) -> None:
        super().__init__(message)
        self.retries = retries


class SandboxUnavailable(InfrastructureError):
    """Nothing is left to run programs on (every node of a cluster sandbox was lost and none joined).

    Unlike other infrastructure errors it is not recorded per unit: it stops the run, which resumes
    when run again.
    """


class CacheMiss(UserError):
    """Replay mode (read-only cache) found no stored response for a request."""


class BudgetExhausted(Exception):
    """A budget would be exceeded by the next call; the strategy ends its trajectory with the reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
