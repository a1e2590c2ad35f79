"""Slow climbs: a leak too slow to show inside one window, read across the baselines.

A card leaking 0.3 GiB an hour moves 0.4% of its level in an hour: inside the incident window
that is below any trend floor, yet it fills the card within a day. The same hour an hour ago
and a day ago (seed §6.1) show it: the level climbed from yesterday to an hour ago and on to
now, in the signal's bad direction, with the latest hour climbing too. Comparing with the same
time yesterday rules out the daily shape; the rate is the latest hour's, since that is the
rate that will exhaust the resource. Reported as a `Trend` spanning the day, with its time to
exhaustion, so the rules read it as any other trend.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from infersight.detect._stats import FloatArray, nanmedian
from infersight.detect.config import DetectConfig
from infersight.detect.trend import Trend, capacity_for, running_out
from infersight.frame import MetricFrame

HOUR, DAY = 3600.0, 86400.0


def slow_climbs(
    signal: str,
    layer: str,
    unit: str | None,
    bad: str,
    instances: tuple[str, ...],
    x: FloatArray,
    baselines: Mapping[str, MetricFrame],
    end: float,
    cfg: DetectConfig,
    capacity: Mapping[str, float] | None = None,
) -> list[Trend]:
    """Rows of `x` (the incident window) that climbed since an hour ago and since a day ago,
    steadily, by more than the trend floors; `capacity` per instance for bytes signals."""
    hour, day = baselines.get("baseline-1h"), baselines.get("baseline-1d")
    if bad not in ("up", "down") or hour is None or day is None or x.shape[1] < 2:
        return []
    sign = 1.0 if bad == "up" else -1.0
    h_rows, d_rows = _rows(hour, signal, instances), _rows(day, signal, instances)
    if h_rows is None or d_rows is None:
        return []
    now = nanmedian(x)
    then_h, then_d = nanmedian(h_rows), nanmedian(d_rows)
    floor = cfg.trend_floors.get(unit or "", 0.0)
    with np.errstate(invalid="ignore"):
        climb_h, climb_d = sign * (now - then_h), sign * (now - then_d)
        earlier = sign * (then_h - then_d)
        noise = _noise(x, h_rows)
        ok = (
            # the latest hour climbed beyond what chance moves a window's median
            (climb_h > np.maximum(floor / 24.0, cfg.trend_noise_k * noise))
            # and so did the day before it: a leak climbs all along, a step climbs once
            & (earlier > np.maximum(floor, cfg.trend_noise_k * noise))
            & (climb_d > np.maximum(floor, cfg.trend_rel_floor * np.abs(now)))
        )
    out: list[Trend] = []
    for r in np.flatnonzero(ok):
        inst = instances[r]
        slope = float(now[r] - then_h[r]) / HOUR
        level = float(now[r])
        out.append(
            running_out(
                Trend(
                    signal=signal,
                    layer=layer,
                    instance=inst,
                    slope_per_s=slope,
                    level=level,
                    change=float(now[r] - then_d[r]),
                    span_s=DAY,
                    start=end - DAY,
                    tau=1.0,
                    # no Mann–Kendall test across three windows: the hour's climb over the
                    # noise of a window's median stands for it (capped as a score is)
                    mk_z=float(min(climb_h[r] / max(noise[r], 1e-12), 50.0)),
                    capacity=capacity_for(unit, bad, inst, signal, capacity, cfg),
                    time_to_exhaustion_s=None,
                    exhausts_at=None,
                ),
                end,
            )
        )
    return out


def _rows(frame: MetricFrame, signal: str, instances: tuple[str, ...]) -> FloatArray | None:
    s = frame.get(signal)
    if s is None:
        return None
    out = np.full((len(instances), frame.n), np.nan)
    pos = {inst: i for i, inst in enumerate(s.instances)}
    for r, inst in enumerate(instances):
        if inst in pos:
            out[r] = s.values[pos[inst]]
    return out


def _noise(x: FloatArray, before: FloatArray) -> FloatArray:
    """How far a window's median may wander by chance: the spread of its points over √n."""
    both = np.concatenate([x, before], axis=1)
    spread = nanmedian(np.abs(np.diff(both, axis=1)))
    k = np.maximum(np.count_nonzero(~np.isnan(x), axis=1), 1)
    out: FloatArray = spread / np.sqrt(k)
    return out
