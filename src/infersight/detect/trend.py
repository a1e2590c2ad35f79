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

from infersight.detect._stats import FloatArray, IntArray, finite_or_none, nanmedian
from infersight.detect.config import DetectConfig
from infersight.detect.trend_fit import TrendFit, monotone_fit, theil_sen_spans


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
    end: IntArray,
    sign: float,
    floor: float,
    cfg: DetectConfig,
) -> tuple[np.ndarray, TrendFit, FloatArray]:
    """Which rows hold a trend over their columns `[0, end[r])` (see the module docstring),
    with the fit and the fitted change over the span."""
    m = cfg.trend_subsample
    zero = np.zeros_like(end)
    fit = monotone_fit(t, x, zero, end, m, sign, cfg.trend_min_tau, cfg.trend_min_mk_z)
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
        h = end // 2
        first, second = theil_sen_spans(t, x, zero, h, m), theil_sen_spans(t, x, h, end, m)
        with np.errstate(invalid="ignore"):
            ok &= (sign * first.slope >= 0.25 * sign * fit.slope) & (
                sign * second.slope >= 0.25 * sign * fit.slope
            )
    cols = np.arange(x.shape[1])[None, :]
    in_span = cols < end[:, None]
    if np.any(ok):
        # A leak's line reaches where the data end; data ending far above the line (by more
        # than the whole fitted climb) jumped there: a step at the end, not a leak.
        in_tail = in_span & (cols >= (end - np.maximum(2, end // m))[:, None])
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            jump = sign * (nanmedian(np.where(in_tail, x, np.nan)) - fit.level_end)
            ok &= ~(jump > np.maximum(np.abs(change), cfg.trend_noise_k * fit.noise))
    if yesterday is not None and np.any(ok):
        # The same ramp yesterday, and today not a day's climb above it: the daily shape, not a
        # leak (a leak climbing since yesterday would sit its pace × 24 h higher).
        yfit = theil_sen_spans(t, yesterday, zero, end, m)
        today_level = nanmedian(np.where(in_span, x, np.nan))
        yesterday_level = nanmedian(np.where(in_span, yesterday, np.nan))
        with np.errstate(invalid="ignore"):
            same_shape = sign * yfit.slope >= 0.5 * sign * fit.slope
            carried = cfg.trend_daily_carry * np.abs(fit.slope) * 86400.0
            same_level = np.abs(today_level - yesterday_level) < np.maximum(floor, carried)
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
    full = np.full(x.shape[0], x.shape[1], np.int64)
    ok, fit, change = _accepted(t, x, yesterday, full, sign, floor, cfg)
    # The latest part of the window is fitted on its own too: a leak that began inside the
    # window climbs only there (the whole window sees a flat start, then a step), and time to
    # exhaustion is at the pace of now. It is used where the whole window holds no trend, or
    # where the pace now is clearly faster than the window's average.
    k = int(x.shape[1] * (1.0 - cfg.trend_recent_share))
    if k > 0 and x.shape[1] - k >= cfg.trend_min_points:
        y_recent = yesterday[:, k:] if yesterday is not None else None
        recent, fit_r, change_r = _accepted(t[k:], x[:, k:], y_recent, full - k, sign, floor, cfg)
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
    resets = _before_resets(t, x, yesterday, sign, floor, cfg)
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


def _before_resets(
    t: FloatArray,
    x: FloatArray,
    yesterday: FloatArray | None,
    sign: float,
    floor: float,
    cfg: DetectConfig,
) -> dict[int, tuple[TrendFit, float, float]]:
    """Per row, its climb before its largest fall, where that climb is a trend and the fall
    gave back at least half of it (a restart, not a dip): the fit, the climb, and the level now
    (after the reset: time to exhaustion is from there at the leak's pace). All rows are
    fitted in one call, each up to its own fall."""
    rows, width = x.shape
    seen = np.isfinite(x)
    # Each seen point's step from the seen point before it (gaps skipped).
    last_seen = np.maximum.accumulate(np.where(seen, np.arange(width), -1), axis=1)
    before = np.concatenate([np.full((rows, 1), -1), last_seen[:, :-1]], axis=1)
    has_step = seen & (before >= 0)
    prev = np.take_along_axis(x, np.maximum(before, 0), axis=1)
    with np.errstate(invalid="ignore"):
        steps = np.where(has_step, sign * (x - prev), np.inf)
    j = np.argmin(steps, axis=1)  # the largest fall, first of equals
    fall = -steps[np.arange(rows), j]
    cut = before[np.arange(rows), j] + 1  # the fit ends at the last point before the fall
    # A climb is a trend only past the unit's floor, and the fall must give back half of it:
    # a fall of half the floor or less ends no climb worth fitting.
    candidate = (
        (np.count_nonzero(seen, axis=1) >= cfg.trend_min_points + 2)
        & (fall > 0.5 * floor)
        & (fall > 0)
        & (cut >= cfg.trend_min_points)
    )
    idx = np.flatnonzero(candidate)
    if idx.size == 0:
        return {}
    y_before = yesterday[idx] if yesterday is not None else None
    held, fit, change = _accepted(t, x[idx], y_before, cut[idx], sign, floor, cfg)
    last_value = np.take_along_axis(x, last_seen[:, -1:].clip(0), axis=1)[:, 0]
    out: dict[int, tuple[TrendFit, float, float]] = {}
    for k, r in enumerate(idx):
        if held[k] and fall[r] >= 0.5 * sign * change[k]:
            one = {f.name: getattr(fit, f.name)[k : k + 1] for f in dataclasses.fields(fit)}
            out[int(r)] = (TrendFit(**one), float(change[k]), float(last_value[r]))
    return out
