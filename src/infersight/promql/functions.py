"""PromQL functions over whole grids at once: range functions and histogram_quantile.

A range function sees, per grid point, the samples of one series in the window
(t - offset - range, t - offset]; `Windows` holds those windows as index bounds into the
series' sorted samples, so every function is a handful of numpy operations over all grid
points. Results are NaN where Prometheus would return no value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Windows:
    """Per grid point: samples ts[lo:hi] fall in (start, end]."""

    lo: IntArray
    hi: IntArray
    start: FloatArray
    end: FloatArray
    range_s: float

    @classmethod
    def over(cls, ts: FloatArray, ends: FloatArray, range_s: float) -> Windows:
        starts = ends - range_s
        lo = np.searchsorted(ts, starts, side="right").astype(np.int64)
        hi = np.searchsorted(ts, ends, side="right").astype(np.int64)
        return cls(lo, hi, starts, ends, range_s)

    @property
    def count(self) -> IntArray:
        return self.hi - self.lo


RangeFunc = Callable[[FloatArray, FloatArray, Windows], FloatArray]


def window_reduce(ufunc: np.ufunc, v: FloatArray, lo: IntArray, hi: IntArray) -> FloatArray:
    """ufunc.reduce(v[lo[k]:hi[k]]) for every k; meaningless where lo >= hi (callers mask)."""
    if lo.size == 0:
        return np.empty(0)
    padded = np.append(v, 0.0)  # so that an index equal to len(v) is valid
    idx = np.empty(2 * lo.size, dtype=np.int64)
    idx[0::2] = np.minimum(lo, len(v))
    idx[1::2] = np.minimum(hi, len(v))
    out: FloatArray = ufunc.reduceat(padded, idx)[0::2]
    return out


def _pairwise(v: FloatArray, pred: Callable[[FloatArray, FloatArray], FloatArray]) -> FloatArray:
    """out[j] = pred(v[j-1], v[j]) for j >= 1, out[0] = 0."""
    out = np.zeros_like(v)
    out[1:] = pred(v[:-1], v[1:])
    return out


def _sum_after_first(contrib: FloatArray, w: Windows) -> FloatArray:
    """Sum of contrib over the window's samples except its first (pairwise quantities)."""
    lo = w.lo + 1
    total = window_reduce(np.add, contrib, lo, w.hi)
    return np.where(lo < w.hi, total, 0.0)


def extrapolated_rate(
    ts: FloatArray, v: FloatArray, w: Windows, *, counter: bool, per_second: bool
) -> FloatArray:
    """rate / increase / delta, as Prometheus' extrapolatedRate (promql/functions.go)."""
    n = w.count
    ok = n >= 2
    first = np.where(ok, w.lo, 0)
    last = np.where(ok, w.hi - 1, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        result = v[last] - v[first]
        if counter:
            resets = _pairwise(v, lambda a, b: np.where(b < a, a, 0.0))
            result = result + _sum_after_first(resets, w)
        to_start = ts[first] - w.start
        to_end = w.end - ts[last]
        sampled = ts[last] - ts[first]
        avg_gap = sampled / np.maximum(n - 1, 1)
        if counter:
            # counters cannot go below zero: do not extrapolate past the zero point
            zero_ok = (result > 0) & (v[first] >= 0)
            to_zero = sampled * (v[first] / np.where(zero_ok, result, 1.0))
            to_start = np.where(zero_ok & (to_zero < to_start), to_zero, to_start)
        threshold = avg_gap * 1.1
        interval = sampled.copy()
        interval += np.where(to_start < threshold, to_start, avg_gap / 2)
        interval += np.where(to_end < threshold, to_end, avg_gap / 2)
        factor = interval / sampled
        if per_second:
            factor = factor / w.range_s
        out = result * factor
    return np.where(ok & (sampled > 0), out, np.nan)


def irate(ts: FloatArray, v: FloatArray, w: Windows) -> FloatArray:
    ok = w.count >= 2
    last = np.where(ok, w.hi - 1, min(1, len(v) - 1))  # any valid index where not ok
    prev = np.maximum(last - 1, 0)
    diff = np.where(v[last] < v[prev], v[last], v[last] - v[prev])
    gap = ts[last] - ts[prev]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = diff / gap
    return np.where(ok & (gap > 0), out, np.nan)


def _count_pairs(pred: Callable[[FloatArray, FloatArray], BoolArray]) -> RangeFunc:
    def fn(ts: FloatArray, v: FloatArray, w: Windows) -> FloatArray:
        hits = _pairwise(v, lambda a, b: pred(a, b).astype(np.float64))
        return np.where(w.count >= 1, _sum_after_first(hits, w), np.nan)

    return fn


def _over_time(kind: str) -> RangeFunc:
    def fn(ts: FloatArray, v: FloatArray, w: Windows) -> FloatArray:
        n = w.count
        ok = n >= 1
        if kind == "last":
            out = v[np.where(ok, w.hi - 1, 0)]  # series always hold at least one sample
        elif kind == "avg":
            out = window_reduce(np.add, v, w.lo, w.hi) / np.maximum(n, 1)
        else:
            ufunc = {"sum": np.add, "max": np.fmax, "min": np.fmin}[kind]
            out = window_reduce(ufunc, v, w.lo, w.hi)
        return np.where(ok, out, np.nan)

    return fn


RANGE_FUNCTIONS: dict[str, RangeFunc] = {
    "rate": lambda ts, v, w: extrapolated_rate(ts, v, w, counter=True, per_second=True),
    "increase": lambda ts, v, w: extrapolated_rate(ts, v, w, counter=True, per_second=False),
    "delta": lambda ts, v, w: extrapolated_rate(ts, v, w, counter=False, per_second=False),
    "irate": irate,
    "changes": _count_pairs(lambda a, b: (a != b) & ~(np.isnan(a) & np.isnan(b))),
    "resets": _count_pairs(lambda a, b: b < a),
    "avg_over_time": _over_time("avg"),
    "sum_over_time": _over_time("sum"),
    "max_over_time": _over_time("max"),
    "min_over_time": _over_time("min"),
    "last_over_time": _over_time("last"),
}
#: range functions whose result keeps the metric name
KEEPS_NAME = frozenset({"last_over_time"})

ELEMENTWISE: dict[str, Callable[[FloatArray, float], FloatArray]] = {
    "abs": lambda x, _: np.abs(x),
    "floor": lambda x, _: np.floor(x),
    "ceil": lambda x, _: np.ceil(x),
    "clamp_min": lambda x, s: np.maximum(x, s),
    "clamp_max": lambda x, s: np.minimum(x, s),
}


def _parse_le(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def bucket_quantile(q: float, upper: FloatArray, counts: FloatArray) -> FloatArray:
    """Prometheus' bucketQuantile for every column of counts (buckets × points).

    `upper` is sorted ascending without duplicates and ends with +Inf; every value of counts
    is present (columns with missing buckets are handled by the caller).
    """
    k, m = counts.shape
    if math.isnan(q):
        return np.full(m, np.nan)
    if q < 0 or q > 1:
        return np.full(m, -np.inf if q < 0 else np.inf)
    if k < 2:
        return np.full(m, np.nan)
    c = np.maximum.accumulate(counts, axis=0)  # ensureMonotonic
    observations = c[-1]
    rank = q * observations
    reached = c[:-1] >= rank
    b = np.where(reached.any(axis=0), reached.argmax(axis=0), k - 1)
    cols = np.arange(m)
    prev = np.maximum(b - 1, 0)
    start = np.where(b > 0, upper[prev], 0.0)
    below = np.where(b > 0, c[prev, cols], 0.0)
    bi = np.minimum(b, k - 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = start + (upper[bi] - start) * ((rank - below) / (c[bi, cols] - below))
    out = np.where(b == k - 1, upper[k - 2], inside)
    out = np.where((b == 0) & (upper[0] <= 0), upper[0], out)
    return np.where(observations == 0, np.nan, out)


def histogram_quantile(q: float, les: list[str], rows: FloatArray) -> FloatArray:
    """Quantile of one bucket group: `les` are the `le` labels of rows (buckets × points).

    Buckets with an unparsable `le` are ignored; equal bounds are merged; without a +Inf
    bucket at a point, the result there is NaN. Points where some buckets are absent are
    computed from the buckets that are present, as Prometheus does.
    """
    bounds = [_parse_le(le) for le in les]
    keep = [i for i, b in enumerate(bounds) if b is not None]
    m = rows.shape[1]
    if not keep:
        return np.full(m, np.nan)
    ub = np.array([bounds[i] for i in keep], dtype=np.float64)
    data = rows[keep]
    order = np.argsort(ub, kind="stable")
    ub, data = ub[order], data[order]
    out = np.full(m, np.nan)
    present = ~np.isnan(data)
    full = present.all(axis=0)
    partial = np.nonzero(present.any(axis=0) & ~full)[0]
    for cols, sub_ub, sub in [(np.nonzero(full)[0], ub, data[:, full])] + [
        (np.array([j]), ub[present[:, j]], data[present[:, j], j : j + 1]) for j in partial
    ]:
        if cols.size == 0 or not np.isinf(sub_ub[-1]) or sub_ub[-1] < 0:
            continue
        uniq, inverse = np.unique(sub_ub, return_inverse=True)  # coalesceBuckets
        merged = np.zeros((uniq.size, sub.shape[1]))
        np.add.at(merged, inverse, sub)
        out[cols] = bucket_quantile(q, uniq, merged)
    return out


def aggregate_rows(op: str, stack: FloatArray) -> FloatArray:
    """sum/avg/max/min/count down the rows (series × points), ignoring absent values."""
    present = ~np.isnan(stack)
    count = present.sum(axis=0).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        if op == "sum":
            val = np.nansum(stack, axis=0)
        elif op == "avg":
            val = np.nansum(stack, axis=0) / count
        elif op == "count":
            val = count
        elif op == "max":
            val = np.max(np.where(present, stack, -np.inf), axis=0)
        elif op == "min":
            val = np.min(np.where(present, stack, np.inf), axis=0)
        else:
            raise ValueError(f"aggregation {op} is not supported")
    return np.where(count > 0, val, np.nan)
