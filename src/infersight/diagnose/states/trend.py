"""`trend_up` / `trend_down`: a sustained slope (detection's), within the window or across
the baselines; with `level`, one that runs out (full, or empty) within `level` seconds at its
pace. A slope dates nothing: the reading has no onset."""

from __future__ import annotations

from infersight.detect import Anomaly
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


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    want = wanted_direction(ctx, c)
    for a in ctx.anomalies(c.signal, inst, "trend"):
        if not direction_ok(a, want) or not factor_ok(a, c, want, a.observed):
            continue
        if c.level is not None and not exhausts(ctx, a, c.level):
            continue
        return Reading(True, from_anomaly(a, ctx, True), None, a.score)
    return NOT_HELD
