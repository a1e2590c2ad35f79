"""Synthetic windows for detector tests: diurnal shapes, noise, steps, spikes, gaps."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import numpy.typing as npt

from infersight.frame import MetricFrame, SignalSeries

FloatArray = npt.NDArray[np.float64]
STEP = 15.0
N = 240  # one hour at 15 s
START = 1_750_000_000.0 - (1_750_000_000.0 % 86400) + 10 * 3600  # 10:00 UTC some day
LAGS = {"baseline-1h": 3600.0, "baseline-1d": 86400.0, "baseline-7d": 7 * 86400.0}


def diurnal(t: FloatArray, level: float, amp: float = 0.3) -> FloatArray:
    """A daily curve: level × (1 + amp·sin), peaking mid-afternoon."""
    out: FloatArray = level * (1 + amp * np.sin(2 * np.pi * (t % 86400) / 86400 - np.pi / 2))
    return out


Gen = Callable[[FloatArray, int], FloatArray]  # (times, instance index) -> values


def windows(
    signals: Mapping[str, Gen],
    instances: int = 4,
    n: int = N,
    step: float = STEP,
    start: float = START,
    baselines: tuple[str, ...] = ("baseline-1h", "baseline-1d", "baseline-7d"),
    incident: Mapping[str, Gen] | None = None,
) -> dict[str, MetricFrame]:
    """Incident + baseline windows; `incident` overrides generators in the incident only."""
    names = tuple(f"node-{i}" for i in range(instances))
    out: dict[str, MetricFrame] = {}
    for wname, lag in [("incident", 0.0), *((b, LAGS[b]) for b in baselines)]:
        w_start = start - lag
        t = w_start + step * np.arange(n, dtype=np.float64)
        series: dict[str, SignalSeries] = {}
        for sig, gen in signals.items():
            g = incident[sig] if (incident and wname == "incident" and sig in incident) else gen
            vals = np.stack([g(t, i) for i in range(instances)])
            series[sig] = SignalSeries(names, vals)
        out[wname] = MetricFrame(w_start, step, n, series)
    return out


def noisy(level: float, rel: float = 0.05, seed: int = 0) -> Gen:
    """Flat level with Gaussian noise (rel × level), a different stream per instance/window."""

    def gen(t: FloatArray, i: int) -> FloatArray:
        rng = np.random.default_rng(abs(hash((seed, i, float(t[0])))) % 2**32)
        out: FloatArray = level + rel * level * rng.standard_normal(t.size)
        return out

    return gen


def with_step(base: Gen, at: int, factor: float, only: set[int] | None = None) -> Gen:
    """base, multiplied by factor from point `at` on (for instances in `only`, default all)."""

    def gen(t: FloatArray, i: int) -> FloatArray:
        v = base(t, i).copy()
        if only is None or i in only:
            v[at:] *= factor
        return v

    return gen
