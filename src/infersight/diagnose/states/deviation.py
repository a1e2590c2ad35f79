"""`up` / `down`: a deviation from the baseline (detection's), of the size the condition asks
over its whole excursion or, where that began well before the incident, over the incident's
readings; dated when it got that big. With `stat: max`/`min`, the extreme kind reads it.
Detection flags a signal only its bad way: a change the other way (a pool's busy share that
fell) is read as a shift of the median (`rose`/`fell`) by the condition's factor."""

from __future__ import annotations

from infersight.diagnose.context import Context
from infersight.diagnose.evidence import from_anomaly
from infersight.diagnose.kb import Condition
from infersight.diagnose.states import extreme, shift
from infersight.diagnose.states.direction import direction_ok, wanted_direction
from infersight.diagnose.states.reading import NOT_HELD, Reading
from infersight.diagnose.states.sizing import dated, factor_ok, incident_size


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    if c.stat != "median":
        return extreme.read(ctx, c, inst, shown, since)
    want = wanted_direction(ctx, c)
    if ctx.bad(c.signal) not in (want, "both"):
        moved = c.model_copy(update={"state": "fell" if want == "down" else "rose"})
        return shift.read(ctx, moved, inst, shown, since)
    for a in ctx.anomalies(c.signal, inst, "deviation"):
        if not direction_ok(a, want):
            continue
        # the size asked, over the whole excursion or while the incident lasts
        whole = factor_ok(a, c, want, a.observed)
        felt = None if whole else incident_size(ctx, a)
        if not whole and not factor_ok(a, c, want, felt):
            continue
        ev = from_anomaly(a, ctx, True, felt)
        return dated(ctx, c, a, want, ev, in_incident=felt is not None)
    return NOT_HELD
