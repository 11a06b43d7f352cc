"""Errors a backend raises; :class:`~refinelab.models.Model` decides what to retry."""

from __future__ import annotations

from refinelab._errors import InfrastructureError, UserError


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
    """The server rejected a feature (``n`` > 1, structured output); the request can go without it."""

    def __init__(self, feature: str) -> None:
        super().__init__(feature)
        self.feature = feature


class EndpointError(UserError):
    """The request cannot succeed as configured (bad key, unknown model, request too long, nothing listening).

    The message says what to do; the CLI prints it and exits with code 2.
    """


class EndpointFailed(InfrastructureError):
    """The endpoint kept failing after every retry. Never scored as a wrong answer."""

    def __init__(self, message: str, retries: int) -> None:
        super().__init__(message)
        self.retries = retries


class CacheMiss(UserError):
    """Replay mode (read-only cache) found no stored response for a request."""
