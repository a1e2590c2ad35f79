"""`trend_up` / `trend_down`: a sustained slope (detection's), within the window or across
the baselines; with `level`, one that runs out (full, or empty) within `level` seconds at its
pace. A slope dates nothing: the reading has no onset.

A climb inside the window is the daily shape unless it holds against the same hours
yesterday: today's level must stand above yesterday's at the same clock time by half the
window's climb at least (a morning ramp repeats, and the step when a lost replica's traffic
moved onto the rest is read by the request-path walk as the load it is). Forecasts ("runs out
within a day", with `level`) need that history: without yesterday's window there is none. A
climb read across the baselines (`detect/slow_climb.py`) already was."""

from __future__ import annotations

import numpy as np

from infersight.detect import Anomaly
from infersight.detect.trend import Trend
from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import from_anomaly
from infersight.diagnose.kb import Condition
from infersight.diagnose.states.direction import direction_ok, wanted_direction
from infersight.diagnose.states.reading import NOT_HELD, Reading
from infersight.diagnose.states.sizing import factor_ok

#: the states this kind reads: `registry.py` finds the module by them
STATES = ("trend_up", "trend_down")
#: the options a condition of this kind takes (see `kb.Condition`)
ACCEPTS = frozenset({"level"})
#: where docs/rules.md lists it among the condition kinds
ORDER = 40


def doc(cfg: DiagnoseConfig) -> str:
    """Its entry in docs/rules.md's list of condition kinds."""
    return (
        "`trend up`/`trend down` — sustained slope, within the window or across the hour and "
        "the day before, with a level: running out within that many seconds at its pace"
    )


def exhausts(ctx: Context, a: Anomaly, within_s: float) -> bool:
    """The trend behind `a` runs out (full, or empty) within `within_s` of the window's end."""
    for tr in ctx.det.trends:
        if (tr.signal, tr.instance) == (a.signal, a.instance):
            tte = tr.time_to_exhaustion_s
            return tte is not None and tte <= within_s
    return False


def _trend(ctx: Context, a: Anomaly) -> Trend | None:
    return next(
        (t for t in ctx.det.trends if (t.signal, t.instance) == (a.signal, a.instance)), None
    )


def above_yesterday(ctx: Context, tr: Trend) -> bool | None:
    """Whether a climb inside the window holds against the same hours yesterday (see the
    module doc); None without yesterday's readings of that series."""
    if tr.span_s >= ctx.config.across_days_s:
        return True  # read across the hour and the day before already
    day = ctx.baselines.get("baseline-1d")
    s = day.get(tr.signal) if day is not None else None
    then = s.row(tr.instance) if s is not None else None
    now = ctx.row(tr.signal, tr.instance)
    if then is None or now is None or then.size != now.size:
        return None
    k = max(3, now.size // 10)
    with np.errstate(all="ignore"):
        a, b = np.nanmedian(now[-k:]), np.nanmedian(then[-k:])
    if not (np.isfinite(a) and np.isfinite(b)):
        return None
    sign = 1.0 if tr.change >= 0 else -1.0
    return bool(sign * (a - b) >= 0.5 * abs(tr.change))


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    want = wanted_direction(ctx, c)
    for a in ctx.anomalies(c.signal, inst, "trend"):
        if not direction_ok(a, want) or not factor_ok(a, c, want, a.observed):
            continue
        if c.level is not None and not exhausts(ctx, a, c.level):
            continue
        tr = _trend(ctx, a)
        held = above_yesterday(ctx, tr) if tr is not None else None
        if held is False or (held is None and c.level is not None):
            continue  # the daily shape, or a forecast without the history to make one
        return Reading(True, from_anomaly(a, ctx, True), None, a.score)
    return NOT_HELD
