"""Parts of a capture: each optional, each time-bounded, none able to block another.

A part is a function returning its artifacts (name → bytes) and a one-line note. It runs in a
thread of its own; when it outlives its time it is recorded as timed out and the capture goes
on without waiting for it (its subprocesses have their own timeouts, so nothing is left behind
for long). Whatever a part raises is recorded as its failure, in one line, never raised on.
"""

from __future__ import annotations

import concurrent.futures as cf
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from infersight.redact import Redactor

Status = Literal["ok", "partial", "failed", "timed out", "skipped"]


@dataclass(frozen=True)
class PartOutput:
    """What a part produced: artifacts, a note, and `partial` when some of it failed."""

    artifacts: dict[str, bytes] = field(default_factory=dict)
    note: str = ""
    partial: bool = False


@dataclass(frozen=True)
class PartResult:
    name: str
    status: Status
    seconds: float
    note: str = ""
    artifacts: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "seconds": round(self.seconds, 3),
            "note": self.note,
            "artifacts": list(self.artifacts),
        }


@dataclass(frozen=True)
class Part:
    name: str
    run: Callable[[], PartOutput]
    timeout_s: float


Progress = Callable[[str, str], None]  # (part name, status) as each part ends


def run_parts(
    parts: list[Part], redactor: Redactor, progress: Progress | None = None
) -> tuple[list[PartResult], dict[str, bytes]]:
    """Run every part at once; (results in the parts' order, all artifacts)."""
    results: dict[str, PartResult] = {}
    artifacts: dict[str, bytes] = {}
    pool = cf.ThreadPoolExecutor(max_workers=max(1, len(parts)), thread_name_prefix="capture")
    started = time.monotonic()
    futures = {pool.submit(p.run): p for p in parts}
    try:
        for fut, part in futures.items():
            left = part.timeout_s - (time.monotonic() - started)
            try:
                out = fut.result(timeout=max(0.0, left))
            except cf.TimeoutError:
                res = PartResult(
                    part.name,
                    "timed out",
                    time.monotonic() - started,
                    f"no result within {part.timeout_s:g} s; left behind",
                )
            except Exception as exc:  # a part's failure is a record, never the capture's end
                what = redactor.scrub(" ".join(str(exc).split())) or type(exc).__name__
                res = PartResult(part.name, "failed", time.monotonic() - started, what)
            else:
                names = tuple(sorted(out.artifacts))
                artifacts.update(out.artifacts)
                status: Status = "partial" if out.partial else "ok"
                note = redactor.scrub(out.note)
                res = PartResult(part.name, status, time.monotonic() - started, note, names)
            results[part.name] = res
            if progress:
                progress(part.name, res.status)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return [results[p.name] for p in parts], artifacts
