"""The size a condition asks of a detected change (`factor`, `delta`) and when it got that big:
shared by the deviation and outlier kinds."""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from infersight.detect import Anomaly
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import clock
from infersight.diagnose.kb import Condition
from infersight.diagnose.result import Evidence
from infersight.diagnose.states.reading import Reading


def incident_size(ctx: Context, a: Anomaly) -> float | None:
    """A deviation's median while the incident lasts, from the incident's onset to the end of
    the excursion, where that began more than `peak_lead_s` before the onset (a cause's first
    readings lead the users' symptom by a few; a precursor hours earlier, such as a tail
    flapping across a histogram bucket bound on the morning ramp, dilutes the excursion's own
    median: a pass 1.4× slower since 08:50 and 6× slower since 11:06 is 6× slower in this
    incident). None where the excursion began later or has fewer than
    `incident_min_readings` readings since. The baseline stays detection's, the band's centre
    over the whole excursion: on a seasonal signal, the earlier hours' level."""
    row = ctx.row(a.signal, a.instance)
    if row is None or a.onset >= ctx.frame.start + ctx.frame.step * ctx.peak_split():
        return None
    k1 = ctx.frame.index_of(a.end) + 1 if a.end is not None else row.size
    seg = row[ctx.split() : k1]
    seg = seg[~np.isnan(seg)]
    return float(np.median(seg)) if seg.size >= ctx.config.incident_min_readings else None


def factor_ok(a: Anomaly, c: Condition, want: str, observed: float | None) -> bool:
    """Whether a deviation's median `observed` is the size the condition asks, its way."""
    if a.baseline is None or observed is None:
        return c.factor is None and c.delta is None
    moved = observed - a.baseline if want == "up" else a.baseline - observed
    if c.delta is not None and moved < c.delta:
        return False
    if c.factor is None:
        return True
    base, obs = abs(a.baseline), abs(observed)
    if want == "up":
        return obs >= c.factor * base if base > 0 else obs > 0
    return obs * c.factor <= base


def grown_by(ctx: Context, c: Condition, a: Anomaly, want: str, in_incident: bool) -> float:
    """When a deviation first reached the size a condition asks (`factor`, `delta`) against its
    baseline: a request rate creeping over the band on the morning ramp that a surge at 10:54
    tripled is "up 1.5×" since 10:54, not since it crept out at 08:53. `in_incident`: only the
    readings since the onset reach that size (`incident_size`), so it is looked for from
    `peak_lead_s` before the onset on (a cause's first readings precede the users' symptom): a
    ramp's odd reading past 1.5× does not date a surge that quadrupled the rate an hour later.
    Without a size, or without a sample that far (the medians passed, no single reading did),
    its onset."""
    row = ctx.row(c.signal, a.instance)
    if row is None or a.baseline is None or (c.factor is None and c.delta is None):
        return a.onset
    k0 = ctx.frame.index_of(a.onset)
    if in_incident:
        k0 = max(k0, ctx.peak_split())
    k1 = ctx.frame.index_of(a.end) + 1 if a.end is not None else row.size
    seg, base = row[k0:k1], a.baseline
    far = ~np.isnan(seg)
    if c.factor is not None:
        if want == "up":
            far &= seg >= c.factor * base if base > 0 else seg > 0
        else:
            far &= seg * c.factor <= base
    if c.delta is not None:
        far &= (seg - base if want == "up" else base - seg) >= c.delta
    hit = np.flatnonzero(far)
    if hit.size == 0:
        return a.onset
    below = np.cumsum(~np.isnan(seg) & ~far, dtype=np.intp)  # readings under the size so far
    return ctx.frame.start + ctx.frame.step * (k0 + _episode_start(ctx, hit, below[hit], k0))


def _episode_start(
    ctx: Context, hit: npt.NDArray[np.intp], below: npt.NDArray[np.intp], k0: int
) -> int:
    """The first reading of the episode still under way at the incident's onset (`hit`: the
    readings at the size, from `k0`; `below`: how many readings under it came before each).
    A size left for `episode_gap_s` or more and reached again is a new episode: a traffic bump
    served at 11:10 and gone by 11:25 does not date the surge of 11:40 that the users felt.
    Episodes that ended `episode_gap_s` before the onset are passed over; when every one did,
    the first is kept."""
    gap = ctx.config.episode_gap_s / ctx.frame.step
    starts = np.r_[0, np.flatnonzero(np.diff(below) >= gap) + 1]
    ends = np.r_[starts[1:] - 1, hit.size - 1]
    live = np.flatnonzero(hit[ends] >= ctx.frame.index_of(ctx.onset) - k0 - gap)
    return int(hit[starts[live[0]]] if live.size else hit[0])


def dated(
    ctx: Context, c: Condition, a: Anomaly, want: str, ev: Evidence, in_incident: bool
) -> Reading:
    """A change that holds, dated when it got the size asked (`grown_by`), not when it left
    its band; the evidence then says since when."""
    onset = grown_by(ctx, c, a, want, in_incident)
    if onset != a.onset:
        size = f"{c.factor:g}×" if c.factor is not None else f"{c.delta:g} off"
        text = f"{ev.statement}; {size} its baseline or more since {clock(onset)}"
        ev = dataclasses.replace(ev, statement=text, onset=onset)
    return Reading(True, ev, onset, a.score)
