"""Standard output that cannot be written (redirected to /dev/full, a closed pipe) ends the
command with one line on stderr and exit status 3 (an input/output error; 1 means findings),
not a traceback.

    from infersight.cli.stdout_guard import guarded
    guarded(app)          # in main(): runs the command, then flushes stdout under the guard
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from typing import NoReturn

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


def guarded(run: Callable[[], object]) -> None:
    """Run the command, then flush stdout; an OSError writing stdout becomes one line."""
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
