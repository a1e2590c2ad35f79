"""Peaks and dips (`stat: max`/`min`), shared by the extreme and level kinds and by
`conditions.py`: which are read away from restarts, where their incident part begins, and
whether an instance has readings left to decide one."""

from __future__ import annotations

import numpy as np

from infersight.diagnose.context import Context
from infersight.diagnose.kb import Condition


def reads_extreme(c: Condition) -> bool:
    """A peak or a dip that must have happened (peak up/above, dip down/below): such readings
    skip the samples just after a restart. "The peak stayed below" needs every sample."""
    return (c.stat, c.state) in (("max", "up"), ("max", "above"), ("min", "down"), ("min", "below"))


def extreme_split(ctx: Context, c: Condition, since: float | None = None) -> int:
    """Where a peak or dip condition's incident part begins: a level (above/below) since the
    onset (or `since`), a peak against the earlier peak `Context.peak_split` ahead of it."""
    return ctx.split(since) if c.state in ("above", "below") else ctx.peak_split()


def settled_data(ctx: Context, c: Condition, inst: str) -> bool:
    """Whether a peak or dip condition has readings left on both sides of the onset once the
    samples after restarts are set aside (else it is undecidable there, not false)."""
    if c.stat == "median" or not reads_extreme(c):
        return True
    if ctx.row(c.signal, inst) is None:
        return False
    k = extreme_split(ctx, c)
    high_before, _, high_since, _ = ctx.extremes(c.signal, inst, k, settled=True)
    tail_ok = not np.isnan(high_since)
    return tail_ok and (c.state in ("above", "below") or not np.isnan(high_before))
