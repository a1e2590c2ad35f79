"""Time-varying inputs a scenario sets: the world changing under the fleet.

A scenario never writes a symptom. It changes a *cause* here (an index that outgrows RAM, a fan
that fails, a config that is pushed) and the model turns causes into metrics. Arrays are
(steps,) for fleet-wide inputs and (steps, instances) for per-machine ones; multipliers are 1
and offsets 0 when nothing happens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from infersight.lab.sim.config import FleetConfig

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def clip(x: FloatArray, lo: float | FloatArray, hi: float | FloatArray) -> FloatArray:
    """np.clip without its per-call overhead (this runs thousands of times per run)."""
    out: FloatArray = np.minimum(np.maximum(x, lo), hi)
    return out


@dataclass
class Drivers:
    traffic_mult: FloatArray  # (n,) extra demand on top of the diurnal curve
    lb_weight: FloatArray  # (n, N) share of traffic the load balancer sends (0 = removed)
    workers: FloatArray  # (n, N) thread pool size
    max_queue: FloatArray  # (n, N) waiting requests allowed (inf = unbounded)
    max_batch: FloatArray  # (n, N)
    batch_window: FloatArray  # (n, N) seconds
    vram_request_mult: FloatArray  # (n, N) per-request state (longer prompts, bigger images)
    rss_request_mult: FloatArray  # (n, N) host memory each admitted request holds, × default
    mem_limit: FloatArray  # (n, N) bytes the process may hold before the kernel kills it
    vram_leak_bps: FloatArray  # (n, N) bytes leaked per second by the serving process
    other_vram: FloatArray  # (n, N) bytes used by a second process on the GPU
    other_util: FloatArray  # (n, N) GPU time the second process takes
    ambient_offset: FloatArray  # (n, N) °C added to the inlet (fan/cooling failure)
    slow_factor: FloatArray  # (n, N) compute slowdown of a degraded card
    pcie_replay_rate: FloatArray  # (n, N) per second
    xid: FloatArray  # (n, N) Xid code raised at this step (0 = none)
    ecc_dbe: FloatArray  # (n, N) uncorrectable ECC errors raised at this step
    loss: FloatArray  # (n, N) packet loss probability
    log_mult: FloatArray  # (n, N) log bytes per request multiplier (debug logging)
    gc_rate_mult: FloatArray  # (n, N)
    gc_pause_mult: FloatArray  # (n, N)
    restart: BoolArray  # (n, N) planned restarts (deploys) at this step
    vector_index: FloatArray  # (n,) bytes of index the vector DB must hold
    cache_ratio: FloatArray  # (n,) cache capacity over its working set
    hot_key_expiry: BoolArray  # (n,) the hot key's TTL runs out at this step
    model_remote: BoolArray  # (n,) model loads come from remote storage


def default_drivers(cfg: FleetConfig, n: int, instances: int) -> Drivers:
    """Nothing happening: the fleet as configured."""

    def full(value: float) -> FloatArray:
        return np.full((n, instances), value, dtype=np.float64)

    def zeros() -> FloatArray:
        return np.zeros((n, instances), dtype=np.float64)

    return Drivers(
        traffic_mult=np.ones(n),
        lb_weight=full(1.0),
        workers=full(float(cfg.workers)),
        max_queue=full(float(cfg.max_queue)),
        max_batch=full(float(cfg.max_batch)),
        batch_window=full(cfg.batch_window_s),
        vram_request_mult=full(1.0),
        rss_request_mult=full(1.0),
        mem_limit=full(np.inf),
        vram_leak_bps=zeros(),
        other_vram=zeros(),
        other_util=zeros(),
        ambient_offset=zeros(),
        slow_factor=full(1.0),
        pcie_replay_rate=zeros(),
        xid=zeros(),
        ecc_dbe=zeros(),
        loss=full(cfg.base_loss),
        log_mult=full(1.0),
        gc_rate_mult=full(1.0),
        gc_pause_mult=full(1.0),
        restart=np.zeros((n, instances), dtype=np.bool_),
        vector_index=np.full(n, cfg.vector_index),
        cache_ratio=np.full(n, cfg.cache_capacity_ratio),
        hot_key_expiry=np.zeros(n, dtype=np.bool_),
        model_remote=np.full(n, cfg.model_from_remote, dtype=np.bool_),
    )


@dataclass(frozen=True)
class Spread:
    """What makes one machine of a healthy fleet differ from the next, drawn once per run.

    Real fleets are never identical: silicon and power limits make cards a few percent faster
    or slower, connection reuse and hashing give the load balancer's targets slightly unequal
    shares, each process has run for its own time since its last start, and each request stream
    is a Poisson process of its own (see `run_model`).
    """

    speed: FloatArray  # (N,) relative compute speed of each card (1 = nominal, ±2–4%)
    share: FloatArray  # (N,) relative share of traffic the load balancer sends
    rss_base: FloatArray  # (N,) bytes the idle serving process holds (interpreter, libraries)
    uptime_s: FloatArray  # (N,) seconds each process has been running when the run starts
    load_s: FloatArray  # (N,) how long its last model load took


def draw_spread(cfg: FleetConfig, instances: int, rng: np.random.Generator) -> Spread:
    m = instances
    return Spread(
        speed=np.clip(1.0 + rng.normal(0.0, 0.025, m), 0.94, 1.06),
        share=np.clip(1.0 + rng.normal(0.0, 0.03, m), 0.92, 1.08),
        rss_base=3.0 * 2.0**30 * (1.0 + rng.uniform(-0.05, 0.05, m)),
        uptime_s=rng.uniform(2.0, 20.0, m) * 86400.0,
        load_s=cfg.model_load_local_s * rng.uniform(0.85, 1.15, m),
    )


def apply_spread(drv: Drivers, spread: Spread) -> None:
    """Fold the machines' differences into the drivers (after the scenario set its causes)."""
    drv.slow_factor *= 1.0 / spread.speed[None, :]
    drv.lb_weight *= spread.share[None, :]
