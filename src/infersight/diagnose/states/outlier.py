"""`outlier`: away from its peers (detection's fleet outliers), `direction` up/down or the
signal's bad way, of the size the condition asks; dated when it got that far."""

from __future__ import annotations

from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import from_anomaly
from infersight.diagnose.kb import Condition
from infersight.diagnose.states.direction import direction_ok, wanted_direction
from infersight.diagnose.states.reading import NOT_HELD, Reading
from infersight.diagnose.states.sizing import dated, factor_ok

#: the states this kind reads: `registry.py` finds the module by them
STATES = ("outlier",)
#: the options a condition of this kind takes (see `kb.Condition`)
ACCEPTS = frozenset({"together", "direction", "factor"})
#: where docs/rules.md lists it among the condition kinds
ORDER = 50


def doc(cfg: DiagnoseConfig) -> str:
    """Its entry in docs/rules.md's list of condition kinds."""
    return "`outlier` — away from same-role peers"


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    want = wanted_direction(ctx, c)
    for a in ctx.anomalies(c.signal, inst, "fleet_outlier"):
        if not direction_ok(a, want) or not factor_ok(a, c, want, a.observed):
            continue
        return dated(ctx, c, a, want, from_anomaly(a, ctx, True), in_incident=False)
    return NOT_HELD
