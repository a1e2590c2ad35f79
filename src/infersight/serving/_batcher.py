"""Machinery shared by the batchers: pending queue, dispatch, result fan-out, close.

The batcher is event driven (no background loop): arrivals (once per loop iteration), batch
completions and timers call `_pump`, which dispatches while an executor slot is free and the
policy (`_window_plan`) says go, else arms one timer for when it should look again. A batch is
formed only when a slot is free, so requests that arrive while the executor is busy can still
join the next batch.

Optional admission (`max_queue`, `max_queue_wait`) bounds the one queue there is, the pending
queue: an arrival is refused before it is queued when the queue is full or when its predicted
wait exceeds `max_queue_wait`. The prediction is batch-aware: the k requests ahead leave in full
batches of `max_batch_size`, so the arrival waits until an executor has finished the running
batch and then `k // max_batch_size` more batches (spread over the executors), each taking the
recent full-batch time (EWMA mean + 4 mean deviations, as TCP's retransmit timer). A safety net
rejects a request still waiting at `max_queue_wait` (one timer, for the oldest request only), so
no admitted request waits longer.

Every caller gets exactly one answer. A batch running past `batch_timeout` is cancelled and its
callers fail with `BatchTimeout`; a CancelledError that batch_fn raises while nobody cancelled the
batch, or a BaseException that is not an Exception, reaches them as `BatchFailed` (never as a
cancellation of their own, never as silence).
"""

from __future__ import annotations

import asyncio
import math
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from prometheus_client import CollectorRegistry

from infersight.serving.errors import (
    BatcherClosed,
    BatchFailed,
    BatchSizeMismatch,
    BatchTimeout,
    Overloaded,
    OverloadReason,
)
from infersight.serving.metrics import serving_metrics
from infersight.serving.wait_estimate import Ewma, predict_wait

T = TypeVar("T")
R = TypeVar("R")

BatchFn = Callable[[list[T]], Awaitable[Sequence[R | Exception]]]
"""Runs one batch; slot i answers item i. An Exception instance in a slot fails only that item."""

#: Seconds a batch may run before it is cancelled and its callers fail with BatchTimeout. An
#: inference batch takes milliseconds to seconds; a minute means the function hangs (a dead GPU
#: worker, a lost connection), and callers must not wait on it for ever.
DEFAULT_BATCH_TIMEOUT_S = 60.0


@dataclass(eq=False, slots=True)
class _Request(Generic[T, R]):
    item: T
    future: asyncio.Future[R]
    arrival: float


class Batcher(ABC, Generic[T, R]):
    """Gathers concurrent `submit` calls into calls of `batch_fn` (see the subclasses).

    Admission (off by default): `max_queue` bounds the pending queue, `max_queue_wait` the time
    from `submit` to dispatch. Refusals raise `Overloaded`; `rejected_on_arrival` and
    `rejected_late` count those refused before queueing and those expired by the safety net.
    """

    def __init__(
        self,
        batch_fn: BatchFn[T, R],
        *,
        max_batch_size: int,
        preferred_batch_sizes: Sequence[int] = (),
        max_concurrency: int = 1,
        max_queue: int | None = None,
        max_queue_wait: float | None = None,
        name: str = "default",
        registry: CollectorRegistry | None = None,
        batch_timeout: float | None = DEFAULT_BATCH_TIMEOUT_S,
    ) -> None:
        if batch_timeout is not None and batch_timeout <= 0:
            raise ValueError("batch_timeout must be > 0 (or None: no bound)")
        if max_queue is not None and max_queue < 1:
            # Every request waits in the pending queue, if only until the next loop iteration:
            # max_queue=0 would refuse them all (None means unbounded).
            raise ValueError("max_queue must be >= 1 (or None: no bound)")
        if max_queue_wait is not None and max_queue_wait <= 0:
            raise ValueError("max_queue_wait must be > 0")
        if max_batch_size < 1:
            raise ValueError("max_batch_size must be >= 1")
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1")
        if any(not 1 <= p <= max_batch_size for p in preferred_batch_sizes):
            raise ValueError("preferred_batch_sizes must lie in [1, max_batch_size]")
        self._batch_fn = batch_fn
        self.batch_timeout = batch_timeout
        self.max_batch_size = max_batch_size
        self.preferred_batch_sizes = tuple(sorted(set(preferred_batch_sizes)))
        self.max_concurrency = max_concurrency
        self.max_queue = max_queue
        self.max_queue_wait = max_queue_wait
        self.name = name
        self._pending: deque[_Request[T, R]] = deque()
        self._in_flight = 0
        self._starts: list[float] = []  # loop time at which each executing batch was dispatched
        self._full_batches = Ewma()  # duration of full batches: what a backlog runs
        self._any_batches = Ewma()  # any batch's, used until a full one has been seen
        self._deadline: asyncio.TimerHandle | None = None  # safety net for the oldest request
        self._deadline_for: _Request[T, R] | None = None
        self.rejected_on_arrival = 0
        self.rejected_late = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False
        self._draining = False
        self._free_since = 0.0  # loop time at which an executor slot last became free
        self._pump_soon = False
        m = serving_metrics(registry)
        self._m_size = m.batch_size.labels(name=name)
        self._m_fill_wait = m.batch_fill_wait.labels(name=name)
        self._m_window = m.batch_window.labels(name=name)
        self._m_duration = m.batch_duration.labels(name=name)
        self._m_queue = m.queue_length.labels(name=name)
        self._m_queue_wait = m.queue_wait.labels(name=name)
        self._m_busy = m.workers_busy.labels(name=name)
        self._m_rejected = {
            r: m.rejections.labels(name=name, reason=r) for r in ("queue_full", "wait_exceeded")
        }
        m.workers_limit.labels(name=name).set(max_concurrency)

    @property
    def pending(self) -> int:
        """Requests waiting to be dispatched."""
        return len(self._pending)

    @property
    def in_flight(self) -> int:
        """Batches executing now."""
        return self._in_flight

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def batch_time(self) -> float | None:
        """The batch time the wait prediction uses: recent full-batch duration (EWMA mean plus
        BATCH_TIME_DEVIATIONS × EWMA mean deviation; before the first full batch, any batch's),
        or None before any batch has finished."""
        full = self._full_batches.high()
        return full if full is not None else self._any_batches.high()

    def estimated_wait(self, position: int | None = None) -> float | None:
        """Predicted seconds from now until the request at 1-based POSITION of the pending queue
        (default: the next arrival) is dispatched; None when that cannot be told yet (no batch
        has finished). Ignores the batching window, which under backlog is 0."""
        now = asyncio.get_running_loop().time()
        return self._estimate(len(self._pending) + 1 if position is None else position, now)

    def _estimate(self, position: int, now: float) -> float | None:
        t = self.batch_time
        # Before any batch has finished, a busy executor's remaining time is unknown (inf):
        # only idle executors can be counted on.
        remaining = [math.inf if t is None else max(0.0, s + t - now) for s in self._starts]
        return predict_wait(
            position,
            max_batch_size=self.max_batch_size,
            batch_time=t,
            busy_remaining=remaining,
            max_concurrency=self.max_concurrency,
        )

    async def submit(self, item: T) -> R:
        """Queue ITEM for the next batch and return its result (or raise its error).

        Cancelling the caller before dispatch removes the item; it never reaches batch_fn. With
        admission configured, raises `Overloaded` before queueing the item when the queue is full
        (`queue_full`) or its predicted wait exceeds `max_queue_wait` (`wait_exceeded`), and
        later, rarely, if it is still waiting at `max_queue_wait` (`wait_exceeded`).
        """
        if self._closed:
            raise BatcherClosed(f"batcher {self.name!r} is closed")
        loop = asyncio.get_running_loop()
        now = loop.time()
        if self.max_queue is not None and len(self._pending) >= self.max_queue:
            self.rejected_on_arrival += 1
            raise self._reject("queue_full", now)
        if self.max_queue_wait is not None:
            estimate = self._estimate(len(self._pending) + 1, now)
            if estimate is not None and estimate > self.max_queue_wait:
                self.rejected_on_arrival += 1
                raise self._reject("wait_exceeded", now, estimate)
        req: _Request[T, R] = _Request(item, loop.create_future(), now)
        self._on_arrival(now)
        self._pending.append(req)
        if not self._pump_soon:
            # Decide on the next loop iteration, so that requests arriving in this one (callers
            # woken together, e.g. by an admission queue handing out slots) form one batch.
            self._pump_soon = True
            loop.call_soon(self._deferred_pump)
        try:
            return await req.future
        except asyncio.CancelledError:
            try:
                self._pending.remove(req)
            except ValueError:
                pass  # already dispatched: the batch runs, its answer for us is dropped
            else:
                self._m_queue.set(len(self._pending))
                if req is self._deadline_for:
                    self._arm_deadline(loop)
            raise

    async def close(self, drain: bool = True) -> None:
        """Refuse new submissions, then finish.

        drain=True dispatches everything pending (without waiting for windows) and returns when
        all batches are done. drain=False fails pending callers with BatcherClosed; batches already
        executing may complete within their `batch_timeout` (without one, they are cancelled at
        once) and are awaited; a cancelled batch's callers get BatcherClosed.
        """
        self._closed = True
        if drain:
            self._draining = True
            self._pump()
        else:
            self._cancel_timer()
            self._cancel_deadline()
            while self._pending:
                req = self._pending.popleft()
                if not req.future.done():
                    req.future.set_exception(BatcherClosed(f"batcher {self.name!r} closed"))
            self._m_queue.set(0)
            if self.batch_timeout is None:
                for task in self._tasks:
                    task.cancel()
        while self._tasks:
            await asyncio.wait(set(self._tasks))

    async def __aenter__(self) -> Batcher[T, R]:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close(drain=True)

    @property
    @abstractmethod
    def window_cap(self) -> float:
        """The longest the policy holds a request for company (seconds)."""

    @abstractmethod
    def _set_window_cap(self, seconds: float) -> None: ...

    def reconfigure(self, *, window_cap: float | None = None, max_queue: int | None = None) -> None:
        """Change the window's cap and/or the pending queue's bound on a running batcher (an
        operator's remedy: a shorter delay, a tighter cap). Requests already queued stay; a
        shorter window takes effect at once, when called from the batcher's event loop."""
        if window_cap is not None:
            if window_cap < 0:
                raise ValueError("window cap must be >= 0")
            if self.max_queue_wait is not None and self.max_queue_wait <= window_cap:
                raise ValueError(
                    f"window cap ({window_cap}) must stay below max_queue_wait "
                    f"({self.max_queue_wait})"
                )
        if max_queue is not None and max_queue < 1:
            raise ValueError("max_queue must be >= 1")
        if window_cap is not None:
            self._set_window_cap(window_cap)
        if max_queue is not None:
            self.max_queue = max_queue
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._pending and not self._closed:
            self._pump()

    def _on_arrival(self, now: float) -> None:
        """Hook for policies that learn from arrivals."""

    @abstractmethod
    def _window_plan(self, now: float, pending: int) -> float | None:
        """None to dispatch the PENDING (< max, no preferred size formable) requests now, else the
        loop time at which to look again; called only while an executor slot is free."""

    def _plan(self, now: float) -> tuple[int, float | None]:
        """How many to dispatch now, or (0, when to look again)."""
        n = len(self._pending)
        if n >= self.max_batch_size or self._draining:
            return min(n, self.max_batch_size), None
        formable = [p for p in self.preferred_batch_sizes if p <= n]
        if formable:
            return formable[-1], None
        wake = self._window_plan(now, n)
        return (n, None) if wake is None else (0, wake)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _reject(
        self, reason: OverloadReason, now: float, estimate: float | None = None
    ) -> Overloaded:
        self._m_rejected[reason].inc()
        if estimate is None:
            estimate = self._estimate(len(self._pending) + 1, now)
        # When to come back: once the queue ahead has drained (the predicted wait of the last
        # place); before any batch has finished, max_queue_wait.
        retry = estimate if estimate is not None else self.max_queue_wait or 0.0
        return Overloaded(reason, retry)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._deadline_for = None

    def _arm_deadline(self, loop: asyncio.AbstractEventLoop) -> None:
        """Keep one timer, at the oldest pending request's deadline (none while draining: close
        runs everything pending)."""
        if self.max_queue_wait is None or self._draining:
            self._cancel_deadline()
            return
        head = self._pending[0] if self._pending else None
        if head is self._deadline_for:
            return
        self._cancel_deadline()
        if head is not None:
            self._deadline_for = head
            self._deadline = loop.call_at(head.arrival + self.max_queue_wait, self._on_deadline)

    def _on_deadline(self) -> None:
        req = self._deadline_for
        self._deadline = None
        self._deadline_for = None
        # The oldest request's deadline has come (by the loop's clock): reject it even if float
        # rounding puts `now - arrival` a hair below the limit, then look at the rest.
        if req is not None and self._pending and self._pending[0] is req and not self._draining:
            self._pending.popleft()
            self._reject_late(req, asyncio.get_running_loop().time())
        self._pump()

    def _expire(self, now: float) -> None:
        """Safety net: reject the requests that have waited max_queue_wait (a prefix: FIFO)."""
        limit = self.max_queue_wait
        if limit is None or self._draining:
            return
        while self._pending and now - self._pending[0].arrival >= limit:
            self._reject_late(self._pending.popleft(), now)

    def _reject_late(self, req: _Request[T, R], now: float) -> None:
        if not req.future.done():
            self.rejected_late += 1
            req.future.set_exception(self._reject("wait_exceeded", now))

    def _deferred_pump(self) -> None:
        self._pump_soon = False
        self._pump()

    def _pump(self) -> None:
        self._cancel_timer()
        loop = asyncio.get_running_loop()
        now = loop.time()
        self._expire(now)
        while self._pending and self._in_flight < self.max_concurrency:
            count, wake = self._plan(now)
            if wake is not None:
                self._timer = loop.call_at(wake, self._pump)
                break
            batch = [self._pending.popleft() for _ in range(count)]
            live = [r for r in batch if not r.future.done()]  # cancelled, not yet removed
            if live:
                self._dispatch(loop, live, now)
        self._m_queue.set(len(self._pending))
        self._arm_deadline(loop)

    def _dispatch(
        self, loop: asyncio.AbstractEventLoop, batch: list[_Request[T, R]], now: float
    ) -> None:
        for r in batch:
            self._m_queue_wait.observe(now - r.arrival)
            self._m_fill_wait.observe(now - max(r.arrival, self._free_since))
        self._m_size.observe(len(batch))
        self._in_flight += 1
        self._m_busy.set(self._in_flight)
        self._starts.append(now)
        task = loop.create_task(self._run(batch, now))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, batch: list[_Request[T, R]], dispatched: float) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        limit = asyncio.timeout(self.batch_timeout)
        try:
            async with limit:
                results = await self._batch_fn([r.item for r in batch])
            if len(results) != len(batch):
                raise BatchSizeMismatch(len(batch), len(results))
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # close(drain=False): we were cancelled
                _fail(batch, BatcherClosed(f"batcher {self.name!r} closed"))
                raise
            _fail(batch, _wrapped(exc, "raised CancelledError, though no caller was cancelled"))
        except TimeoutError as exc:
            if limit.expired():
                _fail(batch, BatchTimeout(f"batch ran past batch_timeout={self.batch_timeout}s"))
            else:
                _fail(batch, exc)
        except Exception as exc:
            _fail(batch, exc)
        except BaseException as exc:
            _fail(batch, _wrapped(exc, f"raised {type(exc).__name__}, not an Exception"))
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
        else:
            for r, res in zip(batch, results, strict=True):
                if r.future.done():
                    continue
                if isinstance(res, Exception):
                    r.future.set_exception(res)
                else:
                    r.future.set_result(res)
        finally:
            end = loop.time()
            self._m_duration.observe(end - start)
            self._learn(len(batch), end - dispatched)
            self._starts.remove(dispatched)
            self._in_flight -= 1
            self._m_busy.set(self._in_flight)
            if self._in_flight == self.max_concurrency - 1:
                self._free_since = end
            self._pump()

    def _learn(self, size: int, duration: float) -> None:
        """Fold one batch's duration (dispatch to completion, so it includes the loop's lag in
        starting it) into the batch time the wait prediction uses."""
        if size >= self.max_batch_size:
            self._full_batches.add(duration)
        self._any_batches.add(duration)


def _fail(batch: Sequence[_Request[T, R]], exc: BaseException) -> None:
    """Answer every caller of the batch still waiting with `exc`."""
    for r in batch:
        if not r.future.done():
            r.future.set_exception(exc)


def _wrapped(exc: BaseException, what: str) -> BatchFailed:
    out = BatchFailed(f"batch_fn {what}")
    out.__cause__ = exc
    return out
