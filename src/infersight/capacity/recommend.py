"""The setting a knee gives (seed §3.1): about 20% under it, rounded down, never 0. A knee
at 32 gives 25, in a range of 24–28."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

from infersight.capacity.config import DEFAULT_CONFIG, CapacityConfig
from infersight.capacity.knee import Knee, find_knee
from infersight.capacity.results import Sweep

SEED_BATCH = "§3.1"
#: what the x axis' setting is called, per axis
SETTING = {
    "batch": "max batch size",
    "concurrency": "max concurrency (worker pool)",
    "rate": "max request rate",
}


def max_batch_for(knee: float, margin: float) -> int:
    """`margin` under the knee, rounded down (a setting over the knee is the fault), at least 1
    (a setting of 0 serves nothing)."""
    if not math.isfinite(knee) or knee <= 0:
        raise ValueError(f"knee {knee!r}: a knee is a positive number")
    if not 0.0 <= margin < 1.0:
        raise ValueError(f"margin {margin!r}: a margin is a share in [0, 1)")
    # a hair of tolerance: 32 × 0.75 is 24, not 23.999…
    return max(1, math.floor(knee * (1.0 - margin) + 1e-9))


@dataclass(frozen=True)
class BatchAdvice:
    """The knee and the setting it gives, with the latency measured there."""

    axis: str
    knee: Knee
    setting: int | None  # None where no knee was found
    low: int | None
    high: int | None
    margin: float
    p50_at: float | None  # seconds, interpolated between the steps around the setting
    p99_at: float | None
    throughput_at: float | None
    #: the highest percentile the tool reported, at the setting (perf_analyzer may give p95 only)
    tail_at: tuple[str, float] | None = None

    @property
    def name(self) -> str:
        return SETTING.get(self.axis, self.axis)

    def summary(self) -> str:
        if self.setting is None or self.knee.x is None:
            return f"no knee ({self.knee.reason}): no {self.name} to recommend yet"
        lat = (
            ""
            if self.tail_at is None
            else f"; {self.tail_at[0]} there {self.tail_at[1] * 1000:.0f} ms"
        )
        return (
            f"knee at {self.knee.x:g} ({self.knee.reason}); {self.name} {self.setting} "
            f"(range {self.low}–{self.high}: {self.margin:.0%} under the knee, rounded down, "
            f"seed {SEED_BATCH}){lat}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "axis": self.axis,
            "setting_name": self.name,
            "knee": self.knee.to_dict(),
            "setting": self.setting,
            "range": [self.low, self.high] if self.setting is not None else None,
            "margin": self.margin,
            "p50_at_s": self.p50_at,
            "p99_at_s": self.p99_at,
            "throughput_at": self.throughput_at,
            "tail_at": None
            if self.tail_at is None
            else {"percentile": self.tail_at[0], "s": self.tail_at[1]},
            "seed": SEED_BATCH,
            "summary": self.summary(),
        }


def _interp(xs: list[float], ys: list[float], x: float) -> float | None:
    for (a, ya), (b, yb) in itertools.pairwise(zip(xs, ys, strict=True)):
        if a <= x <= b:
            return ya + (x - a) / (b - a) * (yb - ya)
    return ys[0] if xs and x <= xs[0] else None


def advise(sweep: Sweep, config: CapacityConfig = DEFAULT_CONFIG) -> BatchAdvice:
    knee = find_knee(sweep, config)
    if knee.x is None:
        return BatchAdvice(
            sweep.axis, knee, None, None, None, config.batch_margin, None, None, None
        )
    setting = max_batch_for(knee.x, config.batch_margin)
    low = max_batch_for(knee.x, config.batch_margin_low)
    high = max_batch_for(knee.x, config.batch_margin_high)
    at = float(setting)
    tail = None
    for name in ("p99", "p95", "p90"):
        v = sweep.latency_at(at, name) if at >= sweep.xs[0] else None
        if v is not None:
            tail = (name, v)
            break
    return BatchAdvice(
        sweep.axis,
        knee,
        setting,
        low,
        high,
        config.batch_margin,
        sweep.latency_at(at, "p50") if at >= sweep.xs[0] else None,
        sweep.latency_at(at, "p99") if at >= sweep.xs[0] else None,
        _interp(sweep.xs, sweep.ys, at),
        tail,
    )
