"""Vectorised robust statistics on NaN-gapped arrays (numpy only, no scipy)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

#: MAD × this estimates the standard deviation of normal data.
MAD_TO_SIGMA = 1.4826


def nanquantile(a: FloatArray, q: float, axis: int = -1) -> FloatArray:
    """Quantile along an axis ignoring NaN (NaN where all are NaN); sort-based, fast."""
    arr = np.moveaxis(np.asarray(a), axis, -1)
    if arr.shape[-1] == 0:
        return np.full(arr.shape[:-1], np.nan)
    s = np.sort(arr, axis=-1)  # NaN sorts last
    k = np.count_nonzero(~np.isnan(arr), axis=-1)
    pos = q * np.maximum(k - 1, 0)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, np.maximum(k - 1, 0))
    v_lo = np.take_along_axis(s, lo[..., None], axis=-1)[..., 0]
    v_hi = np.take_along_axis(s, hi[..., None], axis=-1)[..., 0]
    out = v_lo + (v_hi - v_lo) * (pos - lo)
    return np.where(k > 0, out, np.nan)


def nanmedian(a: FloatArray, axis: int = -1) -> FloatArray:
    return nanquantile(a, 0.5, axis)


def nanmad(a: FloatArray, center: FloatArray, axis: int = -1) -> FloatArray:
    """Median absolute deviation from `center` (broadcast on the reduced axis)."""
    dev = np.abs(np.moveaxis(a, axis, -1) - center[..., None])
    return nanmedian(dev, -1)


def diff_noise(a: FloatArray) -> FloatArray:
    """Point-to-point noise per row: MAD of first differences / √2, as a sigma.

    Insensitive to slow shapes (diurnal curves, trends), so it measures jitter only.
    """
    if a.shape[-1] < 2:
        return np.full(a.shape[:-1], np.nan)
    d = np.diff(a, axis=-1)
    out: FloatArray = MAD_TO_SIGMA * nanmedian(np.abs(d - nanmedian(d)[..., None])) / np.sqrt(2.0)
    return out


def rolling_sum(flags: BoolArray, w: int) -> IntArray:
    """Sum over windows [t, t+w) for every start t (length n - w + 1; empty if n < w)."""
    c = np.cumsum(flags, axis=-1, dtype=np.int64)
    c = np.concatenate([np.zeros((*flags.shape[:-1], 1), dtype=np.int64), c], axis=-1)
    out: IntArray = c[..., w:] - c[..., :-w]
    return out


def sustained(flags: BoolArray, min_points: int, window: int) -> BoolArray:
    """Flags that belong to a window of `window` points holding ≥ `min_points` flags.

    A single spike (or a short burst under `min_points`) never survives; a sustained shift
    survives point by point, tolerating a few non-flagged points inside it.
    """
    n = flags.shape[-1]
    w = max(window, min_points)
    if n < min_points:
        return np.zeros_like(flags)
    if n < w:
        w = n
    good = rolling_sum(flags, w) >= min_points  # good[j]: window [j, j+w) qualifies
    gc = np.cumsum(good, axis=-1, dtype=np.int64)
    gc = np.concatenate([np.zeros((*flags.shape[:-1], 1), dtype=np.int64), gc], axis=-1)
    idx = np.arange(n)
    hi = np.minimum(idx, n - w)  # covered[t] = any good[j], j in [t-w+1, t]
    lo = np.maximum(idx - w + 1, 0)
    covered = (gc[..., hi + 1] - gc[..., lo]) > 0
    out: BoolArray = flags & covered
    return out


def runs(mask: npt.NDArray[np.bool_]) -> list[tuple[int, int]]:
    """(start, end_exclusive) of each run of True in a 1-D mask."""
    m = np.concatenate([[False], mask.astype(bool), [False]])
    d = np.diff(m.astype(np.int8))
    starts = np.flatnonzero(d == 1)
    ends = np.flatnonzero(d == -1)
    return [(int(s), int(e)) for s, e in zip(starts, ends, strict=True)]


def merge_runs(rs: list[tuple[int, int]], gap: int) -> list[tuple[int, int]]:
    """Merge runs separated by fewer than `gap` points (one burst, briefly interrupted)."""
    out: list[tuple[int, int]] = []
    for s, e in rs:
        if out and s - out[-1][1] < gap:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def finite_or_none(x: float | None) -> float | None:
    if x is None:
        return None
    v = float(x)
    return v if np.isfinite(v) else None
