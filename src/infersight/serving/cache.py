"""An async loading cache: TTL with jitter, LRU bound, singleflight on misses (seed §4.1).

Jitter spreads the expiry of entries loaded together, so they do not all miss in the same
instant; singleflight makes the misses on one key cost one backend load, not one per caller.
"""

from __future__ import annotations

import random
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Generic

from prometheus_client import CollectorRegistry

from infersight.serving.metrics import serving_metrics
from infersight.serving.singleflight import K, SingleFlight, V


class LoadingCache(Generic[K, V]):
    """`await cache.get(key)` returns a fresh cached value or loads it with `loader(key)`.

    Each entry lives `ttl * (1 + u)`, u uniform in [-jitter, +jitter]. Beyond `max_entries` the
    least recently used entry is evicted. Errors are not cached. `coalesce=False` turns
    singleflight off (every miss loads), which exists to show the stampede it prevents.
    The load runs apart from the caller (see SingleFlight): its value is cached even if the
    caller that started it was cancelled while others still waited.
    """

    def __init__(
        self,
        loader: Callable[[K], Awaitable[V]],
        *,
        ttl: float,
        jitter: float = 0.1,
        max_entries: int = 1024,
        coalesce: bool = True,
        name: str = "default",
        registry: CollectorRegistry | None = None,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        if ttl <= 0:
            raise ValueError("ttl must be > 0")
        if not 0 <= jitter < 1:
            raise ValueError("jitter must be in [0, 1)")
        if max_entries < 1:
            raise ValueError("max_entries must be >= 1")
        self._loader = loader
        self.ttl = ttl
        self.jitter = jitter
        self.max_entries = max_entries
        self._clock = clock
        self._rng = rng or random.Random()
        self._entries: OrderedDict[K, tuple[V, float]] = OrderedDict()
        self._flight: SingleFlight[K, V] | None = (
            SingleFlight(name=name, registry=registry) if coalesce else None
        )
        self._loading: dict[K, int] = {}  # loader calls running now, per key
        self.hits = 0
        self.misses = 0
        m = serving_metrics(registry)
        self._m_hit = m.cache_requests.labels(name=name, result="hit")
        self._m_miss = m.cache_requests.labels(name=name, result="miss")
        self._m_concurrent = m.cache_concurrent_loads.labels(name=name)
        self._m_concurrent.set(0)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: K) -> bool:
        entry = self._entries.get(key)
        return entry is not None and entry[1] > self._clock()

    async def get(self, key: K) -> V:
        entry = self._entries.get(key)
        if entry is not None:
            if entry[1] > self._clock():
                self._entries.move_to_end(key)
                self.hits += 1
                self._m_hit.inc()
                return entry[0]
            del self._entries[key]
        self.misses += 1
        self._m_miss.inc()
        if self._flight is None:
            return await self._load(key)
        return await self._flight.do(key, lambda: self._load(key))

    def invalidate(self, key: K) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()

    def expires_at(self, key: K) -> float | None:
        """Clock time at which KEY's entry expires (None if absent)."""
        entry = self._entries.get(key)
        return None if entry is None else entry[1]

    async def _load(self, key: K) -> V:
        self._loading[key] = self._loading.get(key, 0) + 1
        self._publish_concurrency()
        try:
            value = await self._loader(key)
        finally:
            left = self._loading[key] - 1
            if left:
                self._loading[key] = left
            else:
                del self._loading[key]
            self._publish_concurrency()
        life = self.ttl * (1.0 + self._rng.uniform(-self.jitter, self.jitter))
        self._entries[key] = (value, self._clock() + life)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return value

    def _publish_concurrency(self) -> None:
        self._m_concurrent.set(max(self._loading.values(), default=0))
