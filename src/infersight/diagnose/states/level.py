"""`above` / `below`: the level since the incident's onset (or since `when: during`'s anchor)
passes `level`: the median, or with `stat: max`/`min` the peak or dip, dated by its first
sample past the level (or its first crossing, where it had been crossed before the onset
too). A median level dates no change of its own: the incident's onset."""

from __future__ import annotations

import numpy as np

from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import from_level
from infersight.diagnose.kb import Condition
from infersight.diagnose.states.peaks import reads_extreme
from infersight.diagnose.states.reading import NOT_HELD, Reading

#: the states this kind reads: `registry.py` finds the module by them
STATES = ("above", "below")
#: the options a condition of this kind takes (see `kb.Condition`)
ACCEPTS = frozenset({"level", "stat", "together", "during"})
#: where docs/rules.md lists it among the condition kinds
ORDER = 20


def doc(cfg: DiagnoseConfig) -> str:
    """Its entry in docs/rules.md's list of condition kinds."""
    return (
        "`above`/`below` — level since the incident began (a bad level already passed "
        "before the incident rules no cause out)"
    )


def check(c: Condition) -> str | None:
    """A level to pass; `together` only on a peak or dip (a median level dates nothing of its
    own), `during` only on a median."""
    if c.level is None:
        return f"state {c.state!r} needs a level"
    if c.when in ("together", "after") and c.stat == "median":
        return (
            "when: together needs where: same and a state that dates its change (above/below "
            "only with stat: max/min)"
        )
    if c.when == "during" and c.stat != "median":
        return "when: during applies to a median level (above/below without stat, rose/fell)"
    return None


def first_crossing(ctx: Context, c: Condition, inst: str, level: float, since: float) -> float:
    """A peak or dip past the level that also happened before the onset, after a time on the
    normal side, is dated by its first crossing: a level crossed again and again since before
    the users noticed (a chronic stampede) began then, and a cause is not dated after the
    effects it explains. A row past the level from its first sample on keeps `since`: nothing
    in the window dates it."""
    row = ctx.settled_row(c.signal, inst)
    assert row is not None
    k = ctx.split()
    with np.errstate(invalid="ignore"):
        past = row[:k] > level if c.state == "above" else row[:k] < level
        normal = row[:k] <= level if c.state == "above" else row[:k] >= level
    if not np.any(past) or not np.any(normal):
        return since
    first_normal = int(np.argmax(normal))
    later = np.flatnonzero(past[first_normal:])
    if later.size == 0:
        return since
    return ctx.frame.start + ctx.frame.step * (first_normal + int(later[0]))


def bad_before(ctx: Context, c: Condition, inst: str, since: float | None) -> bool:
    """Whether a level on the signal's bad side (above on a signal bad up) was already passed
    before the incident: by the median before, or with `stat: max`/`min` by the peak or dip
    before. Then it marks no change of the incident's and rules nothing out: a card vLLM fills
    to 90% by design is as full before as during. A level on the good side (no OOM at all,
    before or since) checks that something stayed put: never this."""
    bad = ctx.bad(c.signal)
    if bad not in ("both", "up" if c.state == "above" else "down"):
        return False
    if c.stat == "median":
        pre, _, _ = ctx.before_after(c.signal, inst, since)
    else:
        high, low, _, _ = ctx.extremes(c.signal, inst, ctx.split(since), reads_extreme(c))
        pre = None if np.isnan(high) else float(high if c.stat == "max" else low)
    if pre is None:
        return False
    level = c.level if c.level is not None else 0.0
    return pre > level if c.state == "above" else pre < level


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    sig, score = c.signal, ctx.config.level_score
    pre, post, tail = ctx.before_after(sig, inst, since)
    if tail is None or post is None:
        return NOT_HELD
    level = c.level if c.level is not None else 0.0
    if c.stat != "median":
        _, _, high, low = ctx.extremes(sig, inst, ctx.split(since), reads_extreme(c))
        if np.isnan(high):
            return NOT_HELD
        post = high if c.stat == "max" else low
    holds = post > level if c.state == "above" else post < level
    if not holds:
        return NOT_HELD
    if since is not None:  # a level dates no change of its own: the incident's onset, as below
        ev = from_level(ctx, sig, inst, c.state, pre, post, level, ctx.onset, since)
        return Reading(True, ev, ctx.onset, score)
    onset = ctx.onset
    if c.stat != "median":  # a peak or a dip is dated by its first sample past the level
        if reads_extreme(c):
            settled = ctx.settled_row(sig, inst)
            assert settled is not None
            tail = settled[ctx.split() :]
        past = tail > level if c.state == "above" else tail < level
        onset = ctx.frame.start + ctx.frame.step * (ctx.split() + int(np.argmax(past)))
        if reads_extreme(c):
            onset = first_crossing(ctx, c, inst, level, onset)
    return Reading(True, from_level(ctx, sig, inst, c.state, pre, post, level, onset), onset, score)
