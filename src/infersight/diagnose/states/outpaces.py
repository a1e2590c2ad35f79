"""`outpaces`: the signal is `factor` times further from its same-role peers (its bad way)
than `than` is from theirs: a change its would-be cause is too small to make; with `stat: max`,
its peak grew `factor` times as much as `than`'s did against their peaks before (a pass that
slowed 2.5× while the mean batch grew 1.3×: each item costs more, the batches are past the
knee — below it a larger batch costs less per item). With `per`, the peer form reads the signal
per unit of another first (a pass's time per request in it: a card that fell behind runs larger
batches, which take longer whatever its clock). Does not hold where either signal, `per`, or
(against peers) every peer is missing: it refutes only on data. One peer is enough: the
conditions that pinned the instance already said which of the two moved."""

from __future__ import annotations

import dataclasses

import numpy as np

from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import from_level
from infersight.diagnose.kb import Condition
from infersight.diagnose.states.reading import NOT_HELD, Reading
from infersight.frame import FloatArray
from infersight.units import format_value

#: the states this kind reads: `registry.py` finds the module by them
STATES = ("outpaces",)
#: the options a condition of this kind takes (see `kb.Condition`)
ACCEPTS = frozenset({"than", "stat", "factor", "per"})
#: where docs/rules.md lists it among the condition kinds
ORDER = 110


def doc(cfg: DiagnoseConfig) -> str:
    """Its entry in docs/rules.md's list of condition kinds."""
    return (
        "`outpaces` — on instances another condition pinned, the signal is further from its "
        "same-role peers' (the bad way) than the `than` signal is from theirs, by the factor (a "
        "slowdown larger than its would-be cause can make); `peak outpaces` — the signal's "
        "peak since the onset grew, against its peak before, by the factor more than the "
        "`than` signal's did (a pass slowed far more than its batch grew: past the knee); "
        "with `per`, the peer form reads the signal per unit of that one (a pass's time per "
        "request in its batch)"
    )


def check(c: Condition) -> str | None:
    """A `than` to outpace, by a factor, on pinned instances; its peak form takes stat: max."""
    if c.than is None:
        return "state 'outpaces' needs `than`"
    if c.factor is None or c.where != "same":
        return "state 'outpaces' needs a factor and where: same"
    if c.stat == "min":
        return "state 'outpaces' takes stat: max only (its peak form)"
    if c.per is not None and c.stat == "max":
        return "state 'outpaces' takes `per` in its peer form only (no stat)"
    return None


def _worse_than_peers(ctx: Context, signal: str, inst: str) -> tuple[float, float, float] | None:
    """(how many times worse than its peers, its median, the peers' median) since the onset,
    worse the signal's bad way (a clock lower, a batch time higher); None without peers."""
    since = ctx.split_medians(signal, ctx.split())
    own = since.get(inst, (None, None))[1]
    ordered = _sorted_since(ctx, signal, ctx.role(inst))
    if own is None or ordered.size < 2:  # its peers: every other one of its role with a reading
        return None
    fleet = _median_without(ordered, own)
    if own <= 0 or fleet <= 0:
        return None
    return (fleet / own if ctx.bad(signal) == "down" else own / fleet), own, fleet


def _sorted_since(ctx: Context, signal: str, role: str) -> FloatArray:
    """Every instance's median since the onset, sorted, among the instances of one role (once
    per signal and role: each instance's peers are these less its own, and gathering them per
    instance grows with the fleet's square)."""
    key = ("outpaces_sorted", signal, role)
    if key not in ctx.memo:
        since = ctx.split_medians(signal, ctx.split())
        meds = [m for i, (_, m) in since.items() if m is not None and ctx.role(i) == role]
        ctx.memo[key] = np.sort(np.asarray(meds, dtype=np.float64))
    out = ctx.memo[key]
    assert isinstance(out, np.ndarray)
    return out


def _median_without(ordered: FloatArray, own: float) -> float:
    """The median of `ordered` (sorted, holding `own`) less one reading equal to `own`: the
    middle one or two of what is left, averaged as `np.median` averages them."""
    p = int(np.searchsorted(ordered, own))  # ordered[p] == own: any equal reading will do
    left = ordered.size - 1
    mids = (left // 2,) if left % 2 else (left // 2 - 1, left // 2)
    middle = [ordered[j] if j < p else ordered[j + 1] for j in mids]
    return float(np.median(middle))


def _peak_growth(ctx: Context, signal: str, inst: str) -> tuple[float, float, float] | None:
    """(how many times its peak since the onset exceeds its peak before, the one, the other),
    read away from restarts and split as the extreme kind splits; None where either side has
    no reading or the peak before is not positive."""
    high_before, _, high_since, _ = ctx.extremes(signal, inst, ctx.peak_split(), True)
    if not high_before > 0 or np.isnan(high_since):
        return None
    return high_since / high_before, high_since, high_before


def _per_unit(ctx: Context, signal: str, per: str, inst: str) -> tuple[float, float, float] | None:
    """`_worse_than_peers` of `signal` per unit of `per` (each median divided by the other's
    median on the same side): how much worse each unit of work went, however much work there
    was; None where either has no reading or `per` is not positive."""
    a, b = _worse_than_peers(ctx, signal, inst), _worse_than_peers(ctx, per, inst)
    if a is None or b is None:
        return None
    _, own, fleet = a
    _, own_per, fleet_per = b
    own, fleet = own / own_per, fleet / fleet_per
    return (fleet / own if ctx.bad(signal) == "down" else own / fleet), own, fleet


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    assert c.than is not None and c.factor is not None
    own_past = c.stat == "max"
    measure = _peak_growth if own_past else _worse_than_peers
    mine = measure(ctx, c.signal, inst) if c.per is None else _per_unit(ctx, c.signal, c.per, inst)
    cause = measure(ctx, c.than, inst)
    if mine is None or cause is None or mine[0] < c.factor * max(cause[0], 1.0):
        return NOT_HELD
    u, cu = ctx.unit(c.signal), ctx.unit(c.than)
    mine_at = f"({format_value(mine[1], u)} against {format_value(mine[2], u)})"
    what = c.signal if c.per is None else f"{c.signal} per {c.per}"
    cause_at = f"({format_value(cause[1], cu)} against {format_value(cause[2], cu)})"
    if own_past:
        text = (
            f"{c.signal} on {inst} peaked {mine[0]:.2f}× its highest before the incident "
            f"{mine_at} while {c.than} peaked {cause[0]:.2f}× {cause_at}: it grew more than "
            "that can make it"
        )
    else:
        text = (
            f"{what} on {inst} is {mine[0]:.2f}× worse than its peers' since the incident "
            f"began {mine_at} while {c.than} is {cause[0]:.2f}× worse {cause_at}: more than "
            "that can cause"
        )
    state = "max" if own_past else "above"
    ev = from_level(ctx, c.signal, inst, state, mine[2], mine[1], mine[2], ctx.onset)
    # a comparison over the incident part dates nothing: undated, it does not move the cause's
    # start back to the incident's onset (a card slowed at 11:53 would then "explain" latency
    # that rose elsewhere at 11:04, and a second process that came at 11:52 not explain it)
    score = min(ctx.config.state_score_cap, mine[0] / max(cause[0], 1.0))
    return Reading(True, dataclasses.replace(ev, statement=text, onset=None), None, score)
