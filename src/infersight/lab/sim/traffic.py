"""Demand: a diurnal curve whose wiggles repeat day over day, fresh jitter, and bursts.

The day-repeating part is a sum of random harmonics of the 24 h period, so yesterday at 14:00
looks like today at 14:00 and a day-over-day baseline means something. Jitter and bursts are
fresh every day.
"""

from __future__ import annotations

import numpy as np

from infersight.lab.sim.config import FleetConfig
from infersight.lab.sim.drivers import FloatArray

DAY = 86400.0


def hour_of_day(ts: FloatArray) -> FloatArray:
    out: FloatArray = (ts % DAY) / 3600.0
    return out


def diurnal(ts: FloatArray, cfg: FleetConfig) -> FloatArray:
    """1 at the daily peak, `night_fraction` at the trough."""
    phase = 2.0 * np.pi * (hour_of_day(ts) - cfg.peak_hour) / 24.0
    shape = (0.5 + 0.5 * np.cos(phase)) ** 1.5
    out: FloatArray = cfg.night_fraction + (1.0 - cfg.night_fraction) * shape
    return out


def day_pattern(ts: FloatArray, cfg: FleetConfig, rng: np.random.Generator) -> FloatArray:
    """Relative wiggle with a 24 h period (the same every day)."""
    k = np.arange(2, 14, dtype=np.float64)
    amp = rng.normal(0.0, 1.0, k.size) / k
    phase = rng.uniform(0.0, 2.0 * np.pi, k.size)
    x = 2.0 * np.pi * (ts % DAY) / DAY
    wave = (amp[:, None] * np.sin(k[:, None] * x[None, :] + phase[:, None])).sum(axis=0)
    wave /= max(float(np.std(wave)), 1e-9)
    out: FloatArray = cfg.noise * wave
    return out


def jitter(n: int, cfg: FleetConfig, rng: np.random.Generator) -> FloatArray:
    """AR(1) noise, fresh each step but correlated over a few minutes."""
    eps = rng.normal(0.0, cfg.jitter, n)
    out = np.empty(n)
    acc = 0.0
    for i in range(n):
        acc = 0.8 * acc + eps[i]
        out[i] = acc
    return out


def bursts(ts: FloatArray, cfg: FleetConfig, rng: np.random.Generator) -> FloatArray:
    """Relative extra demand from short bursts (a push notification, a campaign)."""
    out = np.zeros(ts.size)
    if ts.size < 2:
        return out
    span = float(ts[-1] - ts[0])
    count = int(rng.poisson(cfg.bursts_per_day * span / DAY))
    for _ in range(count):
        at = float(ts[0] + rng.uniform(0.0, span))
        width = float(rng.uniform(120.0, 600.0))
        size = cfg.burst_size * float(rng.uniform(0.4, 1.5))
        out += size * np.clip(1.0 - np.abs(ts - at) / width, 0.0, None)
    return out


def fleet_demand(
    ts: FloatArray, instances: int, cfg: FleetConfig, rng: np.random.Generator
) -> FloatArray:
    """Fresh client requests per second to the whole fleet, before any scenario."""
    base = cfg.peak_rps_per_instance * instances * diurnal(ts, cfg)
    wiggle = 1.0 + day_pattern(ts, cfg, rng)
    noise = 1.0 + jitter(ts.size, cfg, rng)
    out: FloatArray = base * np.clip(wiggle * noise, 0.3, None) * (1.0 + bursts(ts, cfg, rng))
    return out
