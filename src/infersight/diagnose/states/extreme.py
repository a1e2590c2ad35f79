"""`up` / `down` with `stat: max`/`min`: the extreme since the onset against the one before it
(both split `peak_lead_s` early: a cause's first readings precede the users' symptom), by
`factor` (default `extreme_factor`), leaving out readings taken just after the target was
down (see `Context.settled_row`): a burst too short for a sustained deviation."""

from __future__ import annotations

import numpy as np

from infersight.diagnose.context import Context
from infersight.diagnose.evidence import from_level
from infersight.diagnose.kb import Condition
from infersight.diagnose.states.peaks import reads_extreme
from infersight.diagnose.states.reading import NOT_HELD, Reading


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    cfg = ctx.config
    settled = reads_extreme(c)
    row = ctx.settled_row(c.signal, inst) if settled else ctx.row(c.signal, inst)
    if row is None:
        return NOT_HELD
    k = ctx.peak_split()
    high_before, low_before, high_since, low_since = ctx.extremes(c.signal, inst, k, settled)
    if np.isnan(high_before) or np.isnan(high_since):
        return NOT_HELD
    before, after = (high_before, high_since) if c.stat == "max" else (low_before, low_since)
    tail = row[k:]
    factor = c.factor if c.factor is not None else cfg.extreme_factor
    if c.state == "up":
        holds = after > 0 and after >= factor * max(before, 0.0)
    else:
        holds = after * factor <= before
    if c.delta is not None:
        holds = holds and abs(after - before) >= c.delta
    if not holds:
        return NOT_HELD
    # dated by the first sample past the threshold, not by the peak: a burst's cause begins
    # when the values leave their old range, and the peak can come many minutes later
    bar = factor * max(before, 0.0) if c.state == "up" else before / factor
    crossed = ((tail >= bar) & (tail > 0)) if c.state == "up" else (tail <= bar)
    at = k + int(np.argmax(crossed))
    onset = ctx.frame.start + ctx.frame.step * at
    ev = from_level(ctx, c.signal, inst, c.stat, before, after, bar, onset)
    cap = cfg.state_score_cap
    return Reading(True, ev, onset, min(cap, after / before) if before > 0 else cap)
