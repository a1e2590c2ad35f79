"""Trends: slow leaks (VRAM, RSS, cache memory) as a robust slope and a time to exhaustion.

The window is cut into `trend_subsample` chunks; each chunk's median is one point of a
Theil–Sen fit (median of all pairwise slopes), so spikes, resets and gaps barely move it.
A trend is reported only when it is monotone enough (Kendall tau, Mann–Kendall z), climbs in
both halves of the window (a step is not a leak), is larger than the noise around the line, a
per-unit floor and a share of the level, runs in the signal's bad direction, and is not the
same shape the series had yesterday without a day's climb between them (a diurnal ramp is not
a leak).

Two more spans are fitted on their own: the window's latest part (a leak that began inside the
window, or whose pace now is clearly faster), and the climb before a reset (a leaking
process dies when the card is full and comes back low, seed §3.2: the climb was the leak).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from infersight.detect._stats import MAD_TO_SIGMA, FloatArray, finite_or_none, nanmedian
from infersight.detect.config import DetectConfig


@dataclass(frozen=True)
class TrendFit:
    """Per row: slope (unit/s), value at the last grid time, Kendall tau, MK z, noise, span."""

    slope: FloatArray
    level_end: FloatArray
    tau: FloatArray
    mk_z: FloatArray
    noise: FloatArray
    n_valid: FloatArray
    span_s: FloatArray
    first: FloatArray  # index of the first valid point


def theil_sen(t: FloatArray, y: FloatArray, m: int) -> TrendFit:
    """Theil–Sen on chunk medians, vectorised over rows (rows × n → per-row figures)."""
    rows, n = y.shape
    m = max(2, min(m, n))
    size = -(-n // m)
    m = -(-n // size)
    pad = np.full((rows, m * size), np.nan)
    pad[:, :n] = y
    tpad = np.full(m * size, np.nan)
    tpad[:n] = t
    ym = nanmedian(pad.reshape(rows, m, size))
    tm = np.nanmean(tpad.reshape(m, size), axis=1)
    i, j = np.triu_indices(m, 1)
    dy = ym[:, j] - ym[:, i]
    slopes = dy / (tm[j] - tm[i])
    slope = nanmedian(slopes)
    valid_pairs = np.count_nonzero(~np.isnan(dy), axis=1)
    s = np.nansum(np.sign(dy), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = s / valid_pairs
        k = np.count_nonzero(~np.isnan(ym), axis=1).astype(np.float64)
        var = k * (k - 1) * (2 * k + 5) / 18.0
        mk_z = (np.abs(s) - 1) / np.sqrt(var) * np.sign(s)
    t_end = t[-1] if n else 0.0
    intercept = nanmedian(ym - slope[:, None] * (tm - t_end)[None, :])
    resid = y - (intercept[:, None] + slope[:, None] * (t - t_end)[None, :])
    noise = MAD_TO_SIGMA * nanmedian(np.abs(resid - nanmedian(resid)[:, None]))
    ok = ~np.isnan(y)
    first = np.where(ok.any(axis=1), ok.argmax(axis=1), n - 1).astype(np.float64)
    last = np.where(ok.any(axis=1), n - 1 - ok[:, ::-1].argmax(axis=1), 0).astype(np.float64)
    step = float(t[1] - t[0]) if n > 1 else 0.0
    return TrendFit(
        slope=slope,
        level_end=intercept,
        tau=tau,
        mk_z=mk_z,
        noise=noise,
        n_valid=ok.sum(axis=1).astype(np.float64),
        span_s=np.maximum(last - first, 0) * step,
        first=first,
    )


@dataclass(frozen=True)
class Trend:
    """A significant, monotone slope in the bad direction, with time to exhaustion if known."""

    signal: str
    layer: str
    instance: str
    slope_per_s: float
    level: float  # fitted value at the end of the window
    change: float  # fitted change over the span of data
    span_s: float
    start: float  # first point of the fit
    tau: float
    mk_z: float
    capacity: float | None
    time_to_exhaustion_s: float | None
    exhausts_at: float | None

    @property
    def slope_per_h(self) -> float:
        return self.slope_per_s * 3600.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "signal": self.signal,
            "layer": self.layer,
            "instance": self.instance,
            "slope_per_s": self.slope_per_s,
            "slope_per_h": self.slope_per_h,
            "level": self.level,
            "change": self.change,
            "span_s": self.span_s,
            "start": self.start,
            "tau": finite_or_none(self.tau),
            "mk_z": finite_or_none(self.mk_z),
            "capacity": self.capacity,
            "time_to_exhaustion_s": self.time_to_exhaustion_s,
            "exhausts_at": self.exhausts_at,
        }


def running_out(tr: Trend, end: float) -> Trend:
    """The trend with its time to exhaustion from `end` at its pace, where it has a capacity
    and a slope (a trend already past its capacity has none left: 0)."""
    if tr.capacity is None or tr.slope_per_s == 0:
        return tr
    tte = max(0.0, float((tr.capacity - tr.level) / tr.slope_per_s))
    return dataclasses.replace(tr, time_to_exhaustion_s=tte, exhausts_at=end + tte)


def capacity_for(
    unit: str | None,
    bad: str,
    inst: str,
    signal: str,
    capacity: Mapping[str, float] | None,
    cfg: DetectConfig,
) -> float | None:
    """What the signal runs out at: a ratio at 1 (or 0), bytes at the instance's capacity."""
    if unit == "ratio":
        return 1.0 if bad == "up" else 0.0
    if capacity is not None and inst in capacity:
        return capacity[inst]
    return cfg.capacities.get(signal)


def _accepted(
    t: FloatArray,
    x: FloatArray,
    yesterday: FloatArray | None,
    sign: float,
    floor: float,
    cfg: DetectConfig,
) -> tuple[np.ndarray, TrendFit, FloatArray]:
    """Which rows hold a trend over `t` (see the module docstring), with the fit and the
    fitted change over the span."""
    m = cfg.trend_subsample
    fit = theil_sen(t, x, m)
    change = fit.slope * fit.span_s
    with np.errstate(invalid="ignore"):
        ok = (
            (fit.n_valid >= cfg.trend_min_points)
            & (sign * fit.tau >= cfg.trend_min_tau)
            & (sign * fit.mk_z >= cfg.trend_min_mk_z)
            & (sign * change > np.maximum(floor, cfg.trend_noise_k * fit.noise))
            & (np.abs(change) >= cfg.trend_rel_floor * np.abs(fit.level_end))
        )
    if np.any(ok):
        # A leak climbs all along; a step (a slow instance's memory jumping once) does not.
        h = x.shape[1] // 2
        first, second = theil_sen(t[:h], x[:, :h], m), theil_sen(t[h:], x[:, h:], m)
        with np.errstate(invalid="ignore"):
            ok &= (sign * first.slope >= 0.25 * sign * fit.slope) & (
                sign * second.slope >= 0.25 * sign * fit.slope
            )
    if np.any(ok):
        # A leak's line reaches where the data end; data ending far above the line (by more
        # than the whole fitted climb) jumped there: a step at the end, not a leak.
        tail = x[:, -max(2, x.shape[1] // m) :]
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            jump = sign * (nanmedian(tail) - fit.level_end)
            ok &= ~(jump > np.maximum(np.abs(change), cfg.trend_noise_k * fit.noise))
    if yesterday is not None and np.any(ok):
        # The same ramp yesterday, and today not a day's climb above it: the daily shape, not a
        # leak (a leak climbing since yesterday would sit its pace × 24 h higher).
        yfit = theil_sen(t, yesterday, cfg.trend_subsample)
        with np.errstate(invalid="ignore"):
            same_shape = sign * yfit.slope >= 0.5 * sign * fit.slope
            carried = cfg.trend_daily_carry * np.abs(fit.slope) * 86400.0
            same_level = np.abs(nanmedian(x) - nanmedian(yesterday)) < np.maximum(floor, carried)
        ok &= ~(same_shape & same_level)
    return ok, fit, change


def detect_trends(
    signal: str,
    layer: str,
    unit: str | None,
    bad: str,
    instances: tuple[str, ...],
    t: FloatArray,
    x: FloatArray,
    yesterday: FloatArray | None,
    cfg: DetectConfig,
    capacity: dict[str, float] | None = None,
) -> list[Trend]:
    """Trends of one signal's rows. `capacity`: per-instance capacity (bytes signals)."""
    if bad not in ("up", "down") or x.shape[1] < cfg.trend_min_points:
        return []
    sign = 1.0 if bad == "up" else -1.0
    floor = cfg.trend_floors.get(unit or "", 0.0)
    ok, fit, change = _accepted(t, x, yesterday, sign, floor, cfg)
    # The latest part of the window is fitted on its own too: a leak that began inside the
    # window climbs only there (the whole window sees a flat start, then a step), and time to
    # exhaustion is at the pace of now. It is used where the whole window holds no trend, or
    # where the pace now is clearly faster than the window's average.
    k = int(x.shape[1] * (1.0 - cfg.trend_recent_share))
    if k > 0 and x.shape[1] - k >= cfg.trend_min_points:
        y_recent = yesterday[:, k:] if yesterday is not None else None
        recent, fit_r, change_r = _accepted(t[k:], x[:, k:], y_recent, sign, floor, cfg)
        with np.errstate(invalid="ignore"):
            faster = sign * fit_r.slope >= cfg.trend_recent_faster * sign * fit.slope
        recent &= ~ok | faster
        if np.any(recent):
            fit_r = dataclasses.replace(fit_r, first=fit_r.first + k)  # in the window's points
            fit = TrendFit(
                **{
                    f.name: np.where(recent, getattr(fit_r, f.name), getattr(fit, f.name))
                    for f in dataclasses.fields(TrendFit)
                }
            )
            change, ok = np.where(recent, change_r, change), ok | recent
    resets = {r: _before_reset(t, x, yesterday, r, sign, floor, cfg) for r in range(x.shape[0])}
    out: list[Trend] = []
    for r in range(x.shape[0]):
        held = resets.get(r) or (
            (fit, float(change[r]), float(fit.level_end[r])) if ok[r] else None
        )
        if held is None:
            continue
        f, climbed, level = held
        i = 0 if f.slope.shape[0] == 1 else r
        out.append(
            running_out(
                Trend(
                    signal=signal,
                    layer=layer,
                    instance=instances[r],
                    slope_per_s=float(f.slope[i]),
                    level=level,
                    change=climbed,
                    span_s=float(f.span_s[i]),
                    start=float(t[int(f.first[i])]),
                    tau=float(f.tau[i]),
                    mk_z=float(f.mk_z[i]),
                    capacity=capacity_for(unit, bad, instances[r], signal, capacity, cfg),
                    time_to_exhaustion_s=None,
                    exhausts_at=None,
                ),
                float(t[-1]),
            )
        )
    return out


def _before_reset(
    t: FloatArray,
    x: FloatArray,
    yesterday: FloatArray | None,
    r: int,
    sign: float,
    floor: float,
    cfg: DetectConfig,
) -> tuple[TrendFit, float, float] | None:
    """Row `r`'s climb before its largest fall, when that climb is a trend and the fall gave
    back at least half of it (a restart, not a dip): the fit, the climb, and the level now
    (after the reset: time to exhaustion is from there at the leak's pace)."""
    row = x[r]
    seen = np.flatnonzero(np.isfinite(row))
    if seen.size < cfg.trend_min_points + 2:
        return None
    steps = sign * np.diff(row[seen])
    j = int(np.argmin(steps))
    cut = int(seen[j]) + 1  # the fit ends at the last point before the fall
    if steps[j] >= 0 or cut < cfg.trend_min_points:
        return None
    y_before = yesterday[r : r + 1, :cut] if yesterday is not None else None
    held, fit, change = _accepted(t[:cut], x[r : r + 1, :cut], y_before, sign, floor, cfg)
    if not held[0] or -steps[j] < 0.5 * sign * float(change[0]):
        return None
    return fit, float(change[0]), float(row[seen[-1]])
