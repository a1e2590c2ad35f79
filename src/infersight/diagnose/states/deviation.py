"""`up` / `down`: a deviation from the baseline (detection's), of the size the condition asks
over its whole excursion or, where that began well before the incident, over the incident's
readings; dated when it got that big. With `stat: max`/`min`, the extreme kind reads it.
Detection flags a signal only its bad way: a change the other way (a pool's busy share that
fell) is read as a shift of the median (`rose`/`fell`) by the condition's factor."""

from __future__ import annotations

from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import from_anomaly
from infersight.diagnose.kb import Condition
from infersight.diagnose.states import extreme, shift
from infersight.diagnose.states.direction import direction_ok, wanted_direction
from infersight.diagnose.states.reading import NOT_HELD, Reading
from infersight.diagnose.states.sizing import dated, factor_ok, incident_size

#: the states this kind reads: `registry.py` finds the module by them
STATES = ("up", "down")
#: the options a condition of this kind takes (see `kb.Condition`)
ACCEPTS = frozenset({"together", "stat", "delta", "factor"})
#: where docs/rules.md lists it among the condition kinds
ORDER = 10


def doc(cfg: DiagnoseConfig) -> str:
    """Its entry in docs/rules.md's list of condition kinds."""
    return (
        "`up`/`down` — deviation from baseline (factor: the ratio to the baseline of the "
        "excursion's median, or of its median since the incident began where it began more "
        f"than {cfg.peak_lead_s / 60:g} min before it: a precursor on the morning ramp does not "
        "dilute the size the users felt; with a factor or a delta, dated by its first reading "
        "that far from the baseline, of the episode still under way at the onset: one back "
        f"under that size {cfg.episode_gap_s / 60:g} min or more before it has ended; a size "
        f"only the incident's readings reach is looked for from {cfg.peak_lead_s / 60:g} min "
        "before the onset on; the way detection does not flag a signal, its good way, is read "
        "as a shift of the median by the factor)"
    )


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
