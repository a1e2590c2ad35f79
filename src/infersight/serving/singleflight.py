"""Singleflight: one backend load per key at a time; concurrent callers share it (seed §4.1).

When a hot key expires, every request that misses would otherwise hit the backend at once (a
cache stampede). Here the first caller (the leader) starts the load and later callers join it:
all get the same result or the same exception, and the key is free again once the load ends.

Cancellation (async version): the load runs in its own task, not in the leader's, so cancelling
the leader does not disturb the callers that joined; the load goes on for them. When every
caller has gone, the load is cancelled and the key freed at once, so nothing runs for nobody and
the next caller starts afresh. If the load task is cancelled from elsewhere while callers still
wait, they get `LoadCancelled` (not a bare CancelledError, which would read as their own).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Awaitable, Callable, Hashable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Generic, TypeVar

from prometheus_client import CollectorRegistry

from infersight.serving.errors import LoadCancelled
from infersight.serving.metrics import serving_metrics

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass(eq=False, slots=True)
class _Flight(Generic[V]):
    task: asyncio.Future[V]
    callers: int = 0


class SingleFlight(Generic[K, V]):
    """asyncio singleflight: `await sf.do(key, loader)`; see the module docstring."""

    def __init__(self, *, name: str = "default", registry: CollectorRegistry | None = None) -> None:
        self._flights: dict[K, _Flight[V]] = {}
        m = serving_metrics(registry)
        self._m_loads = m.singleflight_loads.labels(name=name)
        self._m_joins = m.singleflight_joins.labels(name=name)

    def in_flight(self, key: K) -> bool:
        return key in self._flights

    def __len__(self) -> int:
        """Keys with a load in flight."""
        return len(self._flights)

    async def do(self, key: K, loader: Callable[[], Awaitable[V]]) -> V:
        """Run LOADER for KEY unless a load for KEY is in flight; either way return its result."""
        flight = self._flights.get(key)
        if flight is None:
            flight = _Flight(asyncio.ensure_future(loader()))
            self._flights[key] = flight
            flight.task.add_done_callback(functools.partial(self._on_done, key, flight))
            self._m_loads.inc()
        else:
            self._m_joins.inc()
        flight.callers += 1
        try:
            return await asyncio.shield(flight.task)
        except asyncio.CancelledError:
            if flight.task.cancelled() and not _being_cancelled():
                raise LoadCancelled(f"the load for {key!r} was cancelled") from None
            raise
        finally:
            flight.callers -= 1
            if flight.callers == 0 and not flight.task.done():
                self._forget(key, flight)
                flight.task.cancel()

    def _on_done(self, key: K, flight: _Flight[V], _task: asyncio.Future[V]) -> None:
        self._forget(key, flight)

    def _forget(self, key: K, flight: _Flight[V]) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]


def _being_cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class ThreadSingleFlight(Generic[K, V]):
    """Thread-safe singleflight for blocking code: `sf.do(key, loader)` from any thread.

    The leader runs LOADER in its own thread; joiners block until it finishes. Threads cannot be
    cancelled, so the only ends are a result or an exception, both delivered to every caller.
    """

    def __init__(self, *, name: str = "default", registry: CollectorRegistry | None = None) -> None:
        self._lock = threading.Lock()
        self._calls: dict[K, Future[V]] = {}
        m = serving_metrics(registry)
        self._m_loads = m.singleflight_loads.labels(name=name)
        self._m_joins = m.singleflight_joins.labels(name=name)

    def in_flight(self, key: K) -> bool:
        with self._lock:
            return key in self._calls

    def do(self, key: K, loader: Callable[[], V]) -> V:
        with self._lock:
            call = self._calls.get(key)
            leader = call is None
            if call is None:
                call = self._calls[key] = Future()
        if not leader:
            self._m_joins.inc()
            return call.result()
        self._m_loads.inc()
        try:
            value = loader()
        except BaseException as exc:
            self._finish(key)
            call.set_exception(exc)
            raise
        self._finish(key)
        call.set_result(value)
        return value

    def _finish(self, key: K) -> None:
        with self._lock:
            del self._calls[key]
