"""The setting a sizing finding quotes (seed §3.1, §3.3): a confirmed oversized pool or batch
says what to set, from this window's evidence, with `infersight.capacity`'s arithmetic.

- threadpool_too_large: the pool V/M allows with the recommended headroom on each instance
  whose card's concurrency the window can estimate (`diagnose.capacity`); the smallest, as
  the pool is the fleet's config. With each pass's time (`inference.forward_time_avg`), the
  queue bound and the maximum wait that follow (`capacity.plan_pool`).
- max_batch_too_large: the knee of this window's own batches, throughput (batch size /
  forward time) against batch size, median per size, and the max batch 20% under it
  (`capacity.advise`). Where the window's batches show no knee (still rising at the largest
  batch run), the largest batch the card holds with the recommended headroom: VRAM against
  batch size fitted as `diagnose.capacity` fits it against work in flight (the slope is VRAM
  per item in a batch), and the command that finds the knee.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from infersight.capacity import DEFAULT_CONFIG as CAPACITY
from infersight.capacity import advise, plan_pool
from infersight.capacity.knee import KneedMissing
from infersight.capacity.results import Point, ResultsError, Sweep
from infersight.diagnose.capacity import estimate
from infersight.diagnose.context import Context
from infersight.diagnose.kb import CAPACITY_SIGNAL
from infersight.diagnose.result import HypothesisResult

GIB = float(2**30)
POOL_RULE = "threadpool_too_large"
BATCH_RULE = "max_batch_too_large"
FORWARD = "inference.forward_time_avg"
BATCH = "inference.batch_size"
USED, RATIO = "inference.gpu_mem_used_bytes", "inference.gpu_mem_used_ratio"


def _median(row: np.ndarray | None) -> float | None:
    if row is None:
        return None
    vals = row[~np.isnan(row)]
    return float(np.median(vals)) if vals.size else None


def pool_setting(ctx: Context, instances: tuple[str, ...]) -> str | None:
    from infersight.diagnose.states.capacity import estimate_capacity

    best: tuple[int, str, str] | None = None
    share = ctx.config.capacity_recommended_share
    for inst in instances or tuple(ctx.instances_of(CAPACITY_SIGNAL)):
        cap = estimate_capacity(ctx, CAPACITY_SIGNAL, inst, share)
        if cap is None:
            continue
        n = cap.recommended()
        lat = _median(ctx.row(FORWARD, inst))
        extra = ""
        if lat is not None and lat > 0:
            plan = plan_pool(cap.card, cap.per_request, lat, 1, None, cap.fixed, 1.0 - share)
            extra = f", a queue bound of {plan.queue} and a maximum wait of {plan.max_wait:g} s"
        how = (
            f"⌊({cap.card / GIB:.0f} GiB × {share:.0%} − {cap.fixed / GIB:.1f} GiB) / "
            f"{cap.per_request / GIB:.2f} GiB⌋ on {inst}"
        )
        if best is None or n < best[0]:
            best = (n, how, extra)
    if best is None:
        return None
    n, how, extra = best
    return (
        f"Set service.concurrency_limit to {n} ({how}, seed §3.3){extra}; "
        "`infersight capacity concurrency` shows the arithmetic."
    )


def window_sweep(ctx: Context, instances: tuple[str, ...]) -> Sweep | None:
    """Throughput against batch size from the window's own passes: per sample, batch size /
    forward time; one point per whole batch size, the median of its samples."""
    sizes, rates = [], []
    for inst in instances or tuple(ctx.instances_of(BATCH)):
        size, fwd = ctx.row(BATCH, inst), ctx.row(FORWARD, inst)
        if size is None or fwd is None:
            continue
        ok = ~np.isnan(size) & ~np.isnan(fwd) & (fwd > 0) & (size >= 1)
        b = np.round(size[ok])
        sizes.append(b)
        rates.append(b / fwd[ok])
    if not sizes:
        return None
    b_all, r_all = np.concatenate(sizes), np.concatenate(rates)
    merged = tuple(Point(float(b), float(np.median(r_all[b_all == b]))) for b in np.unique(b_all))
    if len(merged) < 3:
        return None
    try:
        return Sweep("batch", merged, "window", "items/s")
    except ResultsError:
        return None


FIND_KNEE = (
    "find the knee with `infersight capacity sweep URL --batch 1,2,4,…` and `infersight "
    "capacity batch RESULTS` (seed §3.1)"
)


def vram_batch_cap(ctx: Context, instances: tuple[str, ...]) -> str | None:
    """The largest batch the card holds with the recommended headroom, the smallest over
    `instances`, with its arithmetic; None where VRAM cannot be fitted against batch size."""
    share = ctx.config.capacity_recommended_share
    best: tuple[int, str] | None = None
    for inst in instances or tuple(ctx.instances_of(BATCH)):
        size = ctx.row(BATCH, inst)
        used, ratio = ctx.row(USED, inst), ctx.row(RATIO, inst)
        cap = estimate(used, ratio, size, size, share, ctx.config)
        if cap is None:
            continue
        n = cap.recommended()
        how = (
            f"⌊({cap.card / GIB:.0f} GiB × {share:.0%} − {cap.fixed / GIB:.1f} GiB) / "
            f"{cap.per_request / GIB:.2f} GiB per item⌋ on {inst}"
        )
        if best is None or n < best[0]:
            best = (n, how)
    if best is None:
        return None
    return f"{best[0]} ({best[1]}, seed §3.2, §3.3)"


def batch_setting(ctx: Context, instances: tuple[str, ...]) -> str:
    sweep = window_sweep(ctx, instances)
    reason = "too few batch sizes in this window to read a knee from"
    if sweep is not None:
        try:
            advice = advise(sweep, CAPACITY)
        except KneedMissing as exc:  # the extra is not installed: the VRAM bound still holds
            return _vram_or_command(ctx, instances, str(exc))
        if advice.setting is not None and advice.knee.x is not None:
            return (
                f"Set max batch size to {advice.setting} (range {advice.low}–{advice.high}): "
                f"this window's batches stop gaining throughput at {advice.knee.x:g} "
                f"(batch size / forward time, median per size, on {len(sweep.points)} sizes), "
                f"{CAPACITY.batch_margin:.0%} under it, rounded down (seed §3.1)."
            )
        reason = f"this window's batches show no throughput knee ({advice.knee.reason})"
    return _vram_or_command(ctx, instances, reason)


def _vram_or_command(ctx: Context, instances: tuple[str, ...], reason: str) -> str:
    cap = vram_batch_cap(ctx, instances)
    if cap is not None:
        return f"Set max batch size to at most {cap}: {reason}; {FIND_KNEE}."
    return f"No setting from this window: {reason}; {FIND_KNEE}, then set max batch 20% under it."


def with_setting(ctx: Context, result: HypothesisResult) -> HypothesisResult:
    """`result` with the setting to use appended to its remedy, where it is a confirmed
    sizing finding; unchanged otherwise."""
    if result.verdict != "confirmed" or result.id not in (POOL_RULE, BATCH_RULE):
        return result
    if result.id == POOL_RULE:
        text = pool_setting(ctx, result.instances)
    else:
        text = batch_setting(ctx, result.instances)
    if text is None:
        return result
    remedy = f"{result.remedy} {text}".strip()
    return dataclasses.replace(result, remedy=remedy)
