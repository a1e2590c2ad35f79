"""Vectorised robust statistics on NaN-gapped arrays (numpy only, no scipy)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
    return sorted_quantile(s, valid_count(s), q)


def valid_count(a: npt.NDArray[np.floating[Any]]) -> IntArray:
    """Non-NaN values along the last axis."""
    out: IntArray = a.shape[-1] - np.count_nonzero(np.isnan(a), axis=-1)
    return out


def sorted_quantile(s: npt.NDArray[np.floating[Any]], k: IntArray, q: float) -> FloatArray:
    """`nanquantile` of rows already sorted (NaN last) holding k valid values each.

    The arithmetic is nanquantile's, operation by operation and dtype by dtype (a float32 `s`
    interpolates in float32 differences, as it always did), so results are bit-identical.
    """
    pos = q * np.maximum(k - 1, 0)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, np.maximum(k - 1, 0))
    v_lo = np.take_along_axis(s, lo[..., None], axis=-1)[..., 0]
    v_hi = np.take_along_axis(s, hi[..., None], axis=-1)[..., 0]
    out = v_lo + (v_hi - v_lo) * (pos - lo)
    res: FloatArray = np.where(k > 0, out, np.nan)
    return res


def _kth_deviations(
    s: npt.NDArray[np.floating[Any]], k: IntArray, c: FloatArray, t: IntArray
) -> tuple[FloatArray, FloatArray]:
    """Per row of s (2-D, sorted NaN-last, k ≥ t + 1 valid), the t-th and (t+1)-th smallest
    |s - c| (0-based; the second is the first again where only t + 1 values exist).

    Along a sorted row |s - c| falls, then rises (rounding keeps both monotone), so the t + 1
    values closest to c form a window [a, a + t]. a comes from the classic binary search
    (drop s[mid] for s[mid + t + 1] while c - s[mid] > s[mid + t + 1] - c, monotone in mid),
    the t-th smallest deviation is the larger one at the window's ends, and the next one is
    the smaller one just outside it. Only O(log n) values per row are read, and each
    deviation is computed as |s - c| is elsewhere (float64), so the values are the same.
    """
    rows, p = s.shape
    flat = np.ascontiguousarray(s).reshape(-1)
    base = np.arange(rows, dtype=np.int64) * p
    last = base + np.maximum(k - 1, 0)  # flat index of each row's last valid value
    # Branchless lower bound: the first start a in [0, k-1-t] where `move` is false (it is
    # true, then false, along a row; at k-1-t it is taken as false).
    lo = base.copy()  # flat index of the window's first point
    length = np.maximum(k - t, 1)  # candidate starts left, lo included
    far = t + 1
    rounds = int(length.max()).bit_length() if length.size else 0
    for _ in range(rounds):
        half = length >> 1
        probe = lo + half - 1  # rows with half 0 read a neighbour and keep lo
        move = (c - flat[probe]) > (flat[probe + far] - c)
        np.add(lo, half, out=lo, where=move)
        length -= half
    end = np.minimum(lo + t, last)
    kth: FloatArray = np.maximum(np.abs(flat[lo] - c), np.abs(flat[end] - c))
    before = np.where(lo > base, np.abs(flat[np.maximum(lo - 1, base)] - c), np.inf)
    after = np.where(end < last, np.abs(flat[np.minimum(end + 1, last)] - c), np.inf)
    nxt: FloatArray = np.where((lo > base) | (end < last), np.minimum(before, after), kth)
    return kth, nxt


def sorted_mad(s: npt.NDArray[np.floating[Any]], k: IntArray, center: FloatArray) -> FloatArray:
    """`nanmad(s, center)` of rows sorted NaN-last with k valid values each, without a sort.

    Bit-identical to nanmad (the same |s - center| values, the same order statistics, the same
    interpolation), provided s holds no ±inf and center is finite wherever k > 0 (see
    `median_mad_sorted`, which falls back to `nanmad` otherwise).
    """
    shape = k.shape
    p = s.shape[-1]
    s2 = s.reshape(-1, p)
    k2 = k.reshape(-1)
    c2 = np.asarray(center, dtype=np.float64).reshape(-1)
    pos = 0.5 * np.maximum(k2 - 1, 0)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, np.maximum(k2 - 1, 0))
    with np.errstate(invalid="ignore"):
        v_lo, v_next = _kth_deviations(s2, k2, c2, lo)
        v_hi = np.where(hi > lo, v_next, v_lo)
        out = v_lo + (v_hi - v_lo) * (pos - lo)
    res: FloatArray = np.where(k2 > 0, out, np.nan).reshape(shape)
    return res


def median_mad_sorted(
    s: npt.NDArray[np.floating[Any]], k: IntArray
) -> tuple[FloatArray, FloatArray]:
    """(nanmedian, nanmad around it) of rows sorted NaN-last, identical to the sorting path."""
    med = sorted_quantile(s, k, 0.5)
    if s.shape[-1] == 0 or s.size == 0:
        return med, nanmad(s, med)
    first = s[..., 0]
    last = np.take_along_axis(s, np.maximum(k - 1, 0)[..., None], axis=-1)[..., 0]
    if np.isinf(first).any() or np.isinf(last).any():  # |inf - inf| is NaN: counts differ
        return med, nanmad(s, med)
    return med, sorted_mad(s, k, med)


def nanmedian(a: FloatArray, axis: int = -1) -> FloatArray:
    return nanquantile(a, 0.5, axis)


def masked_median(a: FloatArray, mask: BoolArray) -> FloatArray:
    """Per row, `np.median(a[r, mask[r]])` with one sort for all rows: NaN where a masked
    value is NaN or nothing is masked, as np.median gives, and the same arithmetic (the mean
    of the two middle values), so the results are identical."""
    k = np.count_nonzero(mask, axis=-1)
    s = np.sort(np.where(mask, a, np.inf), axis=-1)  # masked values first (NaN last)
    lo = np.maximum(k - 1, 0) // 2
    hi = np.maximum(k, 1) // 2
    pair = np.take_along_axis(s, np.stack([lo, np.maximum(hi, lo)], axis=-1), axis=-1)
    with np.errstate(invalid="ignore"):
        mid = np.where(hi > lo, (pair[..., 0] + pair[..., 1]) / 2.0, pair[..., 0])
    bad = (k == 0) | np.any(mask & np.isnan(a), axis=-1)
    out: FloatArray = np.where(bad, np.nan, mid)
    return out


def nanmad(a: npt.NDArray[np.floating[Any]], center: FloatArray, axis: int = -1) -> FloatArray:
    """Median absolute deviation from `center` (broadcast on the reduced axis)."""
    dev = np.abs(np.moveaxis(a, axis, -1) - center[..., None])
    return nanmedian(dev, -1)


def diff_noise(a: FloatArray) -> FloatArray:
    """Point-to-point noise per row: MAD of first differences / √2, as a sigma.

    Insensitive to slow shapes (diurnal curves, trends), so it measures jitter only.
    """
    if a.shape[-1] < 2:
        return np.full(a.shape[:-1], np.nan)
    return _noise_of_diffs(np.diff(a, axis=-1))


def diff_noise_stack(arrays: Sequence[FloatArray]) -> FloatArray:
    """`diff_noise` of several (rows, n) arrays at once, stacked on a last axis: (rows, len)."""
    rows, n = arrays[0].shape
    if n < 2:
        return np.full((rows, len(arrays)), np.nan)
    d = np.empty((len(arrays), rows, n - 1))
    for i, a in enumerate(arrays):
        np.subtract(a[:, 1:], a[:, :-1], out=d[i])  # np.diff, without the copies
    out: FloatArray = np.moveaxis(_noise_of_diffs(d), 0, -1)
    return out


def _noise_of_diffs(d: FloatArray) -> FloatArray:
    d.sort(axis=-1)  # one sort gives the median and, without another, the MAD around it
    _, mad = median_mad_sorted(d, valid_count(d))
    out: FloatArray = MAD_TO_SIGMA * mad / np.sqrt(2.0)
    return out


def rolling_sum(flags: BoolArray, w: int) -> IntArray:
    """Sum over windows [t, t+w) for every start t (length n - w + 1; empty if n < w)."""
    c = np.zeros((*flags.shape[:-1], flags.shape[-1] + 1), dtype=np.int64)
    np.cumsum(flags, axis=-1, dtype=np.int64, out=c[..., 1:])
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
    if w <= 16:  # covered[t] = any good[j], j in [t-w+1, t]: w shifted ORs
        covered = np.zeros(flags.shape, dtype=bool)
        span = n - w + 1
        for off in range(w):
            covered[..., off : off + span] |= good
    else:
        gc = np.zeros((*flags.shape[:-1], good.shape[-1] + 1), dtype=np.int64)
        np.cumsum(good, axis=-1, dtype=np.int64, out=gc[..., 1:])
        idx = np.arange(n)
        hi = np.minimum(idx, n - w)
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
