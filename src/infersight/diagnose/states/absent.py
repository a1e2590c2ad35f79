"""`absent`: the series stopped or the target is down (detection's absence findings)."""

from __future__ import annotations

from infersight.diagnose.context import Context
from infersight.diagnose.evidence import from_anomaly
from infersight.diagnose.kb import Condition
from infersight.diagnose.states.reading import NOT_HELD, Reading


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    gone = ctx.absent(c.signal, inst)
    if gone is None:
        return NOT_HELD
    return Reading(True, from_anomaly(gone, ctx, True), gone.onset, gone.score)
