"""Deviations that rode a passing burst of demand (seed §6.1: normal swings page no one).

A burst of requests (a push notification) lifts an instance's request rate for a few minutes,
and its latency, batch time, worker pool and KV cache follow it up and back down. The request
rate itself counts only when it lasts (`load_min_duration_s`); what followed it is held to the
same terms. A deviation of another signal is set aside when every point of it fell while the
same instance's demand was above its band (give or take `sustain_window` points of lag), it
lasted less than `load_min_duration_s`, and it is over: back in its band for the last
`sustain_window` points. One still going, one that outlasted the burst, or one on an instance
whose demand did not rise is a change of its own and is reported.
"""

from __future__ import annotations

import numpy as np

from infersight.detect._stats import BoolArray, FloatArray
from infersight.detect.baseline import Band
from infersight.detect.config import DetectConfig


def raised(
    x: FloatArray, bd: Band, abs_floor: float, rel_floor: float, cfg: DetectConfig
) -> BoolArray:
    """Points (rows × n) where demand is above its band past the floors of a deviation, lasting
    or not: a burst too short to report is still a burst."""
    delta = x - bd.center
    with np.errstate(invalid="ignore"):
        up = (
            (delta >= cfg.z_threshold * bd.scale)
            & (delta >= abs_floor)
            & (delta >= rel_floor * np.abs(bd.center))
            & (delta > 0)
        )
    return up & ~np.isnan(delta)


def _widened(mask: BoolArray, w: int) -> BoolArray:
    """The mask with `w` points added on either side of every run."""
    if w <= 0 or not mask.any():
        return mask
    c = np.concatenate(([0], np.cumsum(mask.astype(np.int64))))
    n = mask.size
    idx = np.arange(n)
    lo, hi = np.maximum(idx - w, 0), np.minimum(idx + w + 1, n)
    out: BoolArray = (c[hi] - c[lo]) > 0
    return out


def rode_burst(
    sustained: BoolArray,
    flags: BoolArray,
    demand_up: BoolArray | None,
    step: float,
    cfg: DetectConfig,
) -> bool:
    """Whether one row's deviation (its sustained points, its raw flags) rose and fell inside
    a burst of the same instance's demand (`demand_up`, that instance's raised points)."""
    if demand_up is None or not demand_up.any() or not sustained.any():
        return False
    w = cfg.sustain_window
    if flags[-w:].any():  # still going: not known to pass with the burst
        return False
    pts = np.flatnonzero(sustained)
    if (pts[-1] - pts[0] + 1) * step >= cfg.load_min_duration_s:
        return False
    return bool(_widened(demand_up, w)[sustained].all())
