"""Worker pool, queue bound and maximum wait from the GPU's concurrency (seed §3.3), each
figure with its arithmetic and the seed section it comes from.

    V  = card × (1 − headroom) − reserved        usable VRAM (§3.2 headroom, §3.3 V)
    N  = ⌊V / M⌋, at least 1                     batches the card runs at once (§3.3)
    R  = N × b / L                               requests per second (§3.3)
    P  = N × b = R × L                           worker pool: requests in flight (§3.3)
    W  = target p99 − L  (or a default)          maximum wait before a batch starts (§3.3)
    Q  = ⌊R × W⌋, at least 1                     queue bound: what the pool clears in W (§3.3)

Counts round down (one more than fits is the fault being fixed) and are never 0 (a pool of 0
serves nothing); where the card does not hold one batch the plan says so instead of pretending.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from infersight.capacity.config import DEFAULT_CONFIG, CapacityConfig

GIB = float(2**30)


@dataclass(frozen=True)
class Figure:
    """One figure of the plan: its value, unit, how it was computed and where the rule is."""

    name: str
    value: float
    unit: str  # bytes, count, per_s, seconds
    arithmetic: str
    seed: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "unit": self.unit,
            "arithmetic": self.arithmetic,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class PoolPlan:
    usable: float  # V, bytes
    batches: int  # N
    requests_per_s: float  # R
    pool: int  # P
    max_wait: float  # W, seconds
    queue: int  # Q
    figures: tuple[Figure, ...]
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "usable_vram_bytes": self.usable,
            "concurrent_batches": self.batches,
            "requests_per_s": self.requests_per_s,
            "pool_size": self.pool,
            "max_wait_s": self.max_wait,
            "queue_bound": self.queue,
            "figures": [f.to_dict() for f in self.figures],
            "warnings": list(self.warnings),
        }


def _b(v: float) -> str:
    return f"{v / GIB:.2f} GiB"


def _ms(s: float) -> str:
    return f"{s * 1000:.0f} ms" if s < 10 else f"{s:.1f} s"


def floor_count(v: float) -> int:
    """Round down, at least 1 (a tolerance keeps 6.0 from reading 5.999…)."""
    return max(1, math.floor(v + 1e-9)) if math.isfinite(v) else 1


def concurrent(
    card: float, per_batch: float, reserved: float, headroom: float
) -> tuple[float, float, int]:
    """(V, V/M, N): the VRAM left for batches with `headroom` of the card kept free and
    `reserved` held whatever the load, how many batches of `per_batch` that is, and N, that
    rounded down and never 0. The one place V/M is computed: `diagnose` quotes it too."""
    usable = card * (1.0 - headroom) - reserved
    ratio = usable / per_batch if usable > 0 and per_batch > 0 else 0.0
    return max(usable, 0.0), ratio, floor_count(ratio)


def plan_pool(
    card: float,
    per_batch: float,
    batch_latency: float,
    batch_size: int = 1,
    target_p99: float | None = None,
    reserved: float = 0.0,
    headroom: float | None = None,
    config: CapacityConfig = DEFAULT_CONFIG,
) -> PoolPlan:
    """The plan for one card. card: its VRAM (bytes); per_batch: M, the peak VRAM one batch
    adds (bytes); batch_latency: L, one batch's time on the GPU (s); batch_size: b, requests
    per batch; target_p99: the latency to hold (s); reserved: VRAM held whatever the load
    (weights, runtime; bytes); headroom: share of the card kept free (default §3.2's 20%).

    ValueError for impossible inputs (non-positive sizes or times, a target under L)."""
    for name, v in (
        ("VRAM", card),
        ("per-batch peak", per_batch),
        ("batch latency", batch_latency),
    ):
        if not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be positive, not {v!r}")
    if batch_size < 1:
        raise ValueError(f"batch size must be at least 1, not {batch_size}")
    if reserved < 0 or not math.isfinite(reserved):
        raise ValueError(f"reserved VRAM must be ≥ 0, not {reserved!r}")
    share = config.vram_headroom if headroom is None else headroom
    if not 0.0 <= share < 1.0:
        raise ValueError(f"headroom {share!r} must be a share in [0, 1)")
    if target_p99 is not None and not target_p99 > batch_latency:
        raise ValueError(
            f"target p99 {_ms(target_p99)} is not above one batch's {_ms(batch_latency)}: "
            "no queue meets it; make batches faster or the target looser"
        )

    warnings: list[str] = []
    usable, ratio, batches = concurrent(card, per_batch, reserved, share)
    held = f" − {_b(reserved)} reserved" if reserved else ""
    f_v = Figure(
        "usable VRAM (V)",
        usable,
        "bytes",
        f"{_b(card)} × (1 − {share:.0%} headroom){held} = {_b(usable)}",
        "§3.2, §3.3",
    )
    if ratio < 1.0:
        warnings.append(
            f"the card holds {ratio:.2f} batches of {_b(per_batch)} with {share:.0%} headroom: "
            "planned for 1, which risks OOM; shrink the batch or the headroom, or use a larger card"
        )
    f_n = Figure(
        "concurrent batches (N = V/M)",
        batches,
        "count",
        f"⌊{_b(usable)} / {_b(per_batch)}⌋ = ⌊{ratio:.2f}⌋ → {batches}",
        "§3.3",
    )
    rps = batches * batch_size / batch_latency
    f_r = Figure(
        "requests per second (R)",
        rps,
        "per_s",
        f"{batches} batches × {batch_size} requests / {_ms(batch_latency)} = {rps:.1f}/s",
        "§3.3",
    )
    pool = batches * batch_size
    f_p = Figure(
        "worker pool (P)",
        pool,
        "count",
        f"N × b = {batches} × {batch_size} = {pool} (= R × L: the requests in flight; "
        "never a multiple of CPU cores)",
        "§3.3",
    )
    if target_p99 is not None:
        wait = target_p99 - batch_latency
        how = f"target p99 {_ms(target_p99)} − one batch {_ms(batch_latency)} = {_ms(wait)}"
    else:
        wait = config.queue_seconds_default
        how = f"no --target-p99: the default {_ms(wait)} (what a user waits before a fast 503)"
    f_w = Figure("maximum wait (W)", wait, "seconds", how, "§3.3")
    queue = floor_count(rps * wait)
    f_q = Figure(
        "queue bound (Q)",
        queue,
        "count",
        f"⌊R × W⌋ = ⌊{rps:.1f}/s × {_ms(wait)}⌋ → {queue}: past it, 503 at once",
        "§3.3",
    )
    return PoolPlan(
        usable, batches, rps, pool, wait, queue, (f_v, f_n, f_r, f_p, f_w, f_q),
        tuple(warnings),
    )  # fmt: skip
