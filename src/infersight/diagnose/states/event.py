"""`event`: the signal's highest value from `event_lead_s` before the onset on (a cause begins
before the users notice) exceeds `level` (default 0) and everything earlier: an Xid, an OOM
kill. Dated by its first such reading."""

from __future__ import annotations

import numpy as np

from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import from_level
from infersight.diagnose.kb import Condition
from infersight.diagnose.states.reading import NOT_HELD, Reading

#: the states this kind reads: `registry.py` finds the module by them
STATES = ("event",)
#: the options a condition of this kind takes (see `kb.Condition`)
ACCEPTS = frozenset({"level", "together"})
#: where docs/rules.md lists it among the condition kinds
ORDER = 70


def doc(cfg: DiagnoseConfig) -> str:
    """Its entry in docs/rules.md's list of condition kinds."""
    return (
        f"`event` — highest value from {cfg.event_lead_s / 60:g} min before the onset on "
        "exceeds the level and everything earlier"
    )


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    sig = c.signal
    pre, post, tail = ctx.before_after(sig, inst, since)
    if tail is None or post is None:
        return NOT_HELD
    level = c.level if c.level is not None else 0.0
    row = ctx.row(sig, inst)
    assert row is not None
    # a cause begins before the users notice: events from `event_lead_s` before the onset
    # count as the incident's, and "before" is what came earlier than that
    k = ctx.split_ahead(ctx.config.event_lead_s)
    high_before, _, high_since, _ = ctx.extremes(sig, inst, k, settled=False)
    before = -np.inf if np.isnan(high_before) else high_before
    if not high_since > max(level, before):  # nothing since rose past both (or no data)
        return NOT_HELD
    tail = row[k:]
    hit = np.flatnonzero((tail > level) & (tail > before))
    if hit.size == 0:
        return NOT_HELD
    onset = ctx.frame.start + ctx.frame.step * (k + int(hit[0]))
    peak = float(np.nanmax(tail))
    ev = from_level(ctx, sig, inst, "event", pre, peak, level, onset)
    return Reading(True, ev, onset, ctx.config.event_score)
