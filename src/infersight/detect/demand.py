"""Deviations that rode a passing burst of demand (seed §6.1: normal swings page no one).

A burst of requests (a push notification) lifts an instance's request rate for a few minutes,
and its latency, batch time, worker pool and KV cache follow it up and back down. The request
rate itself counts only when it lasts (`load_min_duration_s`); what followed it is held to the
same terms. A deviation of a signal that rides bursts (`rides_bursts` in signals.yaml:
queueing and occupancy) is set aside when every point of it fell while the same instance's
demand was above its band (give or take `sustain_window` points of lag), it
lasted less than `load_min_duration_s`, and it is over: back in its band for the last
`sustain_window` points. One still going, one that outlasted the burst, or one on an instance
whose demand did not rise is a change of its own and is reported; and a burst that left a mark
(a deviation that began in it and outlasted it, any other signal's deviation inside it such as
an IO stall or errors, the instance gone) sets nothing aside.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np

from infersight.detect._stats import BoolArray, FloatArray
from infersight.detect.baseline import Band
from infersight.detect.config import DetectConfig
from infersight.detect.result import Anomaly


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


def _rode(
    sustained: BoolArray, flags: BoolArray, burst: BoolArray, step: float, cfg: DetectConfig
) -> bool:
    """Whether one row's deviation rose and fell inside the (widened) burst."""
    if flags[-cfg.sustain_window :].any():  # still going: not known to pass with the burst
        return False
    pts = np.flatnonzero(sustained)
    if (pts[-1] - pts[0] + 1) * step >= cfg.load_min_duration_s:
        return False
    return bool(burst[sustained].all())


def burst_followers(
    followers: Sequence[tuple[Anomaly, BoolArray, BoolArray]],
    marks: Sequence[tuple[Anomaly, BoolArray]],
    demand_up: Mapping[str, BoolArray],
    damaged: Collection[str],
    step: float,
    cfg: DetectConfig,
) -> set[int]:
    """The ids of the deviations of `burst_riders` (anomaly, its sustained points, its raw
    flags) that rode a passing burst of their instance's demand (`demand_up`: instance →
    points raised). A burst that left a mark sets none of its instance's aside: a rider's
    deviation that began inside it and outlasted it or is still going, a deviation of any other
    signal inside it (`marks`: an IO stall, errors, restarts — a resource ran out), or the
    instance gone (`damaged`: its target down or a series stopped). What rose with the burst
    is then the evidence of the harm it did, not a swing."""
    bursts = {i: _widened(up, cfg.sustain_window) for i, up in demand_up.items() if up.any()}
    rode: dict[str, list[int]] = {}
    marked: set[str] = set(damaged)
    marked.update(
        a.instance for a, sus in marks if a.instance in bursts and bursts[a.instance][sus].any()
    )
    for a, sus, flags in followers:
        burst = bursts.get(a.instance)
        if burst is None or not sus.any():
            continue
        if _rode(sus, flags, burst, step, cfg):
            rode.setdefault(a.instance, []).append(id(a))
        elif burst[int(np.argmax(sus))]:
            marked.add(a.instance)
    return {i for inst, ids in rode.items() if inst not in marked for i in ids}
