"""Windows as a user would have them for a simulated run, read through an exporter dialect.

The alert fires as an on-call alert would after the cause began: the service's P99 (its worst
instance) or error ratio well above its pre-onset level for 3 points, or an instance restarting
or going down (onset + 45 min if none ever fires); the user pulls the 3 hours up to 30 minutes
after it (`infersight pull --since 3h`) plus the same window an hour and a day earlier where
the run has them, and the raw exporter metrics of the chosen dialect are mapped back to
canonical signals by `sources.local.canonical_frame` — what a real user has, not the
simulator's own frame.
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
#: alert: P99 above this multiple of its pre-onset median (or error ratio above 5%) for
#: ALERT_POINTS points in a row
ALERT_FACTOR = 2.0
ALERT_ERRORS = 0.05
ALERT_POINTS = 3
#: the pre-onset level the alert compares with: the median of this many points before it
ALERT_BASE_POINTS = 120
#: the step the suite's runs are simulated at. ALERT_POINTS, ALERT_BASE_POINTS and a
#: scenario's `shows_for` count readings at this step; a run at another step holds them for
#: as long (3 readings at 60 s are 12 at 15 s), so a finer run does not alert sooner
SUITE_STEP_S = 60.0


def readings(res: SimResult, points: int) -> int:
    """`points` readings at the suite's step, as readings of this run (at least one)."""
    return max(1, round(points * SUITE_STEP_S / res.frame.step))


@cache
def _catalog() -> Catalog:
    return load_catalog()


def _rows(res: SimResult, signal: str) -> np.ndarray | None:
    s = res.frame.get(signal)
    if s is None:
        return None
    keep = [k for k, i in enumerate(s.instances) if i.startswith("node-")]
    return np.asarray(s.values[keep] if keep else s.values, dtype=np.float64)


def _held(on: np.ndarray, n: int) -> np.ndarray:
    """Per reading (along the last axis): whether it ends `n` readings in a row that are on."""
    pad = [(0, 0)] * (on.ndim - 1) + [(1, 0)]
    sums = np.cumsum(np.pad(on, pad), axis=-1, dtype=np.int64)
    out = np.zeros(on.shape, dtype=bool)
    out[..., n - 1 :] = sums[..., n:] - sums[..., :-n] >= n
    return out


def _firing(res: SimResult, k: int) -> np.ndarray:
    """Per point: would one of the usual on-call alerts fire? The service's P99 (its worst
    instance, as an aggregate histogram's P99 is pulled by a slow instance's share) above
    ALERT_FACTOR× its pre-onset level, the fleet's error ratio above ALERT_ERRORS, one
    instance's error ratio above 2 × ALERT_ERRORS, or a process restarted or went down."""
    n = res.times.size
    fire = np.zeros(n, dtype=bool)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p99 = _rows(res, "service.e2e_latency_p99")
        if p99 is not None and k > 0:
            worst = np.nanmax(p99, axis=0)
            base = float(np.nanmedian(worst[max(0, k - readings(res, ALERT_BASE_POINTS)) : k]))
            if np.isfinite(base):
                fire |= worst > ALERT_FACTOR * base
        err = _rows(res, "service.error_ratio")
        if err is not None:
            fire |= np.nanmean(err, axis=0) > ALERT_ERRORS
            fire |= np.nanmax(err, axis=0) > 2 * ALERT_ERRORS
    return fire


def _down(res: SimResult) -> np.ndarray:
    n = res.times.size
    out = np.zeros(n, dtype=bool)
    up = _rows(res, "infra.target_up")
    if up is not None:
        out |= np.any(up < 0.5, axis=0)
    rs = _rows(res, "service.restarts")
    if rs is not None:
        with np.errstate(invalid="ignore"):
            out |= np.any(np.diff(np.nan_to_num(rs), axis=1, prepend=0.0) > 0, axis=0)
    return out


def alert_time(res: SimResult) -> float:
    """When an on-call alert would fire, plus AFTER_ALERT_S (onset + 45 min if none does):
    latency or errors for ALERT_POINTS points in a row, or an instance restarting or going
    down."""
    onset = res.truth.onset
    t = res.times
    if onset is None:
        return float(t[0] + 14 * HOUR)
    k = int(np.searchsorted(t, onset))
    fire = _firing(res, k)
    run = _held(fire, readings(res, ALERT_POINTS)) | _down(res)
    run[:k] = False
    hits = np.flatnonzero(run)
    alert = float(t[hits[0]]) if hits.size else float(onset + FALLBACK_AFTER_ONSET_S)
    return min(alert + AFTER_ALERT_S, float(t[-1]))


def fault_not_shown(res: SimResult, shows_as: tuple[str, ...], until: float, held: int = 1) -> str:
    """Why the draw holds no trace of its fault by the diagnosis at `until` ("" when it does,
    or when the scenario names no signal for it): none of `shows_as` is above zero for `held`
    readings in a row (at the suite's step) on any instance between the onset and `until`, in
    the simulator's own frame (what happened, not what an exporter shows). A fault that begins
    to bite after the diagnosis is not one the diagnosis could see."""
    onset = res.truth.onset
    if not shows_as or onset is None:
        return ""
    k0 = int(np.searchsorted(res.times, onset))
    k1 = int(np.searchsorted(res.times, until, side="right"))
    for name in shows_as:
        rows = _rows(res, name)
        if rows is None:
            return ""  # the simulator did not record it: nothing to say the draw lacks it
        with np.errstate(invalid="ignore"):
            on = rows[:, k0:k1] > 0
        if np.any(_held(on, readings(res, held))):
            return ""
    run = f" for {held} readings in a row" if held > 1 else ""
    return (
        f"no {' or '.join(shows_as)} above zero{run} between the onset and the diagnosis "
        "on any instance"
    )


def healthy_times(res: SimResult, count: int = 4) -> list[float]:
    """Moments spread over the second half of a healthy run (night, morning, day, evening)."""
    t0, t1 = float(res.times[0]), float(res.times[-1])
    first = max(t0 + WINDOW_S + HOUR, t1 - 24 * HOUR)
    return [float(x) for x in np.linspace(first, t1, count)]


def windows_at(
    res: SimResult,
    dialect: str,
    at: float,
    store: RawStore | None = None,
    step: float | None = None,
) -> dict[str, MetricFrame]:
    """incident (3 h up to `at`) and the baselines the run holds, through `dialect`, on a grid
    of `step` seconds (default: the run's; a coarser scrape's interval when it was scraped so)."""
    store = store if store is not None else res.raw(dialect)
    t0, step = float(res.times[0]), step or res.frame.step
    start = max(t0, at - WINDOW_S)
    out = {"incident": canonical_frame(store, _catalog(), start, at, step).frame}
    for name, lag in (("baseline-1h", HOUR), ("baseline-1d", 24 * HOUR)):
        if at - WINDOW_S - lag >= t0:
            out[name] = canonical_frame(store, _catalog(), start - lag, at - lag, step).frame
    return out
