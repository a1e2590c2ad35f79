"""Windows as a user would have them for a simulated run, read through an exporter dialect.

The alert fires when the fleet's end-to-end P99 (or error ratio) first stays well above its
pre-onset level after the cause began; the user pulls the 3 hours up to 30 minutes after it
(`infersight pull --since 3h`) plus the same window an hour and a day earlier where the run has
them, and the raw exporter metrics of the chosen dialect are mapped back to canonical signals
by `sources.local.canonical_frame` — what a real user has, not the simulator's own frame.
"""

from __future__ import annotations

import warnings
from functools import cache

import numpy as np

from infersight.exporters import Catalog, load_catalog
from infersight.frame import MetricFrame
from infersight.lab.sim import SimResult
from infersight.sources.local import canonical_frame
from infersight.sources.raw import RawStore

HOUR = 3600.0
WINDOW_S = 3 * HOUR
AFTER_ALERT_S = 1800.0
FALLBACK_AFTER_ONSET_S = 2700.0
#: alert: P99 above this multiple of its pre-onset median (or error ratio above 5%) for 3 points
ALERT_FACTOR = 2.0
ALERT_ERRORS = 0.05


@cache
def _catalog() -> Catalog:
    return load_catalog()


def _fleet(res: SimResult, signal: str, agg: str = "max") -> np.ndarray | None:
    s = res.frame.get(signal)
    if s is None:
        return None
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        v = np.nanmax(s.values, axis=0) if agg == "max" else np.nanmedian(s.values, axis=0)
    return np.asarray(v, dtype=np.float64)


def alert_time(res: SimResult) -> float:
    """When an on-call alert on latency or errors would fire (onset + 45 min if it never does)."""
    onset = res.truth.onset
    t = res.times
    if onset is None:
        return float(t[0] + 14 * HOUR)
    k = int(np.searchsorted(t, onset))
    fire = np.zeros(t.size, dtype=bool)
    p99 = _fleet(res, "service.e2e_latency_p99", "median")
    if p99 is not None:
        base = float(np.nanmedian(p99[max(0, k - 120) : k])) if k > 0 else float("nan")
        if np.isfinite(base):
            fire |= p99 > ALERT_FACTOR * base
    err = _fleet(res, "service.error_ratio", "median")
    if err is not None:
        fire |= err > ALERT_ERRORS
    fire[:k] = False
    run = np.convolve(fire.astype(np.int64), np.ones(3, dtype=np.int64), "full")[: t.size] >= 3
    hits = np.flatnonzero(run)
    alert = float(t[hits[0]]) if hits.size else float(onset + FALLBACK_AFTER_ONSET_S)
    return min(alert + AFTER_ALERT_S, float(t[-1]))


def healthy_times(res: SimResult, count: int = 4) -> list[float]:
    """Moments spread over the second half of a healthy run (night, morning, day, evening)."""
    t0, t1 = float(res.times[0]), float(res.times[-1])
    first = max(t0 + WINDOW_S + HOUR, t1 - 24 * HOUR)
    return [float(x) for x in np.linspace(first, t1, count)]


def windows_at(
    res: SimResult, dialect: str, at: float, store: RawStore | None = None
) -> dict[str, MetricFrame]:
    """incident (3 h up to `at`) and the baselines the run holds, through `dialect`."""
    store = store if store is not None else res.raw(dialect)
    t0, step = float(res.times[0]), res.frame.step
    start = max(t0, at - WINDOW_S)
    out = {"incident": canonical_frame(store, _catalog(), start, at, step).frame}
    for name, lag in (("baseline-1h", HOUR), ("baseline-1d", 24 * HOUR)):
        if at - WINDOW_S - lag >= t0:
            out[name] = canonical_frame(store, _catalog(), start - lag, at - lag, step).frame
    return out
