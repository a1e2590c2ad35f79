"""Every `kb.State` and the module that reads it: `state_on` is a lookup here."""

from __future__ import annotations

from infersight.diagnose.context import Context
from infersight.diagnose.kb import Condition, State
from infersight.diagnose.states import (
    absent,
    adds,
    capacity,
    deviation,
    event,
    level,
    normal,
    outage,
    outlier,
    outpaces,
    shift,
    trend,
)
from infersight.diagnose.states.reading import Reader, Reading

READERS: dict[State, Reader] = {
    "up": deviation.read,  # with stat max/min: extreme.read
    "down": deviation.read,
    "above": level.read,
    "below": level.read,
    "normal": normal.read,
    "trend_up": trend.read,
    "trend_down": trend.read,
    "outlier": outlier.read,
    "absent": absent.read,
    "event": event.read,
    "over_capacity": capacity.read,
    "within_capacity": capacity.read,
    "outage": outage.read,
    "rose": shift.read,
    "fell": shift.read,
    "outpaces": outpaces.read,
    "adds": adds.read,
}


def state_on(
    ctx: Context, c: Condition, inst: str, shown: bool = True, since: float | None = None
) -> Reading:
    """One condition on one instance (see `Reader`)."""
    return READERS[c.state](ctx, c, inst, shown, since)
