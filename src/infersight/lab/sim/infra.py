"""Host resources of the GPU nodes (seed §4.3, §5.2): network, log disk, CPU, garbage collection.

Each returns what a request pays for it (seconds, or a probability of a stall) and the host
metrics that show it. Vectorised over instances.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infersight.lab.sim.config import FleetConfig
from infersight.lab.sim.drivers import FloatArray, clip

#: CPython collects generation 1 every 10 collections of generation 0, and 2 every 10 of 1
#: (gc.get_threshold() == (700, 10, 10)); the model's "full collections" are generation 2.
GC_YOUNGER_PER_OLDER = 10.0

#: Linux retransmits a lost segment after at least this long (TCP_RTO_MIN).
RTO_MIN_S = 0.2


@dataclass(frozen=True)
class Network:
    retrans_ratio: FloatArray
    p_request_stall: FloatArray  # share of requests that wait for at least one RTO
    nic_drops_per_s: FloatArray
    segments_per_s: FloatArray


def network(cfg: FleetConfig, loss: FloatArray, rate: FloatArray) -> Network:
    segs = cfg.segments_per_request
    p_stall = 1.0 - (1.0 - loss) ** segs
    seg_rate = rate * segs + 200.0  # scrapes, health checks, keep-alives
    return Network(loss, p_stall, loss * seg_rate * 0.5, seg_rate)


@dataclass(frozen=True)
class Disk:
    util: FloatArray
    await_s: FloatArray
    queue: FloatArray
    io_pressure: FloatArray
    writes_per_s: FloatArray
    stall_s: FloatArray  # time a request spends writing its log lines


def log_disk(cfg: FleetConfig, rate: FloatArray, log_mult: FloatArray) -> Disk:
    """Synchronous log writes: a busier disk makes every write, and every request, wait."""
    bps = rate * cfg.log_bytes_per_request * log_mult
    util = clip(0.02 + bps / cfg.disk_write_bps, 0.0, 0.98)
    await_s = cfg.disk_await_s / (1.0 - util)
    writes = rate * cfg.log_writes_per_request * np.sqrt(log_mult) + 5.0
    queue = writes * await_s
    pressure = clip((util - 0.5) * 1.6, 0.0, 1.0) * util
    stall = cfg.log_writes_per_request * np.sqrt(log_mult) * await_s
    return Disk(util, await_s, queue, pressure, writes, stall)


@dataclass(frozen=True)
class Gc:
    collections_per_s: FloatArray
    pause_s: FloatArray
    pause_ratio: FloatArray


def gc(cfg: FleetConfig, rate: FloatArray, rate_mult: FloatArray, pause_mult: FloatArray) -> Gc:
    """Full collections come with allocation, i.e. with traffic; each stops every thread."""
    load = 0.3 + rate / cfg.peak_rps_per_instance
    per_s = cfg.gc_collections_per_s * rate_mult * load
    pause = cfg.gc_pause_s * pause_mult
    return Gc(per_s, pause, clip(per_s * pause, 0.0, 0.9))


@dataclass(frozen=True)
class Cpu:
    util: FloatArray
    pressure: FloatArray
    stretch: FloatArray  # CPU work takes this many times longer than on an idle host
    cores_used: FloatArray


def cpu(cfg: FleetConfig, rate: FloatArray, busy: FloatArray, gc_ratio: FloatArray) -> Cpu:
    """Request work, per-thread overhead (context switches) and GC on the host's cores."""
    demand = rate * cfg.cpu_per_request_s + busy * 0.004 + gc_ratio * 2.0 + 0.3
    ratio = demand / cfg.cpu_cores
    util = clip(ratio, 0.0, 1.0)
    pressure = np.maximum(ratio - 0.6, 0.0) * 0.8
    stretch = np.maximum(1.0, ratio / 0.85)
    return Cpu(util, clip(pressure, 0.0, 1.0), stretch, np.minimum(demand, cfg.cpu_cores))
