"""Errors from a Prometheus-compatible source: one line each, saying what is wrong and what to do.

`str(exc)` is that line, so the CLI prints it as is. `retryable` tells whether trying again
later could help (the client has already retried when it says so). Every message passes through
the redaction layer: URL userinfo and credential phrases never reach the line.
"""

from __future__ import annotations

from infersight.redact import redact_text


class SourceError(RuntimeError):
    """Base: something went wrong talking to a metrics source."""

    retryable = False

    def __init__(self, message: str) -> None:
        super().__init__(redact_text(" ".join(message.splitlines())))

    def __str__(self) -> str:
        return str(self.args[0])


class ServerUnreachable(SourceError):
    """Connection refused / DNS failure / TLS failure, after every retry."""

    retryable = True


class QueryTimeout(SourceError):
    """The server did not answer in time, after every retry."""

    retryable = True


class DeadlineExceeded(QueryTimeout):
    """The command's whole deadline ran out: nothing more can be asked of the server."""


class AuthError(SourceError):
    """401 or 403: credentials missing or refused."""


class BadCredentials(SourceError):
    """A credential that cannot be sent at all (a newline or non-ASCII in a header value)."""


class BadConnection(SourceError):
    """A URL, port or TLS file that cannot be used, found before any request is sent."""


class ResponseTooLarge(SourceError):
    """The answer exceeded the response-size limit; it was refused while streaming."""


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
