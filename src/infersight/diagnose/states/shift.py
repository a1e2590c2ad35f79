"""`rose` / `fell`: the median since the onset (or since `when: during`'s anchor) against the
median before, by `factor`, and beyond the noise before (`shift_z` robust σ of single
samples: conservative, a noisy signal needs more than `factor`). Fewer than
`shift_min_before` samples before tell nothing of its noise: the shift is not read. Like a
level, a shift dates no change of its own: the incident's onset."""

from __future__ import annotations

import numpy as np

from infersight.diagnose.config import MAD_TO_SIGMA
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import from_level
from infersight.diagnose.kb import Condition
from infersight.diagnose.states.reading import NOT_HELD, Reading


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    cfg = ctx.config
    pre, post, _ = ctx.before_after(c.signal, inst, since)
    row = ctx.row(c.signal, inst)
    if pre is None or post is None or row is None or pre <= 0:
        return NOT_HELD
    factor = float(c.factor or 1.0)
    before = row[: ctx.split(since)]
    before = before[~np.isnan(before)]
    if before.size < cfg.shift_min_before:
        return NOT_HELD
    sigma = MAD_TO_SIGMA * float(np.median(np.abs(before - pre)))
    moved = post - pre if c.state == "rose" else pre - post
    ok = post >= factor * pre if c.state == "rose" else post * factor <= pre
    if not ok or moved <= cfg.shift_z * sigma:
        return NOT_HELD
    ev = from_level(ctx, c.signal, inst, c.state, pre, post, factor * pre, ctx.onset, since)
    cap = cfg.state_score_cap
    return Reading(True, ev, ctx.onset, min(cap, max(post / pre, pre / post) if post > 0 else cap))
