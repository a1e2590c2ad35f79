"""The inference layer (seed §3.1–3.2, §4.2): batcher, GPU executor, VRAM, heat and clocks.

Vectorised over instances; called once per step with the request rate that reaches the GPU.

Batcher: a batch opens with its first request and leaves when the window expires or it holds
`max_batch`; if the GPU is still busy it waits and keeps filling. In a fluid picture the batch
size is therefore the larger of `1 + r·window` (the window decides: the GPU idles between
batches) and the fixed point `bs = r·T(bs)` (the GPU decides: it never idles), capped by
`max_batch`. At low traffic a fixed window makes every request wait for a batch that never
fills; the adaptive window shrinks with the traffic it sees.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infersight.lab.sim.config import FleetConfig
from infersight.lab.sim.drivers import FloatArray, clip

EPS = 1e-9


def batch_time(cfg: FleetConfig, bs: FloatArray, slowdown: FloatArray) -> FloatArray:
    """Seconds one batch of `bs` items takes; `slowdown` folds clock, contention, a bad card."""
    knee = np.maximum(bs - cfg.batch_knee, 0.0)
    base = cfg.batch_fixed_s + cfg.batch_per_item_s * bs + cfg.batch_knee_s * knee * knee
    out: FloatArray = base * slowdown
    return out


@dataclass(frozen=True)
class Batching:
    batch_size: FloatArray  # average items per executed batch
    batch_s: FloatArray  # time of one such batch
    wait_max_s: FloatArray  # a request waits uniformly up to this long for its batch to go
    window_s: FloatArray  # effective window
    util: FloatArray  # share of time the GPU runs our batches
    capacity_rps: FloatArray  # most requests per second the GPU can take


def batching(
    cfg: FleetConfig,
    rate: FloatArray,
    window: FloatArray,
    max_batch: FloatArray,
    workers: FloatArray,
    slowdown: FloatArray,
    backlog: FloatArray,
) -> Batching:
    """Batch size, batch time, batch wait and GPU busy share at request rate `rate`.

    With a backlog of at least a full batch waiting, the batcher takes `max_batch` every time.
    """
    cap_bs = np.maximum(np.minimum(max_batch, workers), 1.0)
    w_eff = window * clip(rate * window / cap_bs, 0.02, 1.0) if cfg.adaptive_window else window
    r = np.maximum(rate, EPS)
    bs_win = 1.0 + r * w_eff
    a = cfg.batch_fixed_s * slowdown
    b = cfg.batch_per_item_s * slowdown
    gpu_bound_den = 1.0 - r * b
    bs_gpu = np.where(gpu_bound_den > 0.0, r * a / np.maximum(gpu_bound_den, EPS), cap_bs)
    bs = clip(np.maximum(bs_win, bs_gpu), 1.0, cap_bs)
    bs = np.where(backlog >= cap_bs, cap_bs, bs)
    t = batch_time(cfg, bs, slowdown)
    gpu_bound = bs_gpu >= bs_win
    fill = np.minimum(w_eff, (cap_bs - 1.0) / r)
    wait = np.where(gpu_bound, t, fill)
    util = clip(rate * t / bs, 0.0, 1.0)
    capacity = cap_bs / batch_time(cfg, cap_bs, slowdown)
    return Batching(bs, t, wait, np.asarray(w_eff + 0.0 * rate), util, capacity)


@dataclass
class Thermal:
    temp_c: FloatArray
    clock_ratio: FloatArray


def power_w(cfg: FleetConfig, util: FloatArray, clock_ratio: FloatArray) -> FloatArray:
    """Board power: idle plus dynamic power, which falls roughly with the clock squared."""
    out: FloatArray = cfg.power_idle_w + (cfg.power_max_w - cfg.power_idle_w) * util * (
        clock_ratio**2
    )
    return out


def step_thermal(
    cfg: FleetConfig, th: Thermal, dt: float, util: FloatArray, ambient: FloatArray
) -> FloatArray:
    """Advance temperature one step; the clock steps down above the threshold. Returns power."""
    p = power_w(cfg, util, th.clock_ratio)
    target = ambient + cfg.c_per_watt * p
    th.temp_c += (target - th.temp_c) * (1.0 - np.exp(-dt / cfg.thermal_tau_s))
    floor = cfg.sm_clock_min_mhz / cfg.sm_clock_nominal_mhz
    over = th.temp_c - cfg.throttle_temp_c
    wanted = clip(1.0 - 0.08 * np.maximum(over + 1.0, 0.0), floor, 1.0)
    # the driver lowers clocks quickly and raises them slowly
    rise = th.clock_ratio + 0.3 * (wanted - th.clock_ratio)
    rise = np.where(wanted - rise < 0.005, wanted, rise)
    th.clock_ratio = np.where(wanted < th.clock_ratio, wanted, rise)
    return p


def vram_bytes(
    cfg: FleetConfig,
    in_flight: FloatArray,
    batch_size: FloatArray,
    request_mult: FloatArray,
    leak: FloatArray,
) -> FloatArray:
    """Our process's framebuffer use: weights + runtime + admitted requests + a batch + leak."""
    out: FloatArray = (
        cfg.vram_weights
        + cfg.vram_runtime
        + cfg.vram_per_request * request_mult * in_flight
        + cfg.vram_per_batch_item * request_mult * batch_size
        + leak
    )
    return out


def vram_peak(
    cfg: FleetConfig,
    steady: FloatArray,
    in_flight: FloatArray,
    batch_size: FloatArray,
    max_batch: FloatArray,
    workers: FloatArray,
    request_mult: FloatArray,
) -> FloatArray:
    """Highest use within a step: in-flight and batch size fluctuate around their means,
    the former by about two standard deviations of a Poisson count, never past the pool."""
    bs_peak = np.minimum(max_batch, 1.5 * batch_size + 2.0)
    extra = cfg.vram_per_batch_item * request_mult * np.maximum(bs_peak - batch_size, 0.0)
    flight_peak = np.minimum(workers, in_flight + 2.0 * np.sqrt(np.maximum(in_flight, 0.0)))
    extra += cfg.vram_per_request * request_mult * np.maximum(flight_peak - in_flight, 0.0)
    out: FloatArray = steady + extra
    return out
