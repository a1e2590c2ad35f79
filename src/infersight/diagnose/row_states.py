"""States read from a window's rows rather than from detection's anomalies: peaks and dips
(read away from restarts), small median shifts, gaps to the peers, outages that ended, and
the configured limit against the card's estimated concurrency. Each reader returns (holds,
evidence, onset, score) for one instance; `conditions.eval_condition` combines them."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from infersight.diagnose.capacity import Capacity, estimate
from infersight.diagnose.context import Context
from infersight.diagnose.evidence import clock, from_level
from infersight.diagnose.kb import Condition
from infersight.diagnose.result import Evidence
from infersight.frame import FloatArray
from infersight.units import format_duration, format_value

#: what `over_capacity` / `within_capacity` read besides the configured limit
CAPACITY_INPUTS = ("inference.gpu_mem_used_bytes", "inference.gpu_mem_used_ratio")
#: in-flight work: the engine's own count, else the pool's busy ratio × its size
IN_FLIGHT = ("inference.running_requests", "service.threadpool_busy_ratio")
#: defaults of the capacity states: the whole card (`level`), a 2× margin (`factor`)
CAPACITY_SHARE = 1.0
CAPACITY_MARGIN = 2.0


def first_crossing(ctx: Context, c: Condition, inst: str, level: float, since: float) -> float:
    """A peak or dip past the level that also happened before the onset, after a time on the
    normal side, is dated by its first crossing: a level crossed again and again since before
    the users noticed (a chronic stampede) began then, and a cause is not dated after the
    effects it explains. A row past the level from its first sample on keeps `since`: nothing
    in the window dates it."""
    row = ctx.settled_row(c.signal, inst)
    assert row is not None
    k = ctx.split()
    with np.errstate(invalid="ignore"):
        past = row[:k] > level if c.state == "above" else row[:k] < level
        normal = row[:k] <= level if c.state == "above" else row[:k] >= level
    if not np.any(past) or not np.any(normal):
        return since
    first_normal = int(np.argmax(normal))
    later = np.flatnonzero(past[first_normal:])
    if later.size == 0:
        return since
    return ctx.frame.start + ctx.frame.step * (first_normal + int(later[0]))


def reads_extreme(c: Condition) -> bool:
    """A peak or a dip that must have happened (peak up/above, dip down/below): such readings
    skip the samples just after a restart. "The peak stayed below" needs every sample."""
    return (c.stat, c.state) in (("max", "up"), ("max", "above"), ("min", "down"), ("min", "below"))


def extreme_split(ctx: Context, c: Condition, since: float | None = None) -> int:
    """Where a peak or dip condition's incident part begins: a level (above/below) since the
    onset (or `since`), a peak against the earlier peak `Context.peak_split` ahead of it."""
    return ctx.split(since) if c.state in ("above", "below") else ctx.peak_split()


def settled_data(ctx: Context, c: Condition, inst: str) -> bool:
    """Whether a peak or dip condition has readings left on both sides of the onset once the
    samples after restarts are set aside (else it is undecidable there, not false)."""
    if c.stat == "median" or not reads_extreme(c):
        return True
    if ctx.row(c.signal, inst) is None:
        return False
    k = extreme_split(ctx, c)
    high_before, _, high_since, _ = ctx.extremes(c.signal, inst, k, settled=True)
    tail_ok = not np.isnan(high_since)
    return tail_ok and (c.state in ("above", "below") or not np.isnan(high_before))


def extreme(
    ctx: Context, c: Condition, inst: str
) -> tuple[bool, Evidence | None, float | None, float]:
    """`up`/`down` with stat max/min: the extreme since the onset against the one before it
    (both split PEAK_LEAD_S early: a cause's first readings precede the users' symptom),
    leaving out readings taken just after the target was down (see `Context.settled_row`)."""
    settled = reads_extreme(c)
    row = ctx.settled_row(c.signal, inst) if settled else ctx.row(c.signal, inst)
    if row is None:
        return False, None, None, 0.0
    k = ctx.peak_split()
    high_before, low_before, high_since, low_since = ctx.extremes(c.signal, inst, k, settled)
    if np.isnan(high_before) or np.isnan(high_since):
        return False, None, None, 0.0
    before, after = (high_before, high_since) if c.stat == "max" else (low_before, low_since)
    tail = row[k:]
    factor = c.factor if c.factor is not None else 2.0
    if c.state == "up":
        holds = after > 0 and after >= factor * max(before, 0.0)
    else:
        holds = after * factor <= before
    if c.delta is not None:
        holds = holds and abs(after - before) >= c.delta
    if not holds:
        return False, None, None, 0.0
    # dated by the first sample past the threshold, not by the peak: a burst's cause begins
    # when the values leave their old range, and the peak can come many minutes later
    bar = factor * max(before, 0.0) if c.state == "up" else before / factor
    crossed = ((tail >= bar) & (tail > 0)) if c.state == "up" else (tail <= bar)
    at = k + int(np.argmax(crossed))
    onset = ctx.frame.start + ctx.frame.step * at
    ev = from_level(ctx, c.signal, inst, c.stat, before, after, bar, onset)
    return True, ev, onset, min(10.0, after / before) if before > 0 else 10.0


#: `rose`/`fell`: the shift of the medians must exceed this many robust σ of the time before
SHIFT_Z = 3.0
SHIFT_MIN_BEFORE = 5


def shift(
    ctx: Context, c: Condition, inst: str, since: float | None = None
) -> tuple[bool, Evidence | None, float | None, float]:
    """`rose`/`fell`: the median since the onset (or `since`, `when: during`) against the
    median before, by `factor`, and beyond the noise before (SHIFT_Z robust σ of single
    samples: conservative, a noisy signal needs more than `factor`). Fewer than
    SHIFT_MIN_BEFORE samples before tell nothing of its noise: the shift is not read."""
    pre, post, _ = ctx.before_after(c.signal, inst, since)
    row = ctx.row(c.signal, inst)
    if pre is None or post is None or row is None or pre <= 0:
        return False, None, None, 0.0
    factor = float(c.factor or 1.0)
    before = row[: ctx.split(since)]
    before = before[~np.isnan(before)]
    if before.size < SHIFT_MIN_BEFORE:
        return False, None, None, 0.0
    sigma = 1.4826 * float(np.median(np.abs(before - pre)))
    moved = post - pre if c.state == "rose" else pre - post
    ok = post >= factor * pre if c.state == "rose" else post * factor <= pre
    if not ok or moved <= SHIFT_Z * sigma:
        return False, None, None, 0.0
    # like a level, a shift dates no change of its own: the incident's onset
    ev = from_level(ctx, c.signal, inst, c.state, pre, post, factor * pre, ctx.onset, since)
    return True, ev, ctx.onset, min(10.0, max(post / pre, pre / post) if post > 0 else 10.0)


def _worse_than_peers(ctx: Context, signal: str, inst: str) -> tuple[float, float, float] | None:
    """(how many times worse than its peers, its median, the peers' median) since the onset,
    worse the signal's bad way (a clock lower, a batch time higher); None without peers."""
    since = {i: after for i, (_, after) in ctx.split_medians(signal, ctx.split()).items()}
    own = since.get(inst)
    peers = [m for i, m in since.items() if i != inst and m is not None]
    if own is None or len(peers) < 2:
        return None
    fleet = float(np.median(peers))
    if own <= 0 or fleet <= 0:
        return None
    return (fleet / own if ctx.bad(signal) == "down" else own / fleet), own, fleet


def _peak_growth(ctx: Context, signal: str, inst: str) -> tuple[float, float, float] | None:
    """(how many times its peak since the onset exceeds its peak before, the one, the other),
    read away from restarts and split as `extreme` splits; None where either side has no
    reading or the peak before is not positive."""
    high_before, _, high_since, _ = ctx.extremes(signal, inst, ctx.peak_split(), True)
    if not high_before > 0 or np.isnan(high_since):
        return None
    return high_since / high_before, high_since, high_before


def outpaces(
    ctx: Context, c: Condition, inst: str
) -> tuple[bool, Evidence | None, float | None, float]:
    """`outpaces`: the signal is `factor` times further from its peers (its bad way) than
    `than` is from theirs: a change its would-be cause is too small to make; with `stat: max`,
    its peak grew `factor` times as much as `than`'s did against their peaks before (a pass
    that slowed 2.5× while the mean batch grew 1.3×: each item costs more, the batches are past
    the knee — below it a larger batch costs less per item). Does not hold where either signal
    (or, against peers, two peers) is missing: it refutes only on data."""
    assert c.than is not None and c.factor is not None
    own_past = c.stat == "max"
    read = _peak_growth if own_past else _worse_than_peers
    mine, cause = read(ctx, c.signal, inst), read(ctx, c.than, inst)
    if mine is None or cause is None or mine[0] < c.factor * max(cause[0], 1.0):
        return False, None, None, 0.0
    u, cu = ctx.unit(c.signal), ctx.unit(c.than)
    mine_at = f"({format_value(mine[1], u)} against {format_value(mine[2], u)})"
    cause_at = f"({format_value(cause[1], cu)} against {format_value(cause[2], cu)})"
    if own_past:
        text = (
            f"{c.signal} on {inst} peaked {mine[0]:.2f}× its highest before the incident "
            f"{mine_at} while {c.than} peaked {cause[0]:.2f}× {cause_at}: it grew more than "
            "that can make it"
        )
    else:
        text = (
            f"{c.signal} on {inst} is {mine[0]:.2f}× worse than its peers' since the incident "
            f"began {mine_at} while {c.than} is {cause[0]:.2f}× worse {cause_at}: more than "
            "that can cause"
        )
    state = "max" if own_past else "above"
    ev = from_level(ctx, c.signal, inst, state, mine[2], mine[1], mine[2], ctx.onset)
    # a comparison over the incident part dates nothing: undated, it does not move the cause's
    # start back to the incident's onset (a card slowed at 11:53 would then "explain" latency
    # that rose elsewhere at 11:04, and a second process that came at 11:52 not explain it)
    return (
        True,
        dataclasses.replace(ev, statement=text, onset=None),
        None,
        min(10.0, mine[0] / max(cause[0], 1.0)),
    )


def outage(
    ctx: Context, c: Condition, inst: str
) -> tuple[bool, Evidence | None, float | None, float]:
    """`outage`: the longest run of `up` 0 that ended (the target came back) since the split."""
    row = ctx.row(c.signal, inst)
    if row is None:
        return False, None, None, 0.0
    step, k = ctx.frame.step, ctx.split()
    down = np.concatenate(([False], row < 0.5, [False]))  # NaN (no sample) is not "down"
    edges = np.flatnonzero(np.diff(down.astype(np.int8)))
    starts, ends = edges[0::2], edges[1::2]  # ends: the first sample up again
    back = (ends < row.size) & (ends >= k) & (row[np.minimum(ends, row.size - 1)] >= 0.5)
    if not np.any(back):
        return False, None, None, 0.0
    longest = int(np.argmax(np.where(back, ends - starts, -1)))
    seconds = float(ends[longest] - starts[longest]) * step
    if seconds < float(c.level or 0.0):
        return False, None, None, 0.0
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
    return True, ev, onset, min(10.0, 5.0 * seconds / max(float(c.level or 1.0), 1.0))


def capacity_state(
    ctx: Context, c: Condition, inst: str
) -> tuple[bool, Evidence | None, float | None, float]:
    """`over_capacity` / `within_capacity`: the configured limit (`c.signal`) against the card's
    concurrency V/M estimated from this window (see `capacity`). Undecidable instances count as
    not holding; `eval_condition` makes the condition unknown when none can be decided."""
    share = c.level if c.level is not None else CAPACITY_SHARE
    factor = c.factor if c.factor is not None else CAPACITY_MARGIN
    cap = estimate_capacity(ctx, c.signal, inst, share)
    if cap is None:
        return False, None, None, 0.0
    over = cap.over(factor)
    if over != (c.state == "over_capacity"):
        return False, None, None, 0.0
    ev = Evidence(
        signal=c.signal,
        instance=inst,
        kind="level",
        supports=True,
        statement=cap.statement(inst, factor),
        window_start=ctx.frame.start,
        window_end=ctx.frame.end,
        baseline=factor * cap.safe(),
        observed=cap.limit,
        unit=ctx.unit(c.signal),
    )
    score = min(10.0, cap.limit / (factor * cap.safe())) if cap.safe() > 0 else 10.0
    return True, ev, None, score if over else 1.0


def estimate_capacity(ctx: Context, limit_signal: str, inst: str, share: float) -> Capacity | None:
    """The card's concurrency estimate for one instance, fitted once per window (memoised)."""
    key = ("capacity", limit_signal, inst)
    if key not in ctx.memo:
        running = ctx.row(IN_FLIGHT[0], inst)
        limit = ctx.row(limit_signal, inst)
        if running is not None and np.any(~np.isnan(running)):
            flight: FloatArray | None = running
        else:
            busy = ctx.row(IN_FLIGHT[1], inst)
            flight = None if busy is None or limit is None else busy * limit
        used, ratio = (ctx.row(s, inst) for s in CAPACITY_INPUTS)
        ctx.memo[key] = estimate(used, ratio, flight, limit, CAPACITY_SHARE)
    cap = ctx.memo[key]
    assert cap is None or isinstance(cap, Capacity)
    return None if cap is None else dataclasses.replace(cap, usable_share=share)


def capacity_missing(ctx: Context, c: Condition, cands: Sequence[str]) -> list[str]:
    """The inputs of a capacity state that none of `cands` carries."""
    have = set(cands)
    need = [s for s in CAPACITY_INPUTS if not have & set(ctx.instances_of(s))]
    if not any(have & set(ctx.instances_of(s)) for s in IN_FLIGHT):
        need.extend(IN_FLIGHT)
    return need
