"""Typed results of detection: one Anomaly per finding, and the DetectionResult that holds them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from infersight.detect._stats import finite_or_none

if TYPE_CHECKING:
    from infersight.detect.fleet import FleetOutlier
    from infersight.detect.scope import Scope
    from infersight.detect.trend import Trend

Kind = Literal["deviation", "trend", "fleet_outlier", "absent"]
Sign = Literal["up", "down"]


@dataclass(frozen=True)
class Anomaly:
    """One signal of one instance behaving badly, with the figures that say so.

    baseline/observed are medians over the anomalous points (for a fleet outlier the baseline
    is the peers' median; for an absence, the last value seen). `baselines` names the
    reference windows that made the band ("baseline-1d", "self-1h", "pre-onset", "fleet", …);
    `weak` marks evidence against the pre-onset part of the window only.
    """

    signal: str
    layer: str
    instance: str
    kind: Kind
    onset: float
    onset_uncertainty_s: float
    direction: Sign
    score: float
    baseline: float | None = None
    observed: float | None = None
    ratio: float | None = None
    z: float | None = None
    end: float | None = None
    fraction: float | None = None  # share of points from onset to end of window anomalous
    baselines: tuple[str, ...] = ()
    weak: bool = False
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "signal": self.signal,
            "layer": self.layer,
            "instance": self.instance,
            "kind": self.kind,
            "onset": self.onset,
            "onset_uncertainty_s": self.onset_uncertainty_s,
            "direction": self.direction,
            "score": finite_or_none(self.score),
            "baseline": finite_or_none(self.baseline),
            "observed": finite_or_none(self.observed),
            "ratio": finite_or_none(self.ratio),
            "z": finite_or_none(self.z),
            "end": self.end,
            "fraction": finite_or_none(self.fraction),
            "baselines": list(self.baselines),
            "weak": self.weak,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class DetectionResult:
    """Everything `detect` found in one incident window, strongest first within each list."""

    start: float
    end: float
    step: float
    anomalies: tuple[Anomaly, ...]
    trends: tuple[Trend, ...]
    fleet_outliers: tuple[FleetOutlier, ...]
    scope: Scope
    unavailable_baselines: tuple[str, ...]
    baseline_notes: tuple[str, ...] = ()
    fallback_series: int = 0
    signals_checked: int = 0
    series_checked: int = 0
    unknown_signals: tuple[str, ...] = field(default=())

    def by_signal(self, signal: str) -> list[Anomaly]:
        return [a for a in self.anomalies if a.signal == signal]

    def flagged(self, kind: Kind | None = None) -> set[tuple[str, str]]:
        """(signal, instance) pairs with an anomaly (of this kind)."""
        return {(a.signal, a.instance) for a in self.anomalies if kind is None or a.kind == kind}

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "step": self.step,
            "anomalies": [a.to_dict() for a in self.anomalies],
            "trends": [t.to_dict() for t in self.trends],
            "fleet_outliers": [f.to_dict() for f in self.fleet_outliers],
            "scope": self.scope.to_dict(),
            "unavailable_baselines": list(self.unavailable_baselines),
            "baseline_notes": list(self.baseline_notes),
            "fallback_series": self.fallback_series,
            "signals_checked": self.signals_checked,
            "series_checked": self.series_checked,
            "unknown_signals": list(self.unknown_signals),
        }
