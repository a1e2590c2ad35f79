"""Scope triage (seed §2.3 step 1): all or part of the requests, continuous or intermittent,
one instance or the cluster — each answer with the figures behind it.

Read from the user-facing signals only (end-to-end latency P99/P50, error ratio, gateway
latency and 5xx). The answer decides whether to hunt a common root cause or a single case.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from infersight.detect._stats import BoolArray, finite_or_none, merge_runs, runs
from infersight.detect.config import DetectConfig

Requests = Literal["all", "part", "none", "unknown"]
Timing = Literal["continuous", "intermittent", "none", "unknown"]
Spread = Literal["one", "some", "cluster", "none", "unknown"]

P99 = ("service.e2e_latency_p99", "access.request_latency_p99", "service.ttft_p99")
P50 = ("service.e2e_latency_p50",)
ERRORS = ("service.error_ratio", "access.5xx_ratio", "access.upstream_5xx_ratio")


def post_share(flags: BoolArray, valid: BoolArray, onset: int) -> float:
    """Share of the valid points from onset on that are anomalous."""
    f, v = flags[onset:], valid[onset:]
    nv = int(v.sum())
    return float((f & v).sum() / nv) if nv else 0.0


def post_onset(flags: BoolArray, valid: BoolArray, onset: int, gap: int) -> tuple[float, int]:
    """(share of valid points from onset on that are anomalous, number of bursts)."""
    f = flags[onset:]
    frac = post_share(flags, valid, onset)
    bursts = [r for r in merge_runs(runs(f), gap) if r[1] - r[0] >= 2]
    return frac, max(1, len(bursts)) if f.any() else 0


@dataclass(frozen=True)
class ScopeSignal:
    """One user-facing signal: how many instances carry it, which are anomalous, and how."""

    signal: str
    instances: int
    anomalous: tuple[str, ...]
    fraction: float | None  # median post-onset anomalous share over anomalous instances
    bursts: int  # most bursts on one anomalous instance
    observed: float | None  # median observed value over anomalous instances

    @property
    def share(self) -> float:
        return len(self.anomalous) / self.instances if self.instances else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "signal": self.signal,
            "instances": self.instances,
            "anomalous": list(self.anomalous),
            "share": self.share,
            "fraction": finite_or_none(self.fraction),
            "bursts": self.bursts,
            "observed": finite_or_none(self.observed),
        }


@dataclass(frozen=True)
class ScopeEntry:
    """Per anomalous (signal, instance): post-onset share, bursts, observed value."""

    instance: str
    fraction: float
    bursts: int
    observed: float | None


@dataclass(frozen=True)
class Scope:
    requests: Requests
    requests_why: str
    timing: Timing
    timing_why: str
    instances: Spread
    instances_why: str
    anomalous_instances: tuple[str, ...]
    total_instances: int
    signals: tuple[ScopeSignal, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "requests_why": self.requests_why,
            "timing": self.timing,
            "timing_why": self.timing_why,
            "instances": self.instances,
            "instances_why": self.instances_why,
            "anomalous_instances": list(self.anomalous_instances),
            "total_instances": self.total_instances,
            "signals": [s.to_dict() for s in self.signals],
        }


def summarize_signal(signal: str, instances: int, entries: Sequence[ScopeEntry]) -> ScopeSignal:
    obs = [e.observed for e in entries if e.observed is not None]
    return ScopeSignal(
        signal=signal,
        instances=instances,
        anomalous=tuple(sorted(e.instance for e in entries)),
        fraction=float(np.median([e.fraction for e in entries])) if entries else None,
        bursts=max((e.bursts for e in entries), default=0),
        observed=float(np.median(obs)) if obs else None,
    )


def _spread(sigs: Sequence[ScopeSignal], cfg: DetectConfig) -> tuple[Spread, str, set[str], int]:
    """One instance, some, or the cluster — read from signals that several instances carry.

    A gateway is usually one instance: its signals say whether requests suffer, not where.
    """
    every: set[str] = set()
    for s in sigs:
        every.update(s.anomalous)
    fleet = [s for s in sigs if s.instances >= 2]
    if not fleet:
        total = max(s.instances for s in sigs)
        if not every:
            return "none", f"no anomaly on {len(sigs)} user-facing signal(s)", every, total
        why = "only single-instance user-facing signals (gateway): one instance or all?"
        return "unknown", why, every, total
    bad: set[str] = set()
    for s in fleet:
        bad.update(s.anomalous)
    total = max(s.instances for s in fleet)
    if not bad:
        if every:
            return (
                "unknown",
                "only the gateway is anomalous; serving instances look normal",
                every,
                total,
            )
        return "none", f"no anomaly on {len(sigs)} user-facing signal(s)", bad, total
    worst = max(fleet, key=lambda s: s.share)
    fig = f"{len(worst.anomalous)} of {worst.instances} instances on {worst.signal}"
    if len(bad) == 1 and worst.share < cfg.cluster_share:
        return "one", f"only {next(iter(bad))}: {fig}", bad, total
    if worst.share >= cfg.cluster_share:
        return "cluster", fig, bad, total
    return "some", f"{len(bad)} of {total} instances; {fig}", bad, total


def triage(sigs: Sequence[ScopeSignal], cfg: DetectConfig) -> Scope:
    """The three answers of seed §2.3 step 1 from per-signal summaries."""
    if not sigs:
        why = "no user-facing signal (e2e latency, error ratio, gateway) in the window"
        return Scope("unknown", why, "unknown", why, "unknown", why, (), 0, ())
    spread, spread_why, bad, total = _spread(sigs, cfg)
    if spread == "none":
        w = spread_why
        return Scope("none", w, "none", w, "none", w, (), total, tuple(sigs))
    by = {s.signal: s for s in sigs}
    all_signs: list[str] = []
    part_signs: list[str] = []
    for name in P50:
        s = by.get(name)
        if s is not None and s.anomalous and s.share >= cfg.cluster_share:
            all_signs.append(f"{name} up on {len(s.anomalous)} of {s.instances} instances")
    for name in ERRORS:
        s = by.get(name)
        if s is None or not s.anomalous or s.observed is None:
            continue
        if s.observed >= cfg.partial_error_ratio and s.share >= cfg.cluster_share:
            all_signs.append(f"{name} at {s.observed:.0%} on {len(s.anomalous)} instances")
        else:
            part_signs.append(f"{name} at {s.observed:.1%}: part of the requests fail")
    if spread in ("one", "some"):
        part_signs.append(f"confined to {len(bad)} of {total} instances")
    p50_present = any(name in by for name in P50)
    for name in P99:
        s = by.get(name)
        if s is None or not s.anomalous:
            continue
        p50_bad = any(by[p].anomalous for p in P50 if p in by)
        if p50_present and not p50_bad:
            part_signs.append(f"{name} up with P50 flat: the tail only")
    requests: Requests
    if all_signs:
        requests, rwhy = "all", "; ".join(all_signs)
    elif part_signs:
        requests, rwhy = "part", "; ".join(part_signs)
    else:
        requests, rwhy = "unknown", "latency up cluster-wide but P50 unavailable: tail or all?"
    anomalous = [s for s in sigs if s.anomalous and s.fraction is not None]
    frac = float(np.median([s.fraction for s in anomalous if s.fraction is not None]))
    bursts = max(s.bursts for s in anomalous)
    timing: Timing = "continuous" if frac >= cfg.continuous_fraction else "intermittent"
    twhy = f"{frac:.0%} of points anomalous since onset, up to {bursts} burst(s)"
    return Scope(
        requests=requests,
        requests_why=rwhy,
        timing=timing,
        timing_why=twhy,
        instances=spread,
        instances_why=spread_why,
        anomalous_instances=tuple(sorted(bad)),
        total_instances=total,
        signals=tuple(sigs),
    )
