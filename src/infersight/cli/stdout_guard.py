"""Standard output that cannot be written (redirected to /dev/full, a closed pipe) ends the
command with one line on stderr and exit status 3 (an input/output error; 1 means something to
act on), not a traceback; and standard output never starts with a blank line (typer's --help
opened with one, padded).

    from infersight.cli.stdout_guard import guarded
    guarded(app)          # in main(): runs the command, then flushes stdout under the guard
"""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TextIO

#: errors that mean "stdout is gone or full", not a bug: report them in one line
_OUTPUT_ERRNOS = {errno.ENOSPC, errno.EPIPE, errno.EIO, errno.EFBIG, errno.EDQUOT}


def _stdout_failed(exc: OSError) -> NoReturn:
    # point stdout at /dev/null so the interpreter's own flush at exit cannot fail again
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    why = exc.strerror or type(exc).__name__
    code = 141 if exc.errno == errno.EPIPE else 3  # 128 + SIGPIPE for a closed pipe, as shells do
    try:
        sys.stderr.write(f"error: cannot write to standard output ({why}); nothing more written\n")
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(code)


#: a terminal's colour and style sequences: a line of nothing else is blank
_ESCAPES = re.compile(r"\x1b\[[0-9;]*m")


class NoLeadingBlankLines:
    """A text stream that drops the blank lines (spaces and style codes only) written before
    the first line with something on it; everything after passes as written."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self._held = ""  # what came before the first line with something on it
        self._started = False

    def write(self, text: str) -> int:
        if self._started:
            return self.inner.write(text)
        self._held += text
        while "\n" in self._held:
            line, rest = self._held.split("\n", 1)
            if _ESCAPES.sub("", line).strip():
                break
            self._held = rest
        if _ESCAPES.sub("", self._held).strip():
            self._started = True
            self.inner.write(self._held)
            self._held = ""
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding, buffer, ...
        return getattr(self.inner, name)


def guarded(run: Callable[[], object]) -> None:
    """Run the command, then flush stdout; an OSError writing stdout becomes one line."""
    real = sys.stdout
    sys.stdout = NoLeadingBlankLines(real)
    try:
        _run(run)
    finally:
        sys.stdout = real


def _run(run: Callable[[], object]) -> None:
    try:
        run()
        sys.stdout.flush()
    except OSError as exc:
        if exc.errno not in _OUTPUT_ERRNOS:
            raise
        _stdout_failed(exc)
    except SystemExit:
        try:
            sys.stdout.flush()
        except OSError as exc:
            if exc.errno not in _OUTPUT_ERRNOS:
                raise
            _stdout_failed(exc)
        raise
