"""Which way a condition's change goes, shared by the kinds read from anomalies and by
`when: together` (the first sign of a change the same way)."""

from __future__ import annotations

from infersight.detect import Anomaly
from infersight.diagnose.context import Context
from infersight.diagnose.kb import Condition


def wanted_direction(ctx: Context, c: Condition) -> str:
    """The way a condition's change goes: its state's (up, trend_down, fell, …), an outlier's
    `direction`, else the signal's bad way."""
    if c.state == "outlier":
        bad = ctx.bad(c.signal)
        return c.direction or (bad if bad in ("up", "down") else "up")
    return "down" if c.state in ("down", "trend_down", "fell", "below") else "up"


def direction_ok(a: Anomaly, want: str) -> bool:
    return a.direction == want
