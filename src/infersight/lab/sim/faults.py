"""Causes, one function each: they change the world (drivers), never a metric.

Magnitudes, onsets and affected instances are drawn from the context's generator, so every
seed gives a different incident of the same kind.

`ctx.magnitude` (knobs.Variation) scales each fault's severity after its draw, away from the
value at which the fault does nothing (`ctx.away`: linearly; `ctx.away_ratio`: on a ratio scale,
for settings cut below healthy); 1 leaves the draw as it is. What it scales, per fault:

| fault | scaled | from (no fault) |
|---|---|---|
| batch_window | the fixed batch window | the configured window (25 ms) |
| max_batch_too_large | the max batch size | the configured max batch (16) |
| vram_oom_cascade | per-request VRAM multiplier; the burst's extra traffic | 1; 0 |
| vram_leak | the leak rate | 0 |
| shared_gpu | the second process's VRAM and GPU share (share ≤ 0.95) | 0 |
| threadpool_too_large | the pool size | the configured pool (56) |
| threadpool_too_small | the pool size, on a ratio scale (at least 1 worker) | the configured pool |
| traffic_surge, unbounded_queue | demand over the fleet's GPU capacity | 1 (at capacity) |
| vector_db_swap | the index's size over the host's free RAM | 1 (just fits) |
| cache_capacity | cache size over the working set, on a ratio scale | 1 (just holds it) |
| cache_stampede | how often the hot key expires (its TTL ÷ magnitude) | never |
| thermal | the inlet temperature rise | 0 °C |
| hardware_fault | the number of Xid/ECC events (at least 1); the PCIe replay rate | 0 |
| slow_instance | the card's slowdown factor | 1 |
| retransmits | the packet loss | the base loss (0.02%) |
| cold_start | the share of the fleet restarted per wave (capped at all of it) | 0 |
| log_disk | the log bytes multiplier | 1 |
| lb_removed | the number of instances removed (1 … all but one) | 0 |
| gc_pauses | the full-collection rate and pause multipliers | 1 |
| incident_0217 | index over free RAM; cache over working set (ratio scale) | 1; 1 |

A fault whose mechanism has a threshold (RAM, GPU capacity, a working set) is scaled past that
threshold, so at 0.3× it still happens, only milder; a fault whose effect only shows above a
load (a hot inlet throttles a busy card) may not show at all at a low magnitude: the scenario's
`shows_as` says when a draw never did its defining thing.
"""

from __future__ import annotations

import numpy as np

from infersight.lab.sim.config import GIB
from infersight.lab.sim.context import Ctx, Effect
from infersight.lab.sim.deps import VECTOR_HOST_RESERVED
from infersight.lab.sim.gpu import batch_time
from infersight.lab.sim.traffic import diurnal

#: the serving container's memory limit in `memory_limit_oom`: half as much again as a healthy
#: process's peak (its own 3-3.5 GiB and a few requests' default 20 MiB each)
MEM_LIMIT = 5.0 * GIB


def healthy(ctx: Ctx) -> Effect:
    return Effect(None, [])


def batch_window(ctx: Ctx) -> Effect:
    """A deploy sets a long fixed batch window (tuned at a peak-hour load test)."""
    t0 = ctx.onset(0.05, 0.15)
    window, max_batch = ctx.u(0.2, 0.35), float(ctx.rng.choice([12, 16, 20]))
    window = ctx.away(window, ctx.cfg.batch_window_s)
    ctx.drv.batch_window[t0:] = window
    ctx.drv.max_batch[t0:] = max_batch
    return Effect(t0, list(ctx.nodes), {"batch_window_s": window, "max_batch": max_batch})


def max_batch_too_large(ctx: Ctx) -> Effect:
    t0 = ctx.onset(0.2, 0.4)
    b = float(round(ctx.away(float(ctx.rng.choice([64, 96, 128])), float(ctx.cfg.max_batch))))
    ctx.drv.max_batch[t0:] = b
    return Effect(t0, list(ctx.nodes), {"max_batch": b})


def _burst(ctx: Ctx, t0: int, size: float, minutes: float) -> None:
    steps = max(1, int(minutes * 60.0 / ctx.dt))
    shape = np.clip(1.0 - np.abs(np.arange(ctx.n) - t0 - steps / 2) / (steps / 2), 0.0, 1.0)
    ctx.drv.traffic_mult *= 1.0 + size * shape


def vram_oom_cascade(ctx: Ctx) -> Effect:
    """Longer inputs after a product change leave no VRAM headroom; a burst tips it over."""
    t0 = ctx.onset_near_hour(0.3, 0.8, 10.0, 18.0)
    mult = ctx.away(ctx.u(1.5, 1.9), 1.0)
    ctx.drv.vram_request_mult[t0:] = mult
    burst = ctx.away(ctx.u(2.0, 3.5), 0.0)
    _burst(ctx, t0 + int(ctx.u(5, 20) * 60 / ctx.dt), burst, ctx.u(10, 25))
    return Effect(t0, list(ctx.nodes), {"vram_request_mult": mult, "burst": burst})


def vram_leak(ctx: Ctx) -> Effect:
    t0 = ctx.onset(0.05, 0.25)
    hit = ctx.pick(1, max(1, len(ctx.nodes) // 4))
    rate = ctx.away(ctx.u(2.0, 4.0), 0.0) * GIB / 3600.0
    ctx.drv.vram_leak_bps[t0:, hit] = rate
    return Effect(t0, [ctx.nodes[i] for i in hit], {"leak_gib_per_h": rate * 3600.0 / GIB})


def shared_gpu(ctx: Ctx) -> Effect:
    t0 = ctx.onset(0.3, 0.6)
    hit = ctx.pick(1, max(1, len(ctx.nodes) // 3))
    vram, util = ctx.u(14.0, 24.0) * GIB, ctx.u(0.25, 0.5)
    vram, util = ctx.away(vram, 0.0), min(ctx.away(util, 0.0), 0.95)
    ctx.drv.other_vram[t0:, hit] = vram
    ctx.drv.other_util[t0:, hit] = util
    return Effect(
        t0, [ctx.nodes[i] for i in hit], {"other_vram_gib": vram / GIB, "other_util": util}
    )


def threadpool(ctx: Ctx, lo: float, hi: float) -> Effect:
    t0 = ctx.onset(0.2, 0.4)
    w = float(round(ctx.u(lo, hi)))
    healthy = float(ctx.cfg.workers)
    if w < healthy:  # a pool cut short: a ratio scale never reaches zero workers
        w = float(max(1, round(ctx.away_ratio(w, healthy))))
    else:
        w = float(round(ctx.away(w, healthy)))
    ctx.drv.workers[t0:] = w
    return Effect(t0, list(ctx.nodes), {"workers": w})


def threadpool_too_large(ctx: Ctx) -> Effect:
    eff = threadpool(ctx, 400.0, 800.0)
    for _ in range(2):  # daytime bursts: what a small pool would have queued, it admits
        _burst(ctx, ctx.moment_near_hour(0.4, 0.95, 10.0, 17.0), ctx.u(2.5, 4.0), ctx.u(10, 20))
    return eff


def threadpool_too_small(ctx: Ctx) -> Effect:
    return threadpool(ctx, 3.0, 6.0)


def surge(ctx: Ctx, lo: float, hi: float) -> tuple[int, int, float]:
    """Demand rises to lo..hi times what the fleet's GPUs can serve (at full batches)."""
    t0 = ctx.onset_near_hour(0.3, 0.7, 9.0, 20.0)
    cfg, m = ctx.cfg, len(ctx.nodes)
    bs = np.array([float(cfg.max_batch)])
    capacity = m * cfg.max_batch / float(batch_time(cfg, bs, np.ones(1))[0])
    base = cfg.peak_rps_per_instance * m * float(diurnal(ctx.ts[t0 : t0 + 1], cfg)[0])
    size = ctx.away(ctx.u(lo, hi), 1.0) * capacity / base
    hours = ctx.u(1.0, 2.5)
    t1 = min(ctx.n - 1, t0 + int(hours * 3600 / ctx.dt))
    up = ctx.ramp(t0, ctx.u(5, 20))
    down = 1.0 - ctx.ramp(t1, 15)
    ctx.drv.traffic_mult *= 1.0 + (size - 1.0) * up * down
    return t0, t1, size


def unbounded_queue(ctx: Ctx) -> Effect:
    t0, t1, size = surge(ctx, 1.2, 1.6)
    ctx.drv.max_queue[:] = np.inf
    return Effect(t0, list(ctx.nodes), {"surge": size}, end=t1)


def traffic_surge(ctx: Ctx) -> Effect:
    t0, t1, size = surge(ctx, 1.2, 1.6)
    return Effect(t0, list(ctx.nodes), {"surge": size}, end=t1)


def vector_db_swap(ctx: Ctx) -> Effect:
    """A data import grows the index past the vector DB host's RAM."""
    t0 = ctx.onset(0.3, 0.6)
    avail = ctx.cfg.vector_ram - VECTOR_HOST_RESERVED
    target = avail * ctx.away(ctx.u(1.3, 2.0), 1.0)
    ctx.drv.vector_index += (target - ctx.drv.vector_index) * ctx.ramp(t0, ctx.u(10, 40))
    return Effect(t0, ["vectordb-0"], {"index_over_ram": target / avail})


def cache_capacity(ctx: Ctx) -> Effect:
    t0 = ctx.onset(0.3, 0.6)
    ratio = ctx.away_ratio(ctx.u(0.1, 0.3), 1.0)
    r = ctx.drv.cache_ratio
    ctx.drv.cache_ratio = r + (ratio - r) * ctx.ramp(t0, ctx.u(10, 60))
    return Effect(t0, ["cache-0"], {"cache_ratio": ratio})


def cache_stampede(ctx: Ctx) -> Effect:
    """A hot key with a short TTL starts expiring under load; every expiry is a stampede."""
    t0 = ctx.onset_near_hour(0.3, 0.6, 9.0, 18.0)
    ttl_min = ctx.u(4.0, 10.0) / ctx.magnitude
    every = max(1, int(ttl_min * 60 / ctx.dt))
    ctx.drv.hot_key_expiry[t0::every] = True
    return Effect(t0, ["cache-0"], {"ttl_min": ttl_min})


def thermal(ctx: Ctx) -> Effect:
    # a hot inlet only throttles a GPU that is working: place it in the day's busy hours, else
    # the ground truth would name a throttling that never happens
    t0 = ctx.onset_near_hour(0.2, 0.6, 9.0, 17.0)
    hit = ctx.pick(1, max(1, len(ctx.nodes) // 4))
    offset = ctx.away(ctx.u(18.0, 26.0), 0.0)
    ctx.drv.ambient_offset[:, hit] = offset * ctx.ramp(t0, ctx.u(5, 30))[:, None]
    return Effect(t0, [ctx.nodes[i] for i in hit], {"inlet_rise_c": offset})


def hardware_fault(ctx: Ctx) -> Effect:
    t0 = ctx.onset(0.2, 0.5)
    i = int(ctx.rng.integers(len(ctx.nodes)))
    events = max(1, round(int(ctx.rng.integers(3, 8)) * ctx.magnitude))
    steps = np.sort(ctx.rng.integers(t0, ctx.n, size=events))
    steps[0] = t0
    for s in steps:
        ctx.drv.ecc_dbe[s, i] += float(ctx.rng.integers(1, 4))
        ctx.drv.xid[s, i] = 48.0
    ctx.drv.pcie_replay_rate[t0:, i] = ctx.away(ctx.u(0.5, 3.0), 0.0)
    return Effect(t0, [ctx.nodes[i]], {"xid_events": float(events)})


def slow_instance(ctx: Ctx) -> Effect:
    t0 = ctx.onset(0.1, 0.4)
    i = int(ctx.rng.integers(len(ctx.nodes)))
    factor = ctx.away(ctx.u(1.5, 2.2), 1.0)
    ctx.drv.slow_factor[t0:, i] = factor
    return Effect(t0, [ctx.nodes[i]], {"slow_factor": factor})


def retransmits(ctx: Ctx) -> Effect:
    t0 = ctx.onset(0.3, 0.6)
    hit = ctx.pick(1, max(1, len(ctx.nodes) // 2))
    loss = ctx.away(ctx.u(0.004, 0.015), ctx.cfg.base_loss)
    ctx.drv.loss[t0:, hit] = loss
    return Effect(t0, [ctx.nodes[i] for i in hit], {"loss": loss})


def cold_start(ctx: Ctx) -> Effect:
    """A rolling deploy reloads the model from remote storage, a few instances at a time."""
    t0 = ctx.onset(0.3, 0.6)
    ctx.drv.model_remote[t0:] = True
    m = len(ctx.nodes)
    per_wave = max(1, round(m * min(1.0, ctx.away(ctx.u(0.25, 0.5), 0.0))))
    gap = max(1, int(ctx.u(1.0, 3.0) * 60 / ctx.dt))
    order = ctx.rng.permutation(m)
    for w, start in enumerate(range(0, m, per_wave)):
        at = min(ctx.n - 1, t0 + w * gap)
        ctx.drv.restart[at, order[start : start + per_wave]] = True
    return Effect(t0, list(ctx.nodes), {"per_wave": float(per_wave)})


def routine_rollouts(ctx: Ctx) -> Effect:
    """No fault: a deploy every hour replaces the replicas one at a time, a few minutes apart,
    each loading its model from local disk: a rollout is not an incident."""
    gap = max(1, int(ctx.u(2.0, 4.0) * 60 / ctx.dt))
    hour = int(3600 / ctx.dt)
    m = len(ctx.nodes)
    for first in range(int(ctx.u(0.0, 1.0) * hour), ctx.n, hour):
        for w, j in enumerate(ctx.rng.permutation(m)):
            if first + w * gap < ctx.n:
                ctx.drv.restart[first + w * gap, j] = True
    return Effect(None, [])


def memory_limit_oom(ctx: Ctx) -> Effect:
    """A release holds more host memory per request (inputs kept, a buffer per request) under
    a container memory limit that fitted the old one: a burst takes a replica to its limit, the
    kernel kills it, and its share moves to the rest, which follow."""
    t0 = ctx.onset_near_hour(0.3, 0.7, 9.0, 15.0)
    mult = ctx.away(ctx.u(14.0, 22.0), 1.0)
    ctx.drv.rss_request_mult[t0:] = mult
    ctx.drv.mem_limit[:] = MEM_LIMIT
    return Effect(t0, list(ctx.nodes), {"rss_request_mult": mult})


def log_disk(ctx: Ctx) -> Effect:
    t0 = ctx.onset_near_hour(0.2, 0.6, 8.0, 16.0)
    mult = ctx.away(ctx.u(250.0, 450.0), 1.0)
    ctx.drv.log_mult[t0:] = mult
    return Effect(t0, list(ctx.nodes), {"log_mult": mult})


def lb_removed(ctx: Ctx) -> Effect:
    t0 = ctx.onset_near_hour(0.3, 0.7, 10.0, 17.0)
    m = len(ctx.nodes)
    hit = ctx.pick(max(1, m // 4), max(1, m // 2))
    k = int(np.clip(round(ctx.away(len(hit), 0.0)), 1, max(1, m - 1)))
    if k < len(hit):
        hit = hit[:k]
    elif k > len(hit):
        rest = [i for i in range(m) if i not in hit]
        more = ctx.rng.choice(len(rest), size=min(k - len(hit), len(rest)), replace=False)
        hit = sorted(hit + [rest[int(j)] for j in more])
    ctx.drv.lb_weight[t0:, hit] = 0.0
    return Effect(t0, [ctx.nodes[i] for i in hit], {"removed": float(len(hit))})


def gc_pauses(ctx: Ctx) -> Effect:
    t0 = ctx.onset(0.3, 0.6)
    rate, pause = ctx.away(ctx.u(8.0, 15.0), 1.0), ctx.away(ctx.u(6.0, 12.0), 1.0)
    ctx.drv.gc_rate_mult[t0:] = rate
    ctx.drv.gc_pause_mult[t0:] = pause
    return Effect(t0, list(ctx.nodes), {"gc_rate_mult": rate, "gc_pause_mult": pause})


def incident_0217(ctx: Ctx) -> Effect:
    """Seed §5: a data import outgrows the vector DB's RAM while the cache stops keeping up."""
    t0 = ctx.onset_near_hour(0.5, 0.9, 2.283, 2.3)
    avail = ctx.cfg.vector_ram - VECTOR_HOST_RESERVED
    over = ctx.away(ctx.u(1.4, 1.9), 1.0)
    ctx.drv.vector_index += (avail * over - ctx.drv.vector_index) * ctx.ramp(t0, ctx.u(5, 15))
    ratio = ctx.away_ratio(ctx.u(0.2, 0.35), 1.0)
    r = ctx.drv.cache_ratio
    ctx.drv.cache_ratio = r + (ratio - r) * ctx.ramp(t0, ctx.u(5, 20))
    return Effect(t0, ["vectordb-0", "cache-0"], {"index_over_ram": over, "cache_ratio": ratio})
