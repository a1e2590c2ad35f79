"""`rose` / `fell`: the median since the onset (or since `when: during`'s anchor) against the
median before, by `factor`, and beyond the noise before (`shift_z` robust σ of single
samples: conservative, a noisy signal needs more than `factor`). On instances another condition
pinned, a shift part of the way (`partial_shift`) is weak support in a confirm. Fewer than
`shift_min_before` samples before tell nothing of its noise: the shift is not read. Like a
level, a shift dates no change of its own: the incident's onset."""

from __future__ import annotations

import dataclasses

import numpy as np

from infersight.diagnose.config import MAD_TO_SIGMA, DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import from_level
from infersight.diagnose.kb import Condition
from infersight.diagnose.states.reading import NOT_HELD, Reading

#: the states this kind reads: `registry.py` finds the module by them
STATES = ("rose", "fell")
#: the options a condition of this kind takes (see `kb.Condition`)
ACCEPTS = frozenset({"during", "factor"})
#: where docs/rules.md lists it among the condition kinds
ORDER = 100


def doc(cfg: DiagnoseConfig) -> str:
    """Its entry in docs/rules.md's list of condition kinds."""
    return (
        "`rose`/`fell` — on instances another condition pinned, the median since the onset "
        f"against the median before by the factor and beyond {cfg.shift_z:g} robust σ of the "
        "noise before (a change under detection's floors: did the users feel a cause already "
        f"seen); with where: same, a shift {cfg.partial_shift:g} of the factor's way (in ratio "
        "terms) is weak support in a confirm and nothing in a refute"
    )


def check(c: Condition) -> str | None:
    """A size, and instances pinned by another condition or half the fleet (a step on half the
    fleet stands on its own)."""
    if c.factor is None or (c.where != "same" and c.min_share < 0.5):
        return (
            f"state {c.state!r} needs a factor, and where: same or a min_share of at least 0.5 "
            "(a step on half the fleet stands on its own)"
        )
    return None


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
    if moved <= cfg.shift_z * sigma:
        return NOT_HELD
    ratio = post / pre if c.state == "rose" else (pre / post if post > 0 else np.inf)
    if ratio >= factor:
        ev = from_level(ctx, c.signal, inst, c.state, pre, post, factor * pre, ctx.onset, since)
        cap = cfg.state_score_cap
        return Reading(True, ev, ctx.onset, min(cap, float(ratio)))
    if c.where != "same" or ratio < factor**cfg.partial_shift:
        return NOT_HELD
    ev = from_level(ctx, c.signal, inst, c.state, pre, post, factor * pre, ctx.onset, since)
    weak = f"{ev.statement}; part of the {factor:g}× looked for: weak support"
    ev = dataclasses.replace(ev, statement=weak)
    return Reading(True, ev, ctx.onset, cfg.partial_score, partial=True)
