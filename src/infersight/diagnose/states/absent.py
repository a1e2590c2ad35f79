"""`absent`: the series stopped or the target is down (detection's absence findings)."""

from __future__ import annotations

from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import from_anomaly
from infersight.diagnose.kb import Condition
from infersight.diagnose.states.reading import NOT_HELD, Reading

#: the states this kind reads: `registry.py` finds the module by them
STATES = ("absent",)
#: the options a condition of this kind takes (see `kb.Condition`)
ACCEPTS = frozenset({"together"})
#: where docs/rules.md lists it among the condition kinds
ORDER = 60


def doc(cfg: DiagnoseConfig) -> str:
    """Its entry in docs/rules.md's list of condition kinds."""
    return "`absent` — target down or series stopped"


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    gone = ctx.absent(c.signal, inst)
    if gone is None:
        return NOT_HELD
    return Reading(True, from_anomaly(gone, ctx, True), gone.onset, gone.score)
