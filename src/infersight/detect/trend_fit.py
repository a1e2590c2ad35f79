"""Theil–Sen fits of many rows at once, each row over its own span of columns.

A span's columns are cut into chunks (at most `m`); each chunk's median is one point of the fit
(the median of all pairwise slopes), so spikes, resets and gaps barely move it. Rows whose spans
differ (a leak's climb up to each row's own reset) are fitted in one vectorised call: row r
gets exactly what fitting `t[s:e]`, `y[r, s:e]` alone would give, with the same values in the
same medians.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass

import numpy as np

from infersight.detect._stats import MAD_TO_SIGMA, FloatArray, IntArray, nanmedian


@dataclass(frozen=True)
class TrendFit:
    """Per row: slope (unit/s), value at the span's last time, Kendall tau, MK z, noise, span."""

    slope: FloatArray
    level_end: FloatArray
    tau: FloatArray
    mk_z: FloatArray
    noise: FloatArray
    n_valid: FloatArray
    span_s: FloatArray
    first: FloatArray  # index of the first valid point, from the span's start


def theil_sen_spans(
    t: FloatArray, y: FloatArray, start: IntArray, end: IntArray, m: int
) -> TrendFit:
    """Row r fitted over columns `[start[r], end[r])` alone."""
    width = y.shape[1]
    n = end - start
    ym, tm = _chunk_medians(t, y, start, end, m)
    tau, mk_z = _kendall(ym)
    i, j = np.triu_indices(ym.shape[1], 1)
    slope = nanmedian((ym[:, j] - ym[:, i]) / (tm[:, j] - tm[:, i]))
    t_end = np.where(n > 0, t[np.maximum(end - 1, 0)], 0.0)
    intercept = nanmedian(ym - slope[:, None] * (tm - t_end[:, None]))
    cols = np.arange(width)[None, :]
    in_span = (cols >= start[:, None]) & (cols < end[:, None])
    fitted = intercept[:, None] + slope[:, None] * (t[None, :] - t_end[:, None])
    resid = np.where(in_span, y - fitted, np.nan)
    noise = MAD_TO_SIGMA * nanmedian(np.abs(resid - nanmedian(resid)[:, None]))
    ok = in_span & ~np.isnan(y)
    any_ok = ok.any(axis=1)
    first = np.where(any_ok, ok.argmax(axis=1) - start, n - 1).astype(np.float64)
    last = np.where(any_ok, width - 1 - ok[:, ::-1].argmax(axis=1) - start, 0).astype(np.float64)
    after = np.minimum(start + 1, width - 1)
    step = np.where(n > 1, t[after] - t[np.minimum(start, width - 1)], 0.0)
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


def monotone_fit(
    t: FloatArray,
    y: FloatArray,
    start: IntArray,
    end: IntArray,
    m: int,
    sign: float,
    min_tau: float,
    min_z: float,
) -> TrendFit:
    """The fit of the rows whose span is monotone enough in the `sign` direction (Kendall tau
    and Mann–Kendall z at least these); the other rows get their tau and z, NaN elsewhere.

    Tau and z come before the slopes' medians and cost a fraction of them: most rows of a
    fleet do not climb, and nothing but their tau and z would be read."""
    tau, mk_z = _kendall(_chunk_medians(t, y, start, end, m)[0])
    with np.errstate(invalid="ignore"):
        keep = np.flatnonzero((sign * tau >= min_tau) & (sign * mk_z >= min_z))
    nan = np.full(y.shape[0], np.nan)
    out = {f.name: nan.copy() for f in dataclasses.fields(TrendFit)}
    out["tau"], out["mk_z"] = tau, mk_z
    if keep.size:
        part = theil_sen_spans(t, y[keep], start[keep], end[keep], m)
        for name, column in out.items():
            column[keep] = getattr(part, name)
    return TrendFit(**out)


def _chunk_medians(
    t: FloatArray, y: FloatArray, start: IntArray, end: IntArray, m: int
) -> tuple[FloatArray, FloatArray]:
    """Each span cut into at most `m` chunks of equal size (the last one shorter): the
    chunks' medians and mean times, rows × chunks, NaN past a short span's last chunk."""
    rows = y.shape[0]
    n = end - start
    if rows and np.all(start == start[0]) and np.all(end == end[0]):
        return _shared_chunk_medians(t[start[0] : end[0]], y[:, start[0] : end[0]], m)
    chunks = np.maximum(2, np.minimum(m, n))
    size = np.maximum(-(-n // chunks), 1)
    chunks = -(-n // size)
    if rows and np.all(start == start[0]):
        return _chunk_medians_by_size(t, y, int(start[0]), n, size, chunks)
    k = np.arange(max(int(chunks.max(initial=1)), 1))[None, :, None]
    q = np.arange(int(size.max(initial=1)))[None, None, :]
    offset = k * size[:, None, None] + q
    inside = (q < size[:, None, None]) & (offset < n[:, None, None])
    col = np.where(inside, start[:, None, None] + offset, 0)
    ym = nanmedian(np.where(inside, y[np.arange(rows)[:, None, None], col], np.nan))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # chunks past a short span: empty
        tm = np.nanmean(np.where(inside, t[col], np.nan), axis=-1)
    return ym, tm


def _chunk_medians_by_size(
    t: FloatArray, y: FloatArray, start: int, n: IntArray, size: IntArray, chunks: IntArray
) -> tuple[FloatArray, FloatArray]:
    """`_chunk_medians` where every span starts at `start` (a climb up to each row's own
    reset): rows whose chunks have one size share their columns, so each size is one reshape
    with the columns past a row's span blanked, not a gather."""
    rows, width = y.shape
    ym = np.full((rows, int(chunks.max())), np.nan)
    tm = np.full_like(ym, np.nan)
    for sz in np.unique(size).tolist():
        idx = np.flatnonzero(size == sz)
        k = int(chunks[idx].max())
        w = k * sz
        have = min(w, width - start)
        seg = np.full((idx.size, w), np.nan)
        seg[:, :have] = y[idx, start : start + have]
        tseg = np.full(w, np.nan)
        tseg[:have] = t[start : start + have]
        past = np.arange(w)[None, :] >= n[idx, None]
        seg[past] = np.nan
        ym[idx, :k] = nanmedian(seg.reshape(idx.size, k, sz))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # chunks past a short span: empty
            times = np.where(past, np.nan, tseg[None, :]).reshape(idx.size, k, sz)
            tm[idx, :k] = np.nanmean(times, axis=-1)
    return ym, tm


def _shared_chunk_medians(t: FloatArray, y: FloatArray, m: int) -> tuple[FloatArray, FloatArray]:
    """`_chunk_medians` where every row has the same span (here, all of `t`): one reshape."""
    rows, n = y.shape
    chunks = max(2, min(m, n))
    size = max(-(-n // chunks), 1)
    chunks = -(-n // size)
    pad = np.full((rows, chunks * size), np.nan)
    pad[:, :n] = y
    tpad = np.full(chunks * size, np.nan)
    tpad[:n] = t
    ym = nanmedian(pad.reshape(rows, chunks, size))
    tm = np.broadcast_to(np.nanmean(tpad.reshape(chunks, size), axis=1), (rows, chunks))
    return ym, tm


def _kendall(ym: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Kendall tau and Mann–Kendall z of the chunk medians, pair by pair (the pairs' differences
    written lag by lag from slices, not gathered by index)."""
    rows, m = ym.shape
    dy = np.empty((rows, m * (m - 1) // 2))
    at = 0
    for lag in range(1, m):
        np.subtract(ym[:, lag:], ym[:, :-lag], out=dy[:, at : at + m - lag])
        at += m - lag
    rises, falls = np.count_nonzero(dy > 0, axis=1), np.count_nonzero(dy < 0, axis=1)
    s = rises - falls
    valid_pairs = rises + falls + np.count_nonzero(dy == 0, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = s / valid_pairs
        k = np.count_nonzero(~np.isnan(ym), axis=1).astype(np.float64)
        var = k * (k - 1) * (2 * k + 5) / 18.0
        mk_z = (np.abs(s) - 1) / np.sqrt(var) * np.sign(s)
    return tau, mk_z
