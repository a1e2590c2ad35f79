"""`outage` (on `infra.target_up`): the longest run of `up` 0 that ended (the target came
back) since the split (or `event_lead_s` before it), at least `level` seconds: a restart that
took that long to serve again (a model loading from remote storage). A target that stays down
is `absent`."""

from __future__ import annotations

import numpy as np

from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import clock
from infersight.diagnose.kb import UP_SIGNAL, Condition
from infersight.diagnose.result import Evidence
from infersight.diagnose.states.reading import NOT_HELD, Reading
from infersight.units import format_duration

#: the states this kind reads: `registry.py` finds the module by them
STATES = ("outage",)
#: the options a condition of this kind takes (see `kb.Condition`)
ACCEPTS = frozenset({"level", "together"})
#: where docs/rules.md lists it among the condition kinds
ORDER = 90


def doc(cfg: DiagnoseConfig) -> str:
    """Its entry in docs/rules.md's list of condition kinds."""
    return (
        "`outage` — a target down at least the level in seconds that came back (a restart "
        "slow to serve)"
    )


def check(c: Condition) -> str | None:
    """How long down, read on the target's `up`."""
    if c.level is None:
        return "state 'outage' needs a level (seconds down)"
    if c.signal != UP_SIGNAL:
        return f"state 'outage' reads {UP_SIGNAL}, not {c.signal!r}"
    return None


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    row = ctx.row(c.signal, inst)
    if row is None:
        return NOT_HELD
    step, k = ctx.frame.step, ctx.split()
    down = np.concatenate(([False], row < 0.5, [False]))  # NaN (no sample) is not "down"
    edges = np.flatnonzero(np.diff(down.astype(np.int8)))
    starts, ends = edges[0::2], edges[1::2]  # ends: the first sample up again
    # a cause begins before the users notice: a target back just before the onset (its
    # replica then took the work queued for it) counts, as `event` counts from that far back
    lead = max(0, k - int(ctx.config.event_lead_s // step))
    back = (ends < row.size) & (ends >= lead) & (row[np.minimum(ends, row.size - 1)] >= 0.5)
    if not np.any(back):
        return NOT_HELD
    longest = int(np.argmax(np.where(back, ends - starts, -1)))
    seconds = float(ends[longest] - starts[longest]) * step
    if seconds < float(c.level or 0.0):
        return NOT_HELD
    onset = ctx.frame.start + step * float(starts[longest])
    ev = Evidence(
        signal=c.signal,
        instance=inst,
        kind="event",
        supports=True,
        statement=(
            f"{inst} was down (up = 0) for {format_duration(seconds)} from {clock(onset)} and "
            f"came back: at least {format_duration(float(c.level or 0.0))} to serve again"
        ),
        window_start=onset,
        window_end=onset + seconds,
        baseline=float(c.level or 0.0),
        observed=seconds,
        unit="s",
        onset=onset,
    )
    # an outage exactly `level` long scores as a level held; a longer one in proportion
    cfg = ctx.config
    size = cfg.level_score * seconds / max(float(c.level or 1.0), 1.0)
    return Reading(True, ev, onset, min(cfg.state_score_cap, size))
