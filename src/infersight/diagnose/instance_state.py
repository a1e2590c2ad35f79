"""One condition on one instance: whether it holds there, with its evidence, its onset and
a score. `conditions.py` reads it across the candidates and the groups."""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from infersight.detect import Anomaly
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import clock, from_anomaly, from_level, from_normal
from infersight.diagnose.kb import Condition
from infersight.diagnose.result import Evidence
from infersight.diagnose.row_states import (
    capacity_state,
    extreme,
    first_crossing,
    outage,
    outpaces,
    reads_extreme,
    shift,
)

#: `event` counts what happened from this long before the incident's onset
EVENT_LEAD_S = 1800.0
#: a deviation back under a condition's size this long has ended (see `_episode_start`)
EPISODE_GAP_S = 900.0


def wanted_direction(ctx: Context, c: Condition) -> str:
    """The way a condition's change goes: its state's (up, trend_down, fell, …), an outlier's
    `direction`, else the signal's bad way."""
    if c.state == "outlier":
        bad = ctx.bad(c.signal)
        return c.direction or (bad if bad in ("up", "down") else "up")
    return "down" if c.state in ("down", "trend_down", "fell", "below") else "up"


def direction_ok(a: Anomaly, want: str) -> bool:
    return a.direction == want


#: an excursion is sized on the incident's readings only with at least this many of them
INCIDENT_MIN_READINGS = 3


def incident_size(ctx: Context, a: Anomaly) -> float | None:
    """A deviation's median while the incident lasts, from the incident's onset to the end of
    the excursion, where that began more than PEAK_LEAD_S before the onset (a cause's first
    readings lead the users' symptom by a few; a precursor hours earlier, such as a tail
    flapping across a histogram bucket bound on the morning ramp, dilutes the excursion's own
    median: a pass 1.4× slower since 08:50 and 6× slower since 11:06 is 6× slower in this
    incident). None where the excursion began later or has fewer than INCIDENT_MIN_READINGS
    readings since. The baseline stays detection's, the band's centre over the whole
    excursion: on a seasonal signal, the earlier hours' level."""
    row = ctx.row(a.signal, a.instance)
    if row is None or a.onset >= ctx.frame.start + ctx.frame.step * ctx.peak_split():
        return None
    k1 = ctx.frame.index_of(a.end) + 1 if a.end is not None else row.size
    seg = row[ctx.split() : k1]
    seg = seg[~np.isnan(seg)]
    return float(np.median(seg)) if seg.size >= INCIDENT_MIN_READINGS else None


def _factor_ok(a: Anomaly, c: Condition, want: str, observed: float | None) -> bool:
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


def _grown_by(ctx: Context, c: Condition, a: Anomaly, want: str, in_incident: bool) -> float:
    """When a deviation first reached the size a condition asks (`factor`, `delta`) against its
    baseline: a request rate creeping over the band on the morning ramp that a surge at 10:54
    tripled is "up 1.5×" since 10:54, not since it crept out at 08:53. `in_incident`: only the
    readings since the onset reach that size (`incident_size`), so it is looked for from
    PEAK_LEAD_S before the onset on (a cause's first readings precede the users' symptom): a
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
    A size left for EPISODE_GAP_S or more and reached again is a new episode: a traffic bump
    served at 11:10 and gone by 11:25 does not date the surge of 11:40 that the users felt.
    Episodes that ended EPISODE_GAP_S before the onset are passed over; when every one did,
    the first is kept."""
    gap = EPISODE_GAP_S / ctx.frame.step
    starts = np.r_[0, np.flatnonzero(np.diff(below) >= gap) + 1]
    ends = np.r_[starts[1:] - 1, hit.size - 1]
    live = np.flatnonzero(hit[ends] >= ctx.frame.index_of(ctx.onset) - k0 - gap)
    return int(hit[starts[live[0]]] if live.size else hit[0])


#: `normal` reports the first few instances it holds on, not all of a large fleet
NORMAL_SHOWN = 3


def state_on(
    ctx: Context, c: Condition, inst: str, shown: bool = True, since: float | None = None
) -> tuple[bool, Evidence | None, float | None, float]:
    """(holds, evidence, onset, score) of one condition on one instance; `shown` False: a
    `normal` that holds needs no evidence (it will not be reported); `since`: a median level
    or shift read since then (`when: during`), not since the incident's onset."""
    sig = c.signal
    if c.state in ("over_capacity", "within_capacity"):
        return capacity_state(ctx, c, inst)
    if c.state == "outage":
        return outage(ctx, c, inst)
    if c.state in ("rose", "fell"):
        return shift(ctx, c, inst, since)
    if c.state == "outpaces":
        return outpaces(ctx, c, inst)
    if c.stat != "median" and c.state in ("up", "down"):
        return extreme(ctx, c, inst)
    if c.state in ("up", "down", "trend_up", "trend_down", "outlier"):
        kind = {"up": "deviation", "down": "deviation", "outlier": "fleet_outlier"}.get(
            c.state, "trend"
        )
        want = wanted_direction(ctx, c)
        for a in ctx.anomalies(sig, inst, kind):
            if not direction_ok(a, want):
                continue
            # the size asked, over the whole excursion or while the incident lasts
            whole = _factor_ok(a, c, want, a.observed)
            felt = None if whole or kind != "deviation" else incident_size(ctx, a)
            if not whole and not _factor_ok(a, c, want, felt):
                continue
            ev = from_anomaly(a, ctx, True, felt)
            if a.kind == "trend":  # a slope has no onset
                return True, ev, None, a.score
            # a deviation of a given size began when it got that big
            onset = _grown_by(ctx, c, a, want, in_incident=felt is not None)
            if onset != a.onset:
                size = f"{c.factor:g}×" if c.factor is not None else f"{c.delta:g} off"
                text = f"{ev.statement}; {size} its baseline or more since {clock(onset)}"
                ev = dataclasses.replace(ev, statement=text, onset=onset)
            return True, ev, onset, a.score
        return False, None, None, 0.0
    if c.state == "absent":
        gone = ctx.absent(sig, inst)
        if gone is not None:
            return True, from_anomaly(gone, ctx, True), gone.onset, gone.score
        return False, None, None, 0.0
    if c.state == "normal":
        off = [a for a in ctx.anomalies(sig, inst) if a.kind in ("deviation", "fleet_outlier")]
        if off:
            return False, from_anomaly(off[0], ctx, True), off[0].onset, off[0].score
        if not shown:
            return True, None, None, 0.0
        pre, post, _ = ctx.before_after(sig, inst)
        return True, from_normal(ctx, sig, inst, pre, post), None, 0.0
    pre, post, tail = ctx.before_after(sig, inst, since)
    if tail is None or post is None:
        return False, None, None, 0.0
    level = c.level if c.level is not None else 0.0
    if c.state == "event":
        row = ctx.row(sig, inst)
        assert row is not None
        # a cause begins before the users notice: events from EVENT_LEAD_S before the onset
        # count as the incident's, and "before" is what came earlier than that
        k = ctx.split_ahead(EVENT_LEAD_S)
        high_before, _, high_since, _ = ctx.extremes(sig, inst, k, settled=False)
        before = -np.inf if np.isnan(high_before) else high_before
        if not high_since > max(level, before):  # nothing since rose past both (or no data)
            return False, None, None, 0.0
        tail = row[k:]
        hit = np.flatnonzero((tail > level) & (tail > before))
        if hit.size == 0:
            return False, None, None, 0.0
        onset = ctx.frame.start + ctx.frame.step * (k + int(hit[0]))
        peak = float(np.nanmax(tail))
        ev = from_level(ctx, sig, inst, "event", pre, peak, level, onset)
        return True, ev, onset, 10.0
    if c.stat != "median":
        _, _, high, low = ctx.extremes(sig, inst, ctx.split(since), reads_extreme(c))
        if np.isnan(high):
            return False, None, None, 0.0
        post = high if c.stat == "max" else low
    holds = post > level if c.state == "above" else post < level
    if not holds:
        return False, None, None, 0.0
    if since is not None:  # a level dates no change of its own: the incident's onset, as below
        ev = from_level(ctx, sig, inst, c.state, pre, post, level, ctx.onset, since)
        return True, ev, ctx.onset, 5.0
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
    return True, from_level(ctx, sig, inst, c.state, pre, post, level, onset), onset, 5.0
