"""Batching policies: an adaptive window (seed §3.1) and the fixed-window baseline.

A fixed window (Triton's `max_queue_delay`) makes sparse traffic wait for batches that never
fill. The adaptive window waits only when the next batch is expected to fill within the cap,
judged from an EWMA of inter-arrival time, so a lone request on an idle executor goes at once.
"""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import CollectorRegistry

from infersight.serving._batcher import DEFAULT_BATCH_TIMEOUT_S, Batcher, BatchFn, R, T


def _check_queue_wait(max_queue_wait: float | None, window: float, window_name: str) -> None:
    # A request may sit in the window for up to its cap with an executor free; a max_queue_wait
    # no longer than that would expire such requests although nothing is overloaded (with
    # equality, the fixed window refuses every request it holds for the whole window).
    if max_queue_wait is not None and max_queue_wait <= window:
        raise ValueError(
            f"max_queue_wait ({max_queue_wait}) must exceed {window_name} ({window}), the "
            "batching window cap, with room for event-loop lag (several times it is typical)"
        )


class AdaptiveBatcher(Batcher[T, R]):
    """Batcher whose window follows the load: ~0 when sparse, up to `max_wait` under load.

    A lone request on an idle executor is dispatched at once: nothing shows that company is
    coming (a closed-loop client, say, sends its next request only after this answer). Otherwise,
    with an executor slot free and fewer than a full (or preferred) batch pending, it waits while
    `elapsed(oldest) + needed * gap < max_wait`, where `needed` is how many requests the next
    preferred size (else max_batch_size) lacks and `gap` the expected inter-arrival time:
    the EWMA, or the time since the last arrival if that is longer (arrivals have stopped).

    `max_queue` / `max_queue_wait` turn on admission on the pending queue (see `Batcher`):
    arrivals are refused with `Overloaded` when the queue is full or their predicted wait for
    dispatch exceeds `max_queue_wait` (which must exceed `max_wait`, the window cap).

    `max_wait` is the batching window's cap, not a queue bound (unlike
    `AdmissionController(max_wait=)`): the queue bound is `max_queue_wait`.
    """

    def __init__(
        self,
        batch_fn: BatchFn[T, R],
        *,
        max_batch_size: int = 32,
        max_wait: float = 0.01,
        preferred_batch_sizes: Sequence[int] = (),
        max_concurrency: int = 1,
        ewma_alpha: float = 0.2,
        max_queue: int | None = None,
        max_queue_wait: float | None = None,
        name: str = "default",
        registry: CollectorRegistry | None = None,
        batch_timeout: float | None = DEFAULT_BATCH_TIMEOUT_S,
    ) -> None:
        if max_wait < 0:
            raise ValueError("max_wait must be >= 0")
        _check_queue_wait(max_queue_wait, max_wait, "max_wait")
        if not 0 < ewma_alpha <= 1:
            raise ValueError("ewma_alpha must be in (0, 1]")
        super().__init__(
            batch_fn,
            max_batch_size=max_batch_size,
            preferred_batch_sizes=preferred_batch_sizes,
            max_concurrency=max_concurrency,
            max_queue=max_queue,
            max_queue_wait=max_queue_wait,
            name=name,
            registry=registry,
            batch_timeout=batch_timeout,
        )
        self.max_wait = max_wait
        self._alpha = ewma_alpha
        self._gap: float | None = None  # EWMA of inter-arrival time, each gap capped at max_wait
        self._last_arrival: float | None = None
        self._window = 0.0
        self._m_window.set(0.0)

    @property
    def window(self) -> float:
        """The window chosen at the last decision (0 = dispatch at once)."""
        return self._window

    @property
    def window_cap(self) -> float:
        return self.max_wait

    def _set_window_cap(self, seconds: float) -> None:
        self.max_wait = seconds
        if self._gap is not None:
            self._gap = min(self._gap, seconds)

    @property
    def interarrival(self) -> float | None:
        """Current EWMA of inter-arrival time (None before two arrivals)."""
        return self._gap

    def _on_arrival(self, now: float) -> None:
        if self._last_arrival is not None:
            # Gaps beyond the cap all mean "sparse"; capping them lets the EWMA recover quickly
            # when a burst follows a quiet spell.
            gap = min(now - self._last_arrival, self.max_wait)
            self._gap = gap if self._gap is None else self._gap + self._alpha * (gap - self._gap)
        self._last_arrival = now

    def _window_plan(self, now: float, pending: int) -> float | None:
        if self._gap is None or self._last_arrival is None or (pending == 1 and not self.in_flight):
            self._set_window(0.0)
            return None
        bigger = [p for p in self.preferred_batch_sizes if p > pending]
        needed = (bigger[0] if bigger else self.max_batch_size) - pending
        expected = needed * max(self._gap, now - self._last_arrival)
        if now - self._pending[0].arrival + expected >= self.max_wait:
            self._set_window(0.0)
            return None
        self._set_window(expected)
        return now + expected

    def _set_window(self, window: float) -> None:
        if window != self._window:
            self._window = window
            self._m_window.set(window)


class FixedWindowBatcher(Batcher[T, R]):
    """Baseline: wait up to `max_queue_delay` after the oldest request for a full batch.

    `max_queue` / `max_queue_wait` (> `max_queue_delay`) as in `AdaptiveBatcher`."""

    def __init__(
        self,
        batch_fn: BatchFn[T, R],
        *,
        max_batch_size: int = 32,
        max_queue_delay: float = 0.01,
        preferred_batch_sizes: Sequence[int] = (),
        max_concurrency: int = 1,
        max_queue: int | None = None,
        max_queue_wait: float | None = None,
        name: str = "default",
        registry: CollectorRegistry | None = None,
        batch_timeout: float | None = DEFAULT_BATCH_TIMEOUT_S,
    ) -> None:
        if max_queue_delay < 0:
            raise ValueError("max_queue_delay must be >= 0")
        _check_queue_wait(max_queue_wait, max_queue_delay, "max_queue_delay")
        super().__init__(
            batch_fn,
            max_batch_size=max_batch_size,
            preferred_batch_sizes=preferred_batch_sizes,
            max_concurrency=max_concurrency,
            max_queue=max_queue,
            max_queue_wait=max_queue_wait,
            name=name,
            registry=registry,
            batch_timeout=batch_timeout,
        )
        self.max_queue_delay = max_queue_delay
        self._m_window.set(max_queue_delay)

    @property
    def window(self) -> float:
        return self.max_queue_delay

    @property
    def window_cap(self) -> float:
        return self.max_queue_delay

    def _set_window_cap(self, seconds: float) -> None:
        self.max_queue_delay = seconds
        self._m_window.set(seconds)

    def _window_plan(self, now: float, pending: int) -> float | None:
        deadline = self._pending[0].arrival + self.max_queue_delay
        return None if now >= deadline else deadline
