"""`normal`: present and not anomalous (no deviation, no fleet outlier). Where it does not
hold, the reading carries the anomaly that says so, as evidence against."""

from __future__ import annotations

from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import from_anomaly, from_normal
from infersight.diagnose.kb import Condition
from infersight.diagnose.states.reading import Reading

#: the states this kind reads: `registry.py` finds the module by them
STATES = ("normal",)
#: the options a condition of this kind takes (see `kb.Condition`): none
ACCEPTS: frozenset[str] = frozenset()
#: where docs/rules.md lists it among the condition kinds
ORDER = 30


def doc(cfg: DiagnoseConfig) -> str:
    """Its entry in docs/rules.md's list of condition kinds."""
    return "`normal` — present and not anomalous"


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    sig = c.signal
    off = [a for a in ctx.anomalies(sig, inst) if a.kind in ("deviation", "fleet_outlier")]
    if off:
        return Reading(False, from_anomaly(off[0], ctx, True), off[0].onset, off[0].score)
    if not shown:
        return Reading(True)
    pre, post, _ = ctx.before_after(sig, inst)
    return Reading(True, from_normal(ctx, sig, inst, pre, post))
