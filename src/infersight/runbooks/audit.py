"""The audit log: one JSON object per line, appended and fsynced record by record, never
rewritten. A run killed half-way leaves every record written before the kill intact.

Each record says who (user@host), when (UTC, ISO 8601), which run and runbook, what (the event
and the step as it ran) and the outcome; every string passes the run's `Redactor` first, so the
secrets it knows and credential-like text (tokens, passwords, URL userinfo) never reach the file.
"""

from __future__ import annotations

import errno
import getpass
import json
import os
import socket
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from infersight.redact import Redactor

#: where runs are logged when neither --audit nor $INFERSIGHT_RUNBOOK_AUDIT says otherwise
DEFAULT_AUDIT = Path("~/.local/state/infersight/runbook-audit.jsonl")


class AuditError(OSError):
    """The audit log cannot be appended to; nothing runs without it."""


def default_path() -> Path:
    return Path(os.environ.get("INFERSIGHT_RUNBOOK_AUDIT") or DEFAULT_AUDIT).expanduser()


def who() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid-{os.getuid()}"
    return f"{user}@{socket.gethostname()}"


class AuditLog:
    """Append-only: opened with O_APPEND (a write never lands anywhere but the end), never
    truncated, never through a symlink; one write and one fsync per record."""

    def __init__(self, path: Path, redactor: Redactor | None = None) -> None:
        self.path = path
        self.redactor = redactor or Redactor()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
            # O_NONBLOCK: a FIFO named as the log fails or opens at once, never waits on a reader
            self._fd = os.open(path, flags | os.O_NONBLOCK, 0o600)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # a FIFO no one reads (or a socket)
                raise AuditError(
                    f"audit log {path}: not a regular file; give --audit FILE"
                ) from None
            raise AuditError(
                f"audit log {path}: cannot be appended to ({exc.strerror or exc}); give "
                "--audit FILE where you may write"
            ) from None
        if not stat.S_ISREG(os.fstat(self._fd).st_mode):
            os.close(self._fd)
            raise AuditError(f"audit log {path}: not a regular file; give --audit FILE")
        os.set_blocking(self._fd, True)
        self.records = 0

    def write(self, event: str, **fields: Any) -> dict[str, Any]:
        """Append one record (scrubbed) and fsync it before returning."""
        clash = {"at", "who", "event"} & set(fields)
        if clash:
            raise ValueError(f"audit record fields {sorted(clash)} are the log's own")
        record = {
            "at": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "who": who(),
            "event": event,
            **self.redactor.scrub_data(fields),
        }
        line = (json.dumps(record, sort_keys=False, default=str) + "\n").encode("utf-8")
        view = memoryview(line)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        os.fsync(self._fd)
        self.records += 1
        return record

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
