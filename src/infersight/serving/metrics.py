"""The native metric names of the serving remedies, defined once (the diagnosis reads them).

Every metric carries a `name` label so that several batchers, controllers and caches coexist in
one registry. Metric objects are created once per registry and shared: prometheus_client refuses
to register the same name twice.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

BATCH_SIZE_BUCKETS = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0)
SECONDS_BUCKETS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip

BATCH_SIZE = "infersight_batch_size"
BATCH_FILL_WAIT = "infersight_batch_fill_wait_seconds"
BATCH_WINDOW = "infersight_batch_window_seconds"
BATCH_DURATION = "infersight_batch_duration_seconds"
QUEUE_LENGTH = "infersight_queue_length"
QUEUE_WAIT = "infersight_queue_wait_seconds"
REJECTIONS = "infersight_rejections_total"
WORKERS_BUSY = "infersight_workers_busy"
WORKERS_LIMIT = "infersight_workers_limit"
SINGLEFLIGHT_LOADS = "infersight_singleflight_loads_total"
SINGLEFLIGHT_JOINS = "infersight_singleflight_joins_total"
CACHE_REQUESTS = "infersight_cache_requests_total"
CACHE_CONCURRENT_LOADS = "infersight_cache_concurrent_loads"
REQUESTS = "infersight_requests_total"
REQUEST_DURATION = "infersight_request_duration_seconds"

ALL_NAMES = (
    BATCH_SIZE, BATCH_FILL_WAIT, BATCH_WINDOW, BATCH_DURATION, QUEUE_LENGTH, QUEUE_WAIT,
    REJECTIONS, WORKERS_BUSY, WORKERS_LIMIT, SINGLEFLIGHT_LOADS, SINGLEFLIGHT_JOINS,
    CACHE_REQUESTS, CACHE_CONCURRENT_LOADS, REQUESTS, REQUEST_DURATION,
)  # fmt: skip


@dataclass(frozen=True)
class ServingMetrics:
    """All serving metric families registered in one registry."""

    batch_size: Histogram
    batch_fill_wait: Histogram
    batch_window: Gauge
    batch_duration: Histogram
    queue_length: Gauge
    queue_wait: Histogram
    rejections: Counter
    workers_busy: Gauge
    workers_limit: Gauge
    singleflight_loads: Counter
    singleflight_joins: Counter
    cache_requests: Counter
    cache_concurrent_loads: Gauge
    requests: Counter
    request_duration: Histogram


def _create(registry: CollectorRegistry) -> ServingMetrics:
    n = ("name",)
    sec = SECONDS_BUCKETS
    return ServingMetrics(
        batch_size=Histogram(
            BATCH_SIZE,
            "Requests per executed batch.",
            n,
            buckets=BATCH_SIZE_BUCKETS,
            registry=registry,
        ),
        batch_fill_wait=Histogram(
            BATCH_FILL_WAIT,
            "Time a request waited for its batch to fill while an executor slot was free.",
            n,
            buckets=sec,
            registry=registry,
        ),
        batch_window=Gauge(BATCH_WINDOW, "Current batching window.", n, registry=registry),
        batch_duration=Histogram(
            BATCH_DURATION, "batch_fn execution time.", n, buckets=sec, registry=registry
        ),
        queue_length=Gauge(QUEUE_LENGTH, "Requests waiting.", n, registry=registry),
        queue_wait=Histogram(
            QUEUE_WAIT,
            "Time from arrival to admission or dispatch.",
            n,
            buckets=sec,
            registry=registry,
        ),
        rejections=Counter(
            REJECTIONS,
            "Requests rejected by admission control.",
            (*n, "reason"),
            registry=registry,
        ),
        workers_busy=Gauge(WORKERS_BUSY, "Concurrency slots busy.", n, registry=registry),
        workers_limit=Gauge(WORKERS_LIMIT, "Concurrency slots configured.", n, registry=registry),
        singleflight_loads=Counter(SINGLEFLIGHT_LOADS, "Loads actually run.", n, registry=registry),
        singleflight_joins=Counter(
            SINGLEFLIGHT_JOINS, "Callers that joined an in-flight load.", n, registry=registry
        ),
        cache_requests=Counter(
            CACHE_REQUESTS, "Cache lookups by result.", (*n, "result"), registry=registry
        ),
        cache_concurrent_loads=Gauge(
            CACHE_CONCURRENT_LOADS,
            "Most loads in flight for one key right now.",
            n,
            registry=registry,
        ),
        requests=Counter(
            REQUESTS, "Requests served, by outcome.", (*n, "outcome"), registry=registry
        ),
        request_duration=Histogram(
            REQUEST_DURATION, "Request duration.", n, buckets=sec, registry=registry
        ),
    )


_BY_REGISTRY: weakref.WeakKeyDictionary[CollectorRegistry, ServingMetrics] = (
    weakref.WeakKeyDictionary()
)
_LOCK = threading.Lock()


def serving_metrics(registry: CollectorRegistry | None = None) -> ServingMetrics:
    """The serving metric families of REGISTRY (default: prometheus_client's global one)."""
    reg = REGISTRY if registry is None else registry
    with _LOCK:
        found = _BY_REGISTRY.get(reg)
        if found is None:
            found = _BY_REGISTRY[reg] = _create(reg)
        return found
