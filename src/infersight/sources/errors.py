"""Errors from a Prometheus-compatible source: one line each, saying what is wrong and what to do.

`str(exc)` is that line, so the CLI prints it as is. `retryable` tells whether trying again
later could help (the client has already retried when it says so).
"""

from __future__ import annotations


class SourceError(RuntimeError):
    """Base: something went wrong talking to a metrics source."""

    retryable = False

    def __init__(self, message: str) -> None:
        super().__init__(message.replace("\n", " "))

    def __str__(self) -> str:
        return str(self.args[0])


class ServerUnreachable(SourceError):
    """Connection refused / DNS failure / TLS failure, after every retry."""

    retryable = True


class QueryTimeout(SourceError):
    """The server did not answer in time, after every retry."""

    retryable = True


class AuthError(SourceError):
    """401 or 403: credentials missing or refused."""


class BadQuery(SourceError):
    """The server rejected the PromQL (400/422, or `errorType: bad_data`)."""

    def __init__(self, message: str, expr: str = "") -> None:
        super().__init__(message)
        self.expr = expr


class MalformedResponse(SourceError):
    """The answer is not JSON, or not the shape the Prometheus HTTP API documents."""


class ServerError(SourceError):
    """5xx / 429 after every retry, another refused request, or an error the server reported."""

    retryable = True
