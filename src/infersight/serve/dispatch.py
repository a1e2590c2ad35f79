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

An accepted capture is kept on disk until it has run (`spool.py`): written before the answer,
removed when done, resumed by the next `start()`. `stop(grace)` lets the captures queued and
running finish for up to `grace` seconds and logs one line for each one left to the next start.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import enum
import hashlib
import logging
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
from infersight.serve.spool import Spool, Spooled, SpoolError

log = logging.getLogger("infersight.serve")
MAX_FINGERPRINTS = 1000


class Decision(enum.Enum):
    ACCEPTED = "accepted"  # a new firing group: a capture is queued
    DUPLICATE = "duplicate"  # merged into a capture made or under way
    RESOLVED = "resolved"  # the group resolved: forgotten
    SHED = "shed"  # no room in the queue: refused, to be retried
    UNSTORED = "unstored"  # the queue folder did not take it: refused, to be retried


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
    unstored: int = 0
    resumed: int = 0
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
        spool: Spool | None = None,
    ) -> None:
        self.runner = runner
        self.spool = spool  #: None: nothing kept on disk (what is queued dies with the process)
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
        self.last_error = ""  #: why the queue folder last refused a job

    # -- lifecycle --------------------------------------------------------------------------------
    async def start(self) -> None:
        """Start the workers, after queueing the captures the last run left on disk."""
        # unbounded here: `submit` bounds what it accepts, and what the last run left is
        # resumed whole even when queue_size has shrunk since
        self._queue = asyncio.Queue()
        if self.spool is not None:
            self.spool.open()
            jobs, problems = self.spool.load()
            for problem in problems:
                log.warning("queue folder: %s", problem)
            for spooled in jobs:
                self._resume(spooled)
        self._pool = cf.ThreadPoolExecutor(self.max_concurrency, thread_name_prefix="capture")
        self._workers = [asyncio.create_task(self._work()) for _ in range(self.max_concurrency)]

    async def stop(self, grace: float = 0.0) -> list[CaptureRecord]:
        """Let the queued and running captures finish for up to `grace` seconds, then stop the
        workers; one line is logged for each capture left, and they are returned. A capture
        still running is not waited for: its file stays, and it runs again at the next start."""
        left = self._unfinished()
        if left and grace > 0 and self._queue is not None:
            log.info(
                "stopping: %d captures queued, %d running; waiting up to %gs for them",
                self.queued, self.stats.in_progress, grace,
            )  # fmt: skip
            try:
                async with asyncio.timeout(grace):
                    await self._queue.join()
            except TimeoutError:
                pass
            left = self._unfinished()
        for w in self._workers:
            w.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        for record in left:
            where = (
                f"kept in {self.spool.path(record.id)}, it runs at the next start"
                if self.spool is not None
                else "dropped (no queue folder)"
            )
            log.warning(
                "capture %s for %s was %s at shutdown: %s",
                record.id, record.alertname, record.status, where,
            )  # fmt: skip
        return left

    def _unfinished(self) -> list[CaptureRecord]:
        return [r for r in self.records.values() if r.status in ("queued", "running")]

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
        if self.spool is not None:
            try:
                self.spool.put(record.id, now, n)
            except SpoolError as exc:
                del self.records[record.id]
                self.stats.unstored += 1
                self.last_error = str(exc)
                return Decision.UNSTORED, None
        group = _Group(record, now, set())
        self._groups[key] = group
        self._merge(group, key, fps, now)
        self._evict()
        self.queued += 1
        self._queue.put_nowait(Job(record.id, key, n.starts_at(), n.scope(), n, now))
        self.stats.accepted += 1
        return Decision.ACCEPTED, record

    def _new_id(self, n: Notification, now: float) -> str:
        """A fresh id: not one on the page, nor one left in the queue folder by the last run."""
        stamp = datetime.fromtimestamp(now, UTC).strftime("%Y%m%dT%H%M%SZ")
        while True:
            self._serial += 1
            digest = hashlib.sha256(f"{n.groupKey}\0{self._serial}".encode()).hexdigest()[:8]
            rid = f"{stamp}-{_slug(n.name())}-{digest}"
            if rid not in self.records and (self.spool is None or not self.spool.exists(rid)):
                return rid

    def _new_record(self, n: Notification, now: float, rid: str | None = None) -> CaptureRecord:
        record = CaptureRecord(
            id=rid or self._new_id(n, now),
            group_key=n.groupKey,
            alertname=n.name(),
            scope=n.scope(),
            starts_at=n.starts_at(),
            received_at=now,
        )
        self.records[record.id] = record
        self._trim()
        return record

    def _resume(self, spooled: Spooled) -> None:
        """Queue a capture the last run accepted and did not finish; its group is remembered
        again, so Alertmanager's next repeat of it is a duplicate."""
        assert self._queue is not None
        n = spooled.notification
        record = self._new_record(n, spooled.received_at, spooled.id)
        now = self.clock()
        key = n.groupKey
        if key not in self._groups:
            self._groups[key] = _Group(record, now, set())
            self._merge(self._groups[key], key, {a.key() for a in n.firing()}, now)
            self._evict()
        self.queued += 1
        # diagnosed at the moment the alert first came, as if it had not waited for the restart
        job = Job(record.id, key, n.starts_at(), n.scope(), n, spooled.received_at)
        self._queue.put_nowait(job)
        self.stats.resumed += 1
        log.info("capture %s for %s resumed: accepted before the last stop", record.id, n.name())

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
                outcome = await loop.run_in_executor(self._pool, self._run, job)
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

    def _run(self, job: Job) -> Outcome:
        """One capture, in a worker thread; its queue file goes when it has run, done or failed
        (here, not in the coroutine: a capture that ends after `stop` gave up on it is done)."""
        try:
            return self.runner(job)
        finally:
            if self.spool is not None:
                try:
                    self.spool.remove(job.id)
                except SpoolError as exc:
                    log.error("%s: capture %s runs again at the next start", exc, job.id)
