"""The last part of log files, bounded in size and aware of rotation.

Each file contributes at most `max_bytes`, cut at a line boundary. When the file is shorter than
that (it was just rotated: the incident's lines are in the previous file), the tail of its
predecessor (`FILE.1`, or `FILE.1.gz`) fills the rest, oldest first, marked where one file ends.
The file is read through one descriptor, so a rotation during the read does not mix two files.
A log or rotated file that is a symbolic link, a FIFO or a device is refused, in one line naming
it, and never followed: the rest is captured.
"""

from __future__ import annotations

import errno
import gzip
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path

from infersight.capture.parts import PartOutput

DEFAULT_MAX_BYTES = 1 << 20  # a MiB per log: half an hour of a busy service's warnings


def _tail_fd(fd: int, size: int, max_bytes: int) -> bytes:
    start = max(0, size - max_bytes)
    os.lseek(fd, start, os.SEEK_SET)
    data = b""
    while len(data) < size - start:
        chunk = os.read(fd, min(1 << 20, size - start - len(data)))
        if not chunk:
            break
        data += chunk
    cut = data.find(b"\n")
    if start > 0 and 0 <= cut < len(data) - 1:  # drop the partial first line (not the only one)
        data = data[cut + 1 :]
    return data


class Refused(ValueError):
    """A log not read for what it is (a link, a FIFO); `str()` says what, not where."""


def _open(path: Path) -> int:
    """A descriptor on `path` itself: a symbolic link is refused, never followed (a link planted
    where a log or its rotated file should be, to /etc/shadow, would copy that file into a
    bundle that `serve` hands out), and so is anything but a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP and path.is_symlink():
            raise Refused(
                "a symbolic link, not a regular file: not followed (give the file itself)"
            ) from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Refused("not a regular file")
    return fd


def _tail_plain(path: Path, max_bytes: int) -> tuple[bytes, int]:
    """(the tail, the file's size)."""
    fd = _open(path)
    try:
        size = os.fstat(fd).st_size
        return _tail_fd(fd, size, max_bytes), size
    finally:
        os.close(fd)


def _tail_gz(path: Path, max_bytes: int) -> bytes:
    """The last `max_bytes` of a gzip file, reading at most 64 × that decompressed."""
    keep = b""
    total = 0
    with os.fdopen(_open(path), "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as f:
        while chunk := f.read(1 << 20):
            total += len(chunk)
            if total > 64 * max_bytes:
                break
            keep = (keep + chunk)[-max_bytes:]
    cut = keep.find(b"\n")
    return keep[cut + 1 :] if total > max_bytes and cut >= 0 else keep


def _previous(path: Path) -> Path | None:
    """The rotated file beside `path`, whatever it is (a link included: `_open` judges it)."""
    for cand in (path.with_name(path.name + ".1"), path.with_name(path.name + ".1.gz")):
        if os.path.lexists(cand):
            return cand
    return None


def _why(exc: BaseException) -> str:
    if isinstance(exc, Refused):
        return str(exc)
    what = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or "damaged"
    return f"cannot be read ({what})"


@dataclass(frozen=True)
class Tail:
    """A log's tail, and what could not be added to it (its rotated file refused or damaged)."""

    data: bytes
    problems: tuple[str, ...] = ()


def tail_log(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Tail:
    """The tail of `path`, topped up from its rotated predecessor when short. OSError or
    `Refused` when `path` itself cannot be read."""
    data, size = _tail_plain(path, max_bytes)
    room = max_bytes - size
    prev = _previous(path)
    if prev is None or room <= 256:
        return Tail(data)
    try:
        old = _tail_gz(prev, room) if prev.suffix == ".gz" else _tail_plain(prev, room)[0]
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile, Refused) as exc:
        return Tail(data, (f"{prev}: {_why(exc)}",))
    if old:
        mark = f"\n--- end of {prev.name}; {path.name} follows ---\n".encode()
        data = old.rstrip(b"\n") + mark + data
    return Tail(data)


def capture_logs(paths: list[Path], max_bytes: int = DEFAULT_MAX_BYTES) -> PartOutput:
    artifacts: dict[str, bytes] = {}
    notes = []
    for i, path in enumerate(paths):
        name = f"logs/{i}-{path.name}"
        try:
            tail = tail_log(path, max_bytes)
        except (OSError, Refused) as exc:
            notes.append(f"{path}: {_why(exc)}")
            continue
        artifacts[name] = tail.data
        notes += tail.problems
    if not artifacts and notes:
        raise RuntimeError("; ".join(notes))
    total = sum(len(d) for d in artifacts.values())
    note = "; ".join([f"{len(artifacts)} logs, {total:,} bytes", *notes])
    return PartOutput(artifacts, note, partial=bool(notes))
