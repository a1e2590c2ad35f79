"""`over_capacity` / `within_capacity` (on `service.concurrency_limit`, seed §3.3): the
configured limit against the card's concurrency V/M estimated from this window (see
`diagnose.capacity`). Undecidable instances count as not holding; `conditions.py` makes the
condition unknown when none can be decided (`decidable`, `missing`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from infersight.diagnose.capacity import Capacity, estimate
from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.kb import CAPACITY_SIGNAL, Condition
from infersight.diagnose.result import Evidence
from infersight.diagnose.states.reading import NOT_HELD, Reading
from infersight.frame import FloatArray

#: the states this kind reads: `registry.py` finds the module by them
STATES = ("over_capacity", "within_capacity")
#: the options a condition of this kind takes (see `kb.Condition`)
ACCEPTS = frozenset({"level", "factor"})
#: where docs/rules.md lists it among the condition kinds
ORDER = 80


def doc(cfg: DiagnoseConfig) -> str:
    """Its entry in docs/rules.md's list of condition kinds."""
    return (
        "`over capacity`/`within capacity` — the configured concurrency limit against V/M, the "
        "requests the card holds, estimated from the window (M: VRAM per in-flight request, V: "
        "the card's usable VRAM less weights and runtime; seed §3.3)"
    )


def check(c: Condition) -> str | None:
    """Read on the configured limit; its level is the usable share of VRAM."""
    if c.signal != CAPACITY_SIGNAL:
        return f"state {c.state!r} reads {CAPACITY_SIGNAL}, not {c.signal!r}"
    if c.level is not None and not 0.0 < c.level <= 1.0:
        return "level of a capacity state is the usable share of VRAM, in (0, 1]"
    return None


#: what the capacity states read besides the configured limit
CAPACITY_INPUTS = ("inference.gpu_mem_used_bytes", "inference.gpu_mem_used_ratio")
#: in-flight work: the engine's own count, else the pool's busy ratio × its size
IN_FLIGHT = ("inference.running_requests", "service.threadpool_busy_ratio")


def share_and_margin(ctx: Context, c: Condition) -> tuple[float, float]:
    """The usable share of the card (`level`) and the margin (`factor`), or their defaults."""
    cfg = ctx.config
    share = c.level if c.level is not None else cfg.capacity_share
    factor = c.factor if c.factor is not None else cfg.capacity_margin
    return share, factor


def read(ctx: Context, c: Condition, inst: str, shown: bool, since: float | None) -> Reading:
    share, factor = share_and_margin(ctx, c)
    cap = estimate_capacity(ctx, c.signal, inst, share)
    if cap is None:
        return NOT_HELD
    over = cap.over(factor)
    if over != (c.state == "over_capacity"):
        return NOT_HELD
    ev = _evidence(ctx, c, inst, cap, factor, True, cap.statement(inst, factor))
    top = ctx.config.state_score_cap
    score = min(top, cap.limit / (factor * cap.safe())) if cap.safe() > 0 else top
    return Reading(True, ev, None, score if over else ctx.config.within_capacity_score)


def not_seen(ctx: Context, c: Condition, inst: str) -> Evidence | None:
    """Evidence against where the state held nowhere: the estimate on `inst`, or None where
    it cannot be made."""
    share, factor = share_and_margin(ctx, c)
    cap = estimate_capacity(ctx, c.signal, inst, share)
    if cap is None:
        return None
    text = cap.statement(inst, factor) + f" (not {c.state.replace('_', ' ')})"
    return _evidence(ctx, c, inst, cap, factor, False, text)


def _evidence(
    ctx: Context, c: Condition, inst: str, cap: Capacity, factor: float, supports: bool, text: str
) -> Evidence:
    return Evidence(
        signal=c.signal,
        instance=inst,
        kind="level",
        supports=supports,
        statement=text,
        window_start=ctx.frame.start,
        window_end=ctx.frame.end,
        baseline=factor * cap.safe(),
        observed=cap.limit,
        unit=ctx.unit(c.signal),
    )


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
        cfg = ctx.config
        ctx.memo[key] = estimate(used, ratio, flight, limit, cfg.capacity_share, cfg)
    cap = ctx.memo[key]
    assert cap is None or isinstance(cap, Capacity)
    return None if cap is None else dataclasses.replace(cap, usable_share=share)


def decidable(ctx: Context, c: Condition, cands: Sequence[str]) -> tuple[str, ...]:
    """The candidates whose card's capacity can be estimated."""
    share = ctx.config.capacity_share
    return tuple(i for i in cands if estimate_capacity(ctx, c.signal, i, share) is not None)


def missing(ctx: Context, c: Condition, cands: Sequence[str]) -> list[str]:
    """The inputs of a capacity state that none of `cands` carries."""
    have = set(cands)
    need = [s for s in CAPACITY_INPUTS if not have & set(ctx.instances_of(s))]
    if not any(have & set(ctx.instances_of(s)) for s in IN_FLIGHT):
        need.extend(IN_FLIGHT)
    return need
