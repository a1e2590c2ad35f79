"""The one reader of every file a user names (a config, a token, a saved alert, a CSV, ...).

- Opened with O_NONBLOCK, so a FIFO never blocks the open; then only a regular file is read:
  a FIFO, a device (/dev/zero), a socket or a folder is refused in one line saying what it is.
- Read up to a cap from `Limits` (`file_bytes` by default, or another size limit such as
  `response_bytes` for saved HTTP answers); a larger file is refused in one line naming the
  file, the cap and how to raise it, never truncated and never read past the cap.
- Symbolic links are followed (a mounted secret is one); what they lead to is checked.

Big binary inputs with limits of their own (bundles: `bundle/container.py`) do not come here.
"""

from __future__ import annotations

import errno
import os
import stat

from infersight.limits import LimitError, Limits, current

_CHUNK = 1 << 20


class UserFileError(ValueError):
    """A named file that cannot be read as one; `str()` is the line to print (the file, what is
    wrong, what to do)."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _label(path: str | os.PathLike[str], what: str) -> str:
    return f"{what} {os.fspath(path)}" if what else os.fspath(path)


def open_regular(path: str | os.PathLike[str], what: str = "") -> int:
    """A blocking descriptor on the regular file at `path`; UserFileError for anything else,
    decided without blocking (a FIFO with no writer, a device)."""
    label = _label(path, what)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket (or a FIFO on some systems): say which
            try:
                kind = _kind(os.stat(path).st_mode)
            except OSError:
                kind = "not a regular file"
            raise UserFileError(f"{label}: is {kind}, not a file; give a regular file") from None
        raise UserFileError(f"{label}: cannot be read ({exc.strerror or exc})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise UserFileError(f"{label}: is a folder; give a file")
        raise UserFileError(
            f"{label}: is {_kind(mode)}, not a regular file; infersight reads only regular "
            "files (save the content to a file and give that)"
        )
    os.set_blocking(fd, True)
    return fd


def read_bytes(
    path: str | os.PathLike[str],
    what: str = "",
    *,
    limit: str = "file_bytes",
    limits: Limits | None = None,
) -> bytes:
    """The whole content of the regular file at `path`, at most `limits.<limit>` bytes.

    `limits` given means the command has --raise-limit (the refusal names it); None reads the
    defaults raised by $INFERSIGHT_LIMITS, and the refusal names only that.
    """
    label = _label(path, what)
    flag = limits is not None
    if limits is None:
        try:
            limits = current()
        except LimitError as exc:
            raise UserFileError(str(exc)) from None
    cap = int(getattr(limits, limit))
    fd = open_regular(path, what)
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(fd).st_size
        chunks: list[bytes] = []
        got = 0
        if size <= cap:  # a larger one is refused before a byte of it is read
            while got <= cap and (chunk := f.read(min(_CHUNK, cap + 1 - got))):
                chunks.append(chunk)
                got += len(chunk)
    if size > cap or got > cap:
        raise UserFileError(
            f"{label}: larger than the {cap:,}-byte limit on {limit}; is it the right file? "
            f"If so, {limits.hint(limit, flag)}"
        )
    return b"".join(chunks)


def read_text(
    path: str | os.PathLike[str],
    what: str = "",
    *,
    limit: str = "file_bytes",
    limits: Limits | None = None,
    encoding: str = "utf-8",
) -> str:
    """`read_bytes`, decoded; a file that is not text in `encoding` is refused in one line."""
    data = read_bytes(path, what, limit=limit, limits=limits)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise UserFileError(
            f"{_label(path, what)}: not UTF-8 text (byte {exc.start}); is it the right file?"
        ) from None
