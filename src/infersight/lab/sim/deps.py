"""Shared dependencies: the retrieval cache and the vector database (seed §4.1).

Cache: the hit ratio follows its capacity over the working set of keys (Zipf-like popularity,
so halving the capacity costs far less than half the hits). When the hottest key's TTL runs
out, every request for it during the rebuild loads it again (a stampede) unless singleflight
makes them wait for one load.

Vector DB: a fluid queue of server slots. Queries are fast while the index fits in RAM; once
it does not, a share of queries page the index from disk, each fault waits on a disk whose
wait grows with its utilisation: milliseconds become seconds (the swap cliff).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infersight.lab.sim.config import GIB, FleetConfig

#: RAM on the vector DB host that is not available to the index (OS, process, buffers).
VECTOR_HOST_RESERVED = 6.0 * GIB
VECTOR_SWAP_TOTAL = 32.0 * GIB
RESIDENT_SIGMA = 0.4
FAULT_SIGMA = 0.5


@dataclass
class DepState:
    """Carried from step to step."""

    vector_backlog_s: float = 0.0  # server-seconds of queued vector work
    vector_mean_s: float = 0.01
    load_s: float = 0.4  # how long the last hot-key rebuild took


@dataclass(frozen=True)
class DepStep:
    hit_ratio: float
    evictions_per_s: float
    cache_mem_ratio: float
    cache_cmd_s: float
    concurrent_loads: float
    singleflight_joins_per_s: float
    hot_missing: float  # share of the step the hot key was absent
    hot_wait_s: float  # how long a hot-key request waited for the load
    vector_qps: float
    vector_p_fault: float
    vector_resident_median_s: float
    vector_fault_median_s: float
    vector_mean_s: float
    vector_queue_wait_s: float
    vector_major_faults_per_s: float
    vector_resident_ratio: float
    vector_swap_used_ratio: float
    vector_disk_util: float
    vector_disk_await_s: float
    vector_cpu_util: float


def lognormal_mean(median: float, sigma: float) -> float:
    return median * float(np.exp(0.5 * sigma * sigma))


def step_deps(
    cfg: FleetConfig,
    st: DepState,
    dt: float,
    request_rate: float,
    instances: int,
    max_concurrency: float,
    cache_ratio: float,
    index_bytes: float,
    hot_expiry: bool,
) -> DepStep:
    """One step of cache and vector DB given the fleet's request rate (requests per second)."""
    hit = cfg.cache_max_hit * min(1.0, cache_ratio) ** cfg.cache_skew
    misses = request_rate * (1.0 - hit)
    # a full cache evicts a key for nearly every miss it inserts; a roomy one rarely does
    evictions = misses * float(np.clip((1.25 - cache_ratio) / 0.5, 0.01, 1.0))
    mem_ratio = min(0.98, 0.9 / max(cache_ratio, 1e-6))

    # hot-key stampede
    hot_rate = request_rate * cfg.hot_key_share
    load = st.load_s
    hot_missing = min(1.0, load / dt) if hot_expiry else 0.0
    # every loader holds a worker somewhere in the fleet: there are no more of them
    loaders = min(hot_rate * load, max_concurrency) if hot_expiry else 0.0
    if cfg.singleflight:
        concurrent = min(loaders, 1.0)
        joins = max(loaders - 1.0, 0.0) / dt
    else:
        concurrent = loaders
        joins = 0.0
    if not hot_expiry:
        concurrent = 0.0
    stampede_work = concurrent * cfg.hot_key_load_s  # server-seconds added this step

    # vector DB memory: how much of the index is resident
    avail = max(cfg.vector_ram - VECTOR_HOST_RESERVED, 1.0)
    resident = min(1.0, avail / max(index_bytes, 1.0))
    p_fault = float(np.clip(2.0 * (1.0 - resident), 0.0, 1.0))
    pages = cfg.vector_pages_per_fault_query * (1.0 - resident)
    qps = misses * cfg.vector_queries_per_miss
    page_rate = qps * p_fault * pages
    disk_util = min(0.98, page_rate / (cfg.vector_disk_iops_per_instance * instances))
    disk_await = cfg.vector_disk_await_s / (1.0 - disk_util)

    # vector DB slots: fluid queue of server work
    slots = cfg.vector_capacity_qps_per_instance * instances * cfg.vector_base_s
    work = qps * dt * cfg.vector_base_s * (1.0 + p_fault)
    # a stampede arrives within one load time, not spread over the step
    burst = max(0.0, stampede_work - slots * load)
    cpu_util = min(1.0, (work + stampede_work + st.vector_backlog_s) / (slots * dt))
    # queries older than the clients' timeout are abandoned: the backlog cannot outgrow it
    st.vector_backlog_s = min(
        max(0.0, st.vector_backlog_s + work - slots * dt) + burst, slots * cfg.client_timeout_s
    )
    queue_wait = st.vector_backlog_s / slots + cfg.vector_base_s * min(cpu_util, 0.95) ** 8
    resident_median = cfg.vector_base_s / (1.0 - min(cpu_util, 0.9) ** 4) + queue_wait
    fault_median = resident_median + pages * disk_await
    mean = (1.0 - p_fault) * lognormal_mean(resident_median, RESIDENT_SIGMA) + (
        p_fault * lognormal_mean(fault_median, FAULT_SIGMA)
    )
    st.vector_mean_s = mean
    if hot_expiry:
        st.load_s = min(cfg.hot_key_load_s + mean + queue_wait, cfg.client_timeout_s)
    hot_wait = st.load_s if hot_expiry else 0.0

    swap_used = min(1.0, max(0.0, index_bytes - avail) / VECTOR_SWAP_TOTAL)
    return DepStep(
        hit_ratio=hit * (1.0 - cfg.hot_key_share * hot_missing),
        evictions_per_s=evictions,
        cache_mem_ratio=mem_ratio,
        cache_cmd_s=cfg.cache_cmd_s,
        concurrent_loads=concurrent,
        singleflight_joins_per_s=joins,
        hot_missing=hot_missing,
        hot_wait_s=hot_wait,
        vector_qps=qps + concurrent / dt,
        vector_p_fault=p_fault,
        vector_resident_median_s=resident_median,
        vector_fault_median_s=fault_median,
        vector_mean_s=mean,
        vector_queue_wait_s=queue_wait,
        vector_major_faults_per_s=page_rate,
        vector_resident_ratio=resident,
        vector_swap_used_ratio=swap_used,
        vector_disk_util=disk_util,
        vector_disk_await_s=disk_await,
        vector_cpu_util=cpu_util,
    )
