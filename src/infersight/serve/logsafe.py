"""`infersight serve`'s log: every line scrubbed of secrets and of control characters.

Alert labels, request paths and errors reach the log as values; a label holding an escape
sequence would drive the terminal tailing the log, and one holding a newline could forge a line
("... INFO capture done: all clear"). Each record's message is formatted, then passed through the
redaction layer (`infersight.redact`) and shown with control characters as `\\xNN`
(`report/textsafe.py`), newlines included: one record, one line.
"""

from __future__ import annotations

import logging
from typing import TextIO

from infersight.redact import Redactor
from infersight.report.textsafe import clean

#: the loggers `serve` writes: its own and uvicorn's (the access log quotes request paths)
LOGGERS = ("infersight", "uvicorn", "uvicorn.error", "uvicorn.access")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class SafeLines(logging.Filter):
    """Every record's message scrubbed of the process's secrets and made one printable line."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.redactor = Redactor(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = clean(self.redactor.scrub(record.getMessage()), one_line=True)
        record.args = None
        if record.exc_info and not record.exc_text:  # a traceback keeps its lines, not secrets
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = clean(self.redactor.scrub(record.exc_text))
        return True


def log_to(stream: TextIO | None, secrets: list[str]) -> logging.Handler:
    """Send `serve`'s loggers to `stream` (stderr when None), at INFO, through `SafeLines`."""
    handler = logging.StreamHandler(stream)
    handler.addFilter(SafeLines(secrets))
    handler.setFormatter(logging.Formatter(FORMAT))
    for name in LOGGERS:
        lg = logging.getLogger(name)
        lg.handlers = [handler]
        lg.setLevel(logging.INFO)
        lg.propagate = False
    return handler
