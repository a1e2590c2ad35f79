"""Baselines and deviations: each point against the same time yesterday, last week, the hour before.

Reference windows are aligned point by point with the incident window. For every block of
`block_points` points the reference values of all available windows within ±`local_half_width`
points are pooled; the band is their median (centre) and MAD (spread), so the daily shape is
followed block by block and one odd reference window (yesterday's incident) is outvoted by the
others. A block with too few reference points falls back to the early part of the incident
window ("pre-onset"), flagged as weaker evidence.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from infersight.detect._stats import (
    MAD_TO_SIGMA,
    BoolArray,
    FloatArray,
    diff_noise,
    diff_noise_stack,
    median_mad_sorted,
    nanmad,
    nanmedian,
    sustained,
    valid_count,
)
from infersight.detect.config import DetectConfig
from infersight.detect.edges import follow_edges
from infersight.frame import MetricFrame, SignalSeries

#: The standard baseline windows (seed §6.1: the hour before, same time yesterday, last week).
STANDARD_BASELINES: dict[str, float] = {
    "baseline-1h": 3600.0,
    "baseline-1d": 86400.0,
    "baseline-7d": 7 * 86400.0,
}
PRE_ONSET = "pre-onset"


@dataclass(frozen=True)
class Reference:
    """One reference window for one signal: rows aligned to the incident's instances."""

    name: str
    values: FloatArray  # (instances, n)


def align_rows(series: SignalSeries | None, instances: tuple[str, ...], n: int) -> FloatArray:
    """`series` re-ordered to `instances` and cut/padded to n points (NaN where missing).

    May return a view of `series.values` (same instances, enough points): read it only.
    """
    if series is None:
        return np.full((len(instances), n), np.nan)
    vals = series.values
    if series.instances == instances and vals.shape[1] >= n and vals.dtype == np.float64:
        view: FloatArray = vals[:, :n]
        return view
    out = np.full((len(instances), n), np.nan)
    pos = {inst: i for i, inst in enumerate(series.instances)}
    src = np.array([pos.get(inst, -1) for inst in instances], dtype=np.int64)
    have = np.flatnonzero(src >= 0)
    m = min(n, vals.shape[1])
    if have.size:
        out[have, :m] = vals[src[have], :m]
    return out


def derivable(name: str, incident: MetricFrame) -> bool:
    """Whether a standard window can be taken from the incident window itself."""
    lag = STANDARD_BASELINES.get(name)
    return lag is not None and incident.n * incident.step > lag + 8 * incident.step


def references(
    signal: str,
    instances: tuple[str, ...],
    x: FloatArray,
    incident: MetricFrame,
    baselines: Mapping[str, MetricFrame],
    cfg: DetectConfig,
) -> list[Reference]:
    """Reference arrays for one signal: given windows, then lags derived from the incident."""
    n = x.shape[1]
    refs: list[Reference] = []
    for name, frame in baselines.items():
        if abs(frame.step - incident.step) > 1e-9:
            continue
        arr = align_rows(frame.get(signal), instances, n)
        if not np.isnan(arr).all():
            refs.append(Reference(name, arr))
    if cfg.derive_from_incident:
        for name, lag in STANDARD_BASELINES.items():
            if name in baselines or not derivable(name, incident):
                continue
            k = round(lag / incident.step)
            if k >= n:
                continue
            arr = np.full_like(x, np.nan)
            arr[:, k:] = x[:, : n - k]
            refs.append(Reference("self-" + name.split("-", 1)[1], arr))
    return refs


@dataclass(frozen=True)
class Band:
    """Expected value and scale of every point, and whether it fell back to pre-onset."""

    center: FloatArray
    scale: FloatArray
    fallback: BoolArray


def _blocks(a: FloatArray, b: int, h: int, nb: int, dtype: type = np.float64) -> FloatArray:
    """(rows, nb, b + 2h): each block of b points with h points of context on each side."""
    rows, n = a.shape
    padded: npt.NDArray[np.floating[Any]] = np.full((rows, nb * b + 2 * h), np.nan, dtype=dtype)
    padded[:, h : h + n] = a
    win = np.lib.stride_tricks.sliding_window_view(padded, b + 2 * h, axis=1)
    out: FloatArray = win[:, ::b, :][:, :nb, :]
    return out


def band(
    x: FloatArray,
    refs: list[Reference],
    abs_floor: float,
    n_pre: int,
    cfg: DetectConfig,
    unit: str | None = None,
) -> Band:
    """The robust band of every point of x (rows × n) from its references."""
    rows, n = x.shape
    b, h = cfg.block_points, cfg.local_half_width
    nb = max(1, -(-n // b))
    if not refs:
        center = np.full((rows, n), np.nan)
        scale = np.full((rows, n), np.nan)
        fallback = np.ones((rows, n), dtype=bool)
    else:
        # float32 for the sorts: twice as fast, and a band needs no more than 7 digits. The
        # blocks are cut from float32 copies (the same values as casting the pooled blocks).
        pooled = np.concatenate([_blocks(r.values, b, h, nb, np.float32) for r in refs], axis=2)
        pooled.sort(axis=-1)  # NaN last; one sort gives the median and the MAD
        k_b = valid_count(pooled)
        c_b, mad_b = median_mad_sorted(pooled, k_b)
        noise = nanmedian(diff_noise_stack([r.values for r in refs]))
        center_b = c_b.astype(np.float64)
        scale_b = np.fmax(MAD_TO_SIGMA * mad_b, noise[:, None])
        center = np.repeat(center_b, b, axis=1)[:, :n]
        scale = np.repeat(scale_b, b, axis=1)[:, :n]
        fallback = np.repeat(k_b < cfg.min_ref_points, b, axis=1)[:, :n]
        if cfg.edge_z > 0:
            seasonal = [r.values for r in refs if r.name.endswith(SEASONAL_SUFFIXES)]
            center = follow_edges(center, center_b, scale_b, b, seasonal, cfg.edge_z)
    if np.any(fallback):
        pre = x[:, : max(2, n_pre)]
        c_f = nanmedian(pre)
        s_f = np.fmax(MAD_TO_SIGMA * nanmad(pre, c_f), diff_noise(pre))
        center = np.where(fallback, c_f[:, None], center)
        scale = np.where(fallback, s_f[:, None], scale)
    floor = np.maximum(cfg.scale_floor_rel(unit) * np.abs(center), cfg.mad_floor_abs * abs_floor)
    scale = np.fmax(np.fmax(scale, floor), 1e-12)
    return Band(center, scale, fallback)


#: References that repeat the clock time: a daily edge is expected where they all show it.
SEASONAL_SUFFIXES = ("-1d", "-7d")


@dataclass(frozen=True)
class Deviation:
    """Point-wise deviation of one signal: flags, the sustained subset and the signed z."""

    z: FloatArray  # bad-direction z (for 'both': |z|), NaN where no data or no band
    signed: FloatArray  # (x - center) / scale
    flags: BoolArray  # every point past all floors
    sustained: BoolArray  # flags that last


def deviation(
    x: FloatArray,
    bd: Band,
    bad: str,
    abs_floor: float,
    rel_floor: float,
    cfg: DetectConfig,
    sustain: tuple[int, int] | None = None,
) -> Deviation:
    """Flags past every floor in the bad direction; `sustain` = (min_points, window)."""
    delta = x - bd.center
    signed = delta / bd.scale
    if bad == "up":
        d = delta
    elif bad == "down":
        d = -delta
    else:
        d = np.abs(delta)
    with np.errstate(invalid="ignore"):
        z = d / bd.scale
        flags = (
            (z >= cfg.z_threshold)
            & (d >= abs_floor)
            & (d >= rel_floor * np.abs(bd.center))
            & (d > 0)
        )
    flags &= ~np.isnan(z)
    k, w = sustain or (cfg.min_points, cfg.sustain_window)
    return Deviation(z, signed, flags, sustained(flags, k, w))
