"""The durable queue of `infersight serve`: one file per accepted capture, until it is done.

A capture answered "accepted" is a promise: Alertmanager will not send the group again before
its `repeat_interval` (hours). So each accepted job is written, atomically and flushed to disk,
to `<queue_dir>/<id>.json` *before* the answer, removed once the capture has run (done or
failed), and whatever is still there at the next start is resumed. A job is lost only with
the disk; it runs twice only if the process dies between the end of its capture and the
removal of its file.

    {"version": 1, "id": ..., "received_at": 1796000000.0, "notification": {...}}
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infersight.safe_write import OutputError, check_folder, describe, write_text
from infersight.serve.alerts import Notification, PayloadError, parse_notification

VERSION = 1
SUFFIX = ".json"


class SpoolError(Exception):
    """A job that cannot be kept on disk; `str()` is the one line to log or answer."""


@dataclass(frozen=True)
class Spooled:
    """One job read back from the queue folder."""

    id: str
    received_at: float
    notification: Notification


class Spool:
    """The queue folder: `put` before answering, `remove` when done, `load` at start."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def open(self) -> None:
        """Make the folder (OutputError, one line, when it cannot take files)."""
        check_folder(self.folder, create=True)

    def path(self, job_id: str) -> Path:
        return self.folder / f"{job_id}{SUFFIX}"

    def exists(self, job_id: str) -> bool:
        return os.path.lexists(self.path(job_id))

    def put(self, job_id: str, received_at: float, notification: Notification) -> None:
        doc = {
            "version": VERSION,
            "id": job_id,
            "received_at": received_at,
            "notification": notification.model_dump(mode="json"),
        }
        try:
            write_text(self.path(job_id), json.dumps(doc), overwrite=False)
        except OSError as exc:
            raise SpoolError(f"{self.path(job_id)}: cannot be written ({describe(exc)})") from None
        except OutputError as exc:
            raise SpoolError(str(exc)) from None

    def remove(self, job_id: str) -> None:
        """Forget a finished job; SpoolError if its file stays (it would run again)."""
        try:
            self.path(job_id).unlink(missing_ok=True)
        except OSError as exc:
            raise SpoolError(f"{self.path(job_id)}: cannot be removed ({describe(exc)})") from None

    def load(self) -> tuple[list[Spooled], list[str]]:
        """The jobs left by the last run, oldest first, and one line per file that is not one
        (left where it is, for a person to look at)."""
        jobs: list[Spooled] = []
        problems: list[str] = []
        try:
            names = sorted(os.listdir(self.folder))
        except OSError as exc:
            return [], [f"{self.folder}: cannot be listed ({describe(exc)})"]
        for name in names:
            if not name.endswith(SUFFIX) or name.startswith("."):
                continue  # safe_write's temporaries of a write the last run did not finish
            path = self.folder / name
            try:
                jobs.append(_read(path))
            except SpoolError as exc:
                problems.append(str(exc))
        jobs.sort(key=lambda j: (j.received_at, j.id))
        return jobs, problems


def _read(path: Path) -> Spooled:
    try:
        with open(path, "rb") as f:
            doc: Any = json.loads(f.read())
    except OSError as exc:
        raise SpoolError(f"{path}: cannot be read ({describe(exc)}); left as is") from None
    except (ValueError, RecursionError):
        raise SpoolError(f"{path}: not a queued capture (not JSON); left as is") from None
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise SpoolError(f"{path}: not a queued capture of version {VERSION}; left as is")
    job_id, received = doc.get("id"), doc.get("received_at")
    if job_id != path.name.removesuffix(SUFFIX) or not isinstance(received, int | float):
        raise SpoolError(f"{path}: its id or received_at do not match the file; left as is")
    try:
        notification = parse_notification(json.dumps(doc.get("notification")).encode())
    except PayloadError as exc:
        raise SpoolError(f"{path}: {exc}; left as is") from None
    return Spooled(job_id, float(received), notification)
