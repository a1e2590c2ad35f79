"""When a change began: the readings are read back from detection's onset to the point the
series left its level, on the scale the quantity moves on."""

from __future__ import annotations

import math

import numpy as np

from infersight.detect import Anomaly
from infersight.diagnose.context import Context
from infersight.frame import FloatArray


def part_way(before: float, after: float, share: float) -> float:
    """The level `share` of the way from `before` to `after`. Latencies, rates and sizes move
    by factors: a search 473× slower is "halfway" at about 22×, not at 236×, which it reaches
    only in the last minutes of a ramp that began long before. Where both ends are positive the
    way is measured in factors; across zero (a queue from empty) it is measured in units."""
    if before > 0 and after > 0:
        return before * math.exp(share * math.log(after / before))
    return before + share * (after - before)


def first_sign(ctx: Context, a: Anomaly, lookback_s: float) -> float:
    """When a change of this size really began: the point after the last three readings in a
    row on the near side of halfway between before and after, looking back from detection's
    onset (or, where that reading has not left its level yet, the first one that has). A band
    test dates a small shift when it has lasted long enough to be sure (a pass a third slower,
    found 15 minutes late); the walk orders causes by when they began."""
    row = ctx.row(a.signal, a.instance)
    if a.kind == "absent" or row is None or a.baseline is None or a.observed is None:
        return a.onset
    mid = part_way(a.baseline, a.observed, 0.5)
    k = ctx.frame.index_of(a.onset)
    lo = max(0, k - int(lookback_s // ctx.frame.step))
    with np.errstate(invalid="ignore"):
        near = row < mid if a.observed > a.baseline else row > mid
        edge = part_way(a.baseline, a.observed, 0.1)
        gone = row >= edge if a.observed > a.baseline else row <= edge
    if not gone[k]:
        # dated before it left its level (a flat series' first wobble scores high against its
        # tiny spread): it began at the first reading a tenth of the way on (a queue that
        # grows for twenty minutes is on its way long before halfway)
        ahead = np.flatnonzero(gone[k:])
        return float(ctx.frame.times[k + int(ahead[0])]) if ahead.size else a.onset
    run = 0
    for j in range(k, lo - 1, -1):
        run = run + 1 if near[j] else 0
        if run == 3:
            return float(ctx.frame.times[min(j + 3, k)])
    return a.onset


def step_start(
    ctx: Context, row: FloatArray, before: float, after: float, lookback_s: float
) -> float:
    """When a step of the medians began: the first reading, from `lookback_s` before the onset
    on, that starts three in a row past halfway and after which the median stays there (a
    survivor's share rising when its peer died minutes after the onset is dated then, and a
    step that began before the onset is dated before it)."""
    mid = part_way(before, after, 0.5)
    k = ctx.split()
    lo = max(0, k - int(lookback_s // ctx.frame.step))
    with np.errstate(invalid="ignore"):
        far = row > mid if after > before else row < mid
    for j in range(lo, row.size - 2):
        if far[j] and far[j + 1] and far[j + 2]:
            rest = row[j:]
            rest = rest[~np.isnan(rest)]
            if rest.size and (np.median(rest) > mid) == (after > before):
                return float(ctx.frame.times[j])
    return ctx.onset
