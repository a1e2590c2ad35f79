"""Steady and peak VRAM per instance from history, and the headroom left at the peak
(seed §3.2: steady is weights plus resident caches, the peak adds a batch's activations; keep
20–30% free). An instance whose history lacks the signals is reported missing, never safe."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from infersight.capacity.config import DEFAULT_CONFIG, CapacityConfig
from infersight.frame import FloatArray, MetricFrame

USED = "inference.gpu_mem_used_bytes"
RATIO = "inference.gpu_mem_used_ratio"
SIGNALS = (USED, RATIO)
Status = Literal["at_risk", "tight", "ok", "missing"]
DAY_S = 86400.0


@dataclass(frozen=True)
class InstanceVram:
    instance: str
    status: Status
    card: float | None  # bytes; None where only the ratio is known
    steady: float | None  # share of the card (ratio)
    peak: float | None  # share of the card
    peak_at: float | None  # epoch seconds of the peak
    headroom: float | None  # 1 − peak
    risky_days: tuple[tuple[float, float], ...] = ()  # (time of that day's peak, its share)
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "instance": self.instance,
            "status": self.status,
            "card_bytes": self.card,
            "steady_share": self.steady,
            "peak_share": self.peak,
            "peak_at": self.peak_at,
            "headroom": self.headroom,
            "risky_days": [{"at": t, "peak_share": v} for t, v in self.risky_days],
            "reason": self.reason,
        }


def _share_row(frame: MetricFrame, inst: str) -> tuple[FloatArray | None, float | None]:
    """The instance's VRAM in use as a share of its card, and the card's size (if known)."""
    used_s, ratio_s = frame.get(USED), frame.get(RATIO)
    ratio = ratio_s.row(inst) if ratio_s is not None else None
    used = used_s.row(inst) if used_s is not None else None
    card = None
    if ratio is not None and used is not None:
        ok = ~np.isnan(ratio) & ~np.isnan(used) & (ratio > 0)
        if np.any(ok):
            card = float(np.median(used[ok] / ratio[ok]))
    if ratio is not None and np.any(~np.isnan(ratio)):
        return ratio, card
    return None, card


def instance_vram(
    frame: MetricFrame, inst: str, config: CapacityConfig = DEFAULT_CONFIG
) -> InstanceVram:
    share, card = _share_row(frame, inst)
    if share is None:
        return InstanceVram(
            inst, "missing", card, None, None, None, None, (),
            f"no {RATIO} for this instance: its headroom is unknown, not safe",
        )  # fmt: skip
    ok = ~np.isnan(share)
    vals, times = share[ok], frame.times[ok]
    steady = float(np.quantile(vals, config.steady_quantile))
    peak = float(np.quantile(vals, config.peak_quantile))
    k = int(np.argmax(vals >= peak))
    headroom = 1.0 - peak
    status: Status = (
        "at_risk"
        if headroom < config.headroom_low
        else "tight"
        if headroom < config.headroom_high
        else "ok"
    )
    days: dict[int, tuple[float, float]] = {}
    for t, v in zip(times, vals, strict=True):
        d = int(t // DAY_S)
        if 1.0 - v < config.headroom_low and (d not in days or v > days[d][1]):
            days[d] = (float(t), float(v))
    reason = (
        f"peak {peak:.0%} of the card, {headroom:.0%} free (keep {config.headroom_low:.0%}–"
        f"{config.headroom_high:.0%}, §3.2); steady {steady:.0%}, so a batch's activations "
        f"add {max(peak - steady, 0.0):.0%}"
    )
    return InstanceVram(
        inst, status, card, steady, peak, float(times[k]), headroom,
        tuple(days[d] for d in sorted(days)), reason,
    )  # fmt: skip


def vram_report(frame: MetricFrame, config: CapacityConfig = DEFAULT_CONFIG) -> list[InstanceVram]:
    """Every instance that reports VRAM, worst headroom first; missing ones last."""
    insts: dict[str, None] = {}
    for name in SIGNALS:
        s = frame.get(name)
        if s is not None:
            insts.update(dict.fromkeys(s.instances))
    rows = [instance_vram(frame, i, config) for i in insts]
    order = {"at_risk": 0, "tight": 1, "ok": 2, "missing": 3}
    return sorted(rows, key=lambda r: (order[r.status], -(r.peak or 0.0), r.instance))
