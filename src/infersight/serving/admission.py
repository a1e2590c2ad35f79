"""Admission control: a concurrency limit with a bounded, time-limited queue (seed §3.3).

An unbounded queue in front of a saturated executor makes latency grow without limit and every
caller eventually time out anyway. Bounding the queue length and the time spent in it, and
refusing at once past either, keeps the admitted requests fast and tells the others when to
come back (`Overloaded.retry_after`), which HTTP layers turn into 503 + Retry-After.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from prometheus_client import CollectorRegistry

from infersight.serving.errors import Overloaded, OverloadReason
from infersight.serving.metrics import serving_metrics


@dataclass(eq=False, slots=True)
class _Waiter:
    future: asyncio.Future[None]
    arrival: float
    timer: asyncio.TimerHandle | None = None


class AdmissionController:
    """At most `max_concurrency` holders at once; up to `max_queue` waiters, each for at most
    `max_wait` seconds.

    Waiters are served by priority (lower number first), FIFO within a priority; a freed slot is
    handed straight to the next waiter, so late arrivals cannot overtake the queue. An arrival is
    rejected at once when the queue is full (`queue_full`) or when its estimated wait, from an
    EWMA of slot holding time, already exceeds `max_wait` (`wait_exceeded`); a waiter still
    queued after `max_wait` is rejected then (`wait_exceeded`).
    """

    def __init__(
        self,
        max_concurrency: int,
        *,
        max_queue: int = 128,
        max_wait: float = 1.0,
        ewma_alpha: float = 0.1,
        name: str = "default",
        registry: CollectorRegistry | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1")
        if max_queue < 0:
            raise ValueError("max_queue must be >= 0")
        if max_wait <= 0:
            raise ValueError("max_wait must be > 0")
        if not 0 < ewma_alpha <= 1:
            raise ValueError("ewma_alpha must be in (0, 1]")
        self.max_concurrency = max_concurrency
        self.max_queue = max_queue
        self.max_wait = max_wait
        self._alpha = ewma_alpha
        self._busy = 0
        self._queues: dict[int, deque[_Waiter]] = {}
        self._queued = 0
        self._hold: float | None = None  # EWMA of how long a slot is held
        m = serving_metrics(registry)
        self._m_queue = m.queue_length.labels(name=name)
        self._m_wait = m.queue_wait.labels(name=name)
        self._m_busy = m.workers_busy.labels(name=name)
        self._m_rejected = {
            r: m.rejections.labels(name=name, reason=r) for r in ("queue_full", "wait_exceeded")
        }
        self._m_limit = m.workers_limit.labels(name=name)
        self._m_limit.set(max_concurrency)
        self._m_busy.set(0)
        self._m_queue.set(0)

    @property
    def busy(self) -> int:
        """Slots held now."""
        return self._busy

    @property
    def queued(self) -> int:
        """Callers waiting for a slot."""
        return self._queued

    def reconfigure(
        self,
        *,
        max_concurrency: int | None = None,
        max_queue: int | None = None,
        max_wait: float | None = None,
    ) -> None:
        """Change the limits of a running controller (an operator's remedy). A lower
        concurrency takes effect as holders leave (none is interrupted); a higher one hands
        the new slots to waiters at once; a lower queue bound refuses new arrivals past it
        and leaves those already queued. Call it from the controller's event loop."""
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1")
        if max_queue is not None and max_queue < 0:
            raise ValueError("max_queue must be >= 0")
        if max_wait is not None and max_wait <= 0:
            raise ValueError("max_wait must be > 0")
        if max_queue is not None:
            self.max_queue = max_queue
        if max_wait is not None:
            self.max_wait = max_wait
        if max_concurrency is not None:
            self.max_concurrency = max_concurrency
            self._m_limit.set(max_concurrency)
            while self._queued and self._busy < self.max_concurrency:
                self._busy += 1
                self._m_busy.set(self._busy)
                self._release()

    def estimated_wait(self, position: int) -> float | None:
        """Seconds until the waiter at 1-based POSITION gets a slot (None: no data yet)."""
        if self._hold is None:
            return None
        return position * self._hold / self.max_concurrency

    @asynccontextmanager
    async def admit(self, priority: int = 0) -> AsyncIterator[None]:
        """Hold one slot for the body; raises Overloaded if refused (nothing is held then)."""
        await self._acquire(priority)
        # Times come from the loop's clock (time.monotonic on a normal loop), so that the hold
        # estimate and the waits agree with the timers, also on a VirtualTimeLoop.
        loop = asyncio.get_running_loop()
        start = loop.time()
        try:
            yield
        finally:
            held = loop.time() - start
            self._hold = (
                held if self._hold is None else self._hold + self._alpha * (held - self._hold)
            )
            self._release()

    async def _acquire(self, priority: int) -> None:
        if self._busy < self.max_concurrency and self._queued == 0:
            self._busy += 1
            self._m_busy.set(self._busy)
            self._m_wait.observe(0.0)
            return
        if self._queued >= self.max_queue:
            raise self._reject("queue_full")
        ahead = sum(len(q) for p, q in self._queues.items() if p <= priority)
        estimate = self.estimated_wait(ahead + 1)
        if estimate is not None and estimate > self.max_wait:
            raise self._reject("wait_exceeded")
        loop = asyncio.get_running_loop()
        waiter = _Waiter(loop.create_future(), loop.time())
        waiter.timer = loop.call_later(self.max_wait, self._expire, waiter, priority)
        self._queues.setdefault(priority, deque()).append(waiter)
        self._queued += 1
        self._m_queue.set(self._queued)
        try:
            await waiter.future
        except asyncio.CancelledError:
            fut = waiter.future
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                self._release()  # a slot was handed to us as we were cancelled: pass it on
            else:
                self._remove(waiter, priority)
            raise

    def _reject(self, reason: OverloadReason) -> Overloaded:
        self._m_rejected[reason].inc()
        retry = self.estimated_wait(self._queued + 1)
        return Overloaded(reason, self.max_wait if retry is None else retry)

    def _remove(self, waiter: _Waiter, priority: int) -> bool:
        queue = self._queues.get(priority)
        if queue is None:
            return False
        try:
            queue.remove(waiter)
        except ValueError:
            return False
        if not queue:
            del self._queues[priority]
        if waiter.timer is not None:
            waiter.timer.cancel()
        self._queued -= 1
        self._m_queue.set(self._queued)
        return True

    def _expire(self, waiter: _Waiter, priority: int) -> None:
        if self._remove(waiter, priority) and not waiter.future.done():
            waiter.future.set_exception(self._reject("wait_exceeded"))

    def _release(self) -> None:
        """Hand the slot to the first live waiter of the best priority, or free it (always
        free it while more are held than the limit allows: after a lower `reconfigure`)."""
        if self._busy > self.max_concurrency:
            self._busy -= 1
            self._m_busy.set(self._busy)
            return
        while self._queues:
            priority = min(self._queues)
            queue = self._queues[priority]
            waiter = queue.popleft()
            if not queue:
                del self._queues[priority]
            self._queued -= 1
            if waiter.timer is not None:
                waiter.timer.cancel()
            if waiter.future.done():  # cancelled while queued, not yet removed
                continue
            waiter.future.set_result(None)
            self._m_wait.observe(asyncio.get_running_loop().time() - waiter.arrival)
            self._m_queue.set(self._queued)
            return
        self._m_queue.set(self._queued)
        self._busy -= 1
        self._m_busy.set(self._busy)
