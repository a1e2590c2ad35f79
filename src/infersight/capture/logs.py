"""The last part of log files, bounded in size and aware of rotation.

Each file contributes at most `max_bytes`, cut at a line boundary. When the file is shorter than
that (it was just rotated: the incident's lines are in the previous file), the tail of its
predecessor (`FILE.1`, or `FILE.1.gz`) fills the rest, oldest first, marked where one file ends.
The file is read through one descriptor, so a rotation during the read does not mix two files.
"""

from __future__ import annotations

import gzip
import os
import stat
import zlib
from pathlib import Path

from infersight import userfile
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


def _tail_plain(path: Path, max_bytes: int) -> tuple[bytes, int]:
    """(the tail, the file's size)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path}: not a regular file")
        return _tail_fd(fd, st.st_size, max_bytes), st.st_size
    finally:
        os.close(fd)


def _tail_gz(path: Path, max_bytes: int) -> bytes:
    """The last `max_bytes` of a gzip file, reading at most 64 × that decompressed."""
    keep = b""
    total = 0
    fd = userfile.open_regular(path)  # a FIFO named like a rotated log is never waited on
    with os.fdopen(fd, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as f:
        while chunk := f.read(1 << 20):
            total += len(chunk)
            if total > 64 * max_bytes:
                break
            keep = (keep + chunk)[-max_bytes:]
    cut = keep.find(b"\n")
    return keep[cut + 1 :] if total > max_bytes and cut >= 0 else keep


def _previous(path: Path) -> Path | None:
    for cand in (path.with_name(path.name + ".1"), path.with_name(path.name + ".1.gz")):
        if cand.is_file():
            return cand
    return None


def tail_log(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The tail of `path`, topped up from its rotated predecessor when short."""
    data, size = _tail_plain(path, max_bytes)
    room = max_bytes - size
    prev = _previous(path)
    if prev is not None and room > 256:
        try:
            old = _tail_gz(prev, room) if prev.suffix == ".gz" else _tail_plain(prev, room)[0]
        except (OSError, EOFError, zlib.error, ValueError):
            old = b""
        if old:
            mark = f"\n--- end of {prev.name}; {path.name} follows ---\n".encode()
            data = old.rstrip(b"\n") + mark + data
    return data


def capture_logs(paths: list[Path], max_bytes: int = DEFAULT_MAX_BYTES) -> PartOutput:
    artifacts: dict[str, bytes] = {}
    notes = []
    for i, path in enumerate(paths):
        name = f"logs/{i}-{path.name}"
        try:
            artifacts[name] = tail_log(path, max_bytes)
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            notes.append(f"{path}: cannot be read ({why})")
    if not artifacts and notes:
        raise RuntimeError("; ".join(notes))
    total = sum(len(d) for d in artifacts.values())
    note = "; ".join([f"{len(artifacts)} logs, {total:,} bytes", *notes])
    return PartOutput(artifacts, note, partial=bool(notes))
