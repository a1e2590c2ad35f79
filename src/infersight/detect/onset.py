"""Onset: when an anomaly started, with an honest uncertainty.

Two estimates are combined. The *first sustained point* (the first point of the first run that
survives the sustain rule, extended back over the leading edge where the deviation is already
at least half the z threshold) is what the detector saw. A *mean-shift change point* (CUSUM of
the clipped z residuals, maximising the standardised difference of means before and after,
searched around that point) is where the level most likely changed. The onset reported is the
first; the distance between the two, and any data gap just before the onset, widen the
uncertainty, never below one grid step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infersight.detect._stats import BoolArray, FloatArray


@dataclass(frozen=True)
class Onset:
    index: int  # grid index of the first anomalous point
    change_point: int  # grid index of the most likely level change
    uncertainty_points: int  # ≥ 1

    def uncertainty_s(self, step: float) -> float:
        return float(self.uncertainty_points * step)


def change_point(r: FloatArray, clip: float) -> int | None:
    """Index (into r) of the most likely single mean shift; None with < 4 valid points.

    Residuals are clipped to ±clip so one wild point (a counter reset) cannot move it.
    """
    ok = np.flatnonzero(~np.isnan(r))
    m = ok.size
    if m < 4:
        return None
    v = np.clip(r[ok], -clip, clip)
    c = np.cumsum(v)
    k = np.arange(1, m)  # split: left = v[:k], right = v[k:]
    left = c[:-1] / k
    right = (c[-1] - c[:-1]) / (m - k)
    stat = np.sqrt(k * (m - k) / m) * np.abs(right - left)
    return int(ok[int(np.argmax(stat)) + 1])


def leading_gap(x: FloatArray, i: int) -> int:
    """Number of NaN points immediately before index i."""
    g = 0
    while i - g - 1 >= 0 and np.isnan(x[i - g - 1]):
        g += 1
    return g


def estimate(
    z: FloatArray,
    sustained: BoolArray,
    x: FloatArray,
    *,
    z_threshold: float,
    search: int,
    clip: float,
    max_back: int,
) -> Onset | None:
    """Onset of the first sustained run of one series; None when nothing is sustained.

    z: the bad-direction robust z per point (NaN where unknown); x: the raw values (for gaps).
    """
    hits = np.flatnonzero(sustained)
    if hits.size == 0:
        return None
    s0 = int(hits[0])
    i = s0
    edge = 0.5 * z_threshold
    while i > 0 and s0 - i < max_back and not np.isnan(z[i - 1]) and z[i - 1] >= edge:
        i -= 1
    lo, hi = max(0, i - search), min(z.size, s0 + search)
    cp_rel = change_point(z[lo:hi], clip)
    cp = i if cp_rel is None else lo + cp_rel
    unc = max(1, abs(cp - i)) + leading_gap(x, i)
    return Onset(index=i, change_point=cp, uncertainty_points=unc)
