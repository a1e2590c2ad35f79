"""Grouping, de-duplication and bounded work for Alertmanager notifications.

A notification names its group (`groupKey`) and each alert's `fingerprint`. Alertmanager sends
a group again and again (when alerts join it, every `repeat_interval`, from each replica of a
cluster, on retries): only a *new* firing group starts a capture; the rest is merged into the
capture already made or under way. A group that resolves is forgotten, so the same group firing
later is a new incident and is captured again.

Work is bounded twice: at most `max_concurrency` captures run at once, and at most `queue_size`
wait. A new group arriving when the queue is full is refused (`SHED`, answered 503 with
Retry-After) and *not* remembered, so Alertmanager's retry is accepted once there is room: no
capture is lost, none is made twice. Memory is bounded too: at most `max_groups` groups are
remembered (for `dedupe_window` seconds after their last notification), each with at most
`MAX_FINGERPRINTS` fingerprints, and the page keeps the last `recent` captures.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import enum
import hashlib
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from infersight.redact import Redactor
from infersight.serve.alerts import Notification

MAX_FINGERPRINTS = 1000


class Decision(enum.Enum):
    ACCEPTED = "accepted"  # a new firing group: a capture is queued
    DUPLICATE = "duplicate"  # merged into a capture made or under way
    RESOLVED = "resolved"  # the group resolved: forgotten
    SHED = "shed"  # no room in the queue: refused, to be retried


@dataclass
class CaptureRecord:
    """One capture as the page and /metrics see it."""

    id: str
    group_key: str
    alertname: str
    scope: dict[str, str]
    starts_at: float
    received_at: float
    status: str = "queued"  # queued, running, done, failed
    notifications: int = 1
    fingerprints: int = 0
    bundle: str | None = None
    reports: dict[str, str] = field(default_factory=dict)
    root_causes: list[str] = field(default_factory=list)
    summary: str = ""
    error: str = ""
    seconds: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Job:
    id: str
    group_key: str
    starts_at: float  # the alert's startsAt (the earliest of the group's firing alerts)
    scope: dict[str, str]
    notification: Notification
    received_at: float  # when the notification came: the moment diagnosed (serve/moment.py)


@dataclass(frozen=True)
class Outcome:
    bundle: Path | None
    reports: dict[str, Path]
    root_causes: list[str]
    summary: str
    failed_parts: list[str] = field(default_factory=list)


Runner = Callable[[Job], Outcome]


@dataclass
class _Group:
    record: CaptureRecord
    last_seen: float
    fingerprints: set[str]


@dataclass
class Stats:
    accepted: int = 0
    duplicates: int = 0
    resolved: int = 0
    shed: int = 0
    done: int = 0
    failed: int = 0
    in_progress: int = 0
    max_in_progress: int = 0


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:40] or "alert"


class Dispatcher:
    def __init__(
        self,
        runner: Runner,
        *,
        max_concurrency: int = 2,
        queue_size: int = 32,
        dedupe_window: float = 86400.0,
        max_groups: int = 10_000,
        recent: int = 200,
        clock: Callable[[], float] = time.time,
        redactor: Redactor | None = None,
        on_done: Callable[[CaptureRecord], None] | None = None,
    ) -> None:
        self.runner = runner
        self.max_concurrency = max_concurrency
        self.queue_size = queue_size
        self.dedupe_window = dedupe_window
        self.max_groups = max_groups
        self.clock = clock
        self.redactor = redactor or Redactor()
        self.on_done = on_done
        self.stats = Stats()
        self.queued = 0
        self._groups: OrderedDict[str, _Group] = OrderedDict()  # by last notification
        self._by_fingerprint: dict[str, str] = {}
        self.records: OrderedDict[str, CaptureRecord] = OrderedDict()
        self._recent = recent
        self._queue: asyncio.Queue[Job] | None = None
        self._workers: list[asyncio.Task[None]] = []
        self._pool: cf.ThreadPoolExecutor | None = None
        self._serial = 0

    # -- lifecycle --------------------------------------------------------------------------------
    async def start(self) -> None:
        self._queue = asyncio.Queue(maxsize=self.queue_size + self.max_concurrency)
        self._pool = cf.ThreadPoolExecutor(self.max_concurrency, thread_name_prefix="capture")
        self._workers = [asyncio.create_task(self._work()) for _ in range(self.max_concurrency)]

    async def stop(self) -> None:
        for w in self._workers:
            w.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    async def drain(self) -> None:
        """Wait until every accepted capture has finished (tests, shutdown)."""
        assert self._queue is not None
        await self._queue.join()

    @property
    def groups(self) -> int:
        return len(self._groups)

    @property
    def fingerprints(self) -> int:
        return len(self._by_fingerprint)

    # -- intake -----------------------------------------------------------------------------------
    def submit(self, n: Notification) -> tuple[Decision, CaptureRecord | None]:
        """Decide what to do with one notification; never blocks."""
        assert self._queue is not None, "start() first"
        now = self.clock()
        self._expire(now)
        key = n.groupKey
        firing = n.firing()
        if not firing:
            self._forget(key)
            self.stats.resolved += 1
            return Decision.RESOLVED, None
        fps = {a.key() for a in firing}
        group = self._groups.get(key)
        if group is None:
            # an alert already captured under another group key (two routes, two receivers,
            # a regrouping): the same incident; merge, and take this key as an alias
            owner = next((o for fp in sorted(fps) if (o := self._by_fingerprint.get(fp))), None)
            group = self._groups.get(owner) if owner is not None else None
            if group is not None:
                self._groups[key] = group
        if group is not None:
            self._merge(group, key, fps, now)
            self.stats.duplicates += 1
            return Decision.DUPLICATE, group.record
        if self.queued + self.stats.in_progress >= self.queue_size + self.max_concurrency:
            self.stats.shed += 1
            return Decision.SHED, None
        record = self._new_record(n, now)
        group = _Group(record, now, set())
        self._groups[key] = group
        self._merge(group, key, fps, now)
        self._evict()
        self.queued += 1
        self._queue.put_nowait(Job(record.id, key, n.starts_at(), n.scope(), n, now))
        self.stats.accepted += 1
        return Decision.ACCEPTED, record

    def _new_record(self, n: Notification, now: float) -> CaptureRecord:
        self._serial += 1
        stamp = datetime.fromtimestamp(now, UTC).strftime("%Y%m%dT%H%M%SZ")
        digest = hashlib.sha256(f"{n.groupKey}\0{self._serial}".encode()).hexdigest()[:8]
        record = CaptureRecord(
            id=f"{stamp}-{_slug(n.name())}-{digest}",
            group_key=n.groupKey,
            alertname=n.name(),
            scope=n.scope(),
            starts_at=n.starts_at(),
            received_at=now,
        )
        self.records[record.id] = record
        self._trim()
        return record

    def _trim(self) -> None:
        """Keep the last `recent` records; never drop one under way (trimmed when it ends)."""
        extra = len(self.records) - self._recent
        for rid in [r.id for r in self.records.values() if r.status in ("done", "failed")]:
            if extra <= 0:
                break
            del self.records[rid]
            extra -= 1

    def _merge(self, group: _Group, key: str, fps: set[str], now: float) -> None:
        group.last_seen = now
        group.record.notifications += 1 if group.fingerprints else 0
        for fp in fps:
            if len(group.fingerprints) >= MAX_FINGERPRINTS:
                break
            if fp not in group.fingerprints:
                group.fingerprints.add(fp)
                self._by_fingerprint.setdefault(fp, key)
        group.record.fingerprints = len(group.fingerprints)
        self._groups.move_to_end(key)

    def _forget(self, key: str) -> None:
        group = self._groups.pop(key, None)
        if group is None:
            return
        aliases = [k for k, g in self._groups.items() if g is group]
        for fp in group.fingerprints:
            if self._by_fingerprint.get(fp) == key:
                if aliases:
                    self._by_fingerprint[fp] = aliases[0]
                else:
                    del self._by_fingerprint[fp]

    def _expire(self, now: float) -> None:
        while self._groups:
            key, group = next(iter(self._groups.items()))
            if now - group.last_seen <= self.dedupe_window:
                break
            self._forget(key)

    def _evict(self) -> None:
        while len(self._groups) > self.max_groups:
            self._forget(next(iter(self._groups)))

    # -- work -------------------------------------------------------------------------------------
    async def _work(self) -> None:
        assert self._queue is not None
        loop = asyncio.get_running_loop()
        while True:
            job = await self._queue.get()
            self.queued -= 1
            record = self.records.get(job.id) or self._groups[job.group_key].record
            record.status = "running"
            self.stats.in_progress += 1
            self.stats.max_in_progress = max(self.stats.max_in_progress, self.stats.in_progress)
            started = time.monotonic()
            try:
                outcome = await loop.run_in_executor(self._pool, self.runner, job)
            except Exception as exc:  # one capture's failure is its record, not the service's end
                record.status = "failed"
                record.error = self.redactor.scrub(" ".join(str(exc).split())) or repr(exc)
                self.stats.failed += 1
            else:
                record.status = "done"
                record.bundle = str(outcome.bundle) if outcome.bundle else None
                record.reports = {k: str(v) for k, v in outcome.reports.items()}
                record.root_causes = outcome.root_causes
                record.summary = outcome.summary
                if outcome.failed_parts:
                    record.error = "parts failed: " + ", ".join(outcome.failed_parts)
                self.stats.done += 1
            finally:
                self.stats.in_progress -= 1
                record.seconds = time.monotonic() - started
                self._trim()
                self._queue.task_done()
            if self.on_done is not None:
                self.on_done(record)
