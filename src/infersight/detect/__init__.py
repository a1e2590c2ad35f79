"""Detection: what changed, where, since when, and how widely (seed §2.3 step 1, §4.2, §6.1).

API::

    detect(windows: dict[str, MetricFrame], *, at=None, config=None, peer_groups=None)
        -> DetectionResult
            .anomalies        Anomaly per (signal, instance, kind): deviation | trend |
                              fleet_outlier | absent; onset ± uncertainty, baseline vs observed
            .trends           Trend: slope, time to exhaustion (leaks)
            .fleet_outliers   FleetOutlier: "node-7 at 350 ms where the fleet is at 200 ms"
            .scope            Scope: all/part of requests, continuous/intermittent, one/cluster
            .unavailable_baselines, .baseline_notes, .to_dict()

windows["incident"] is required; "baseline-1h", "baseline-1d", "baseline-7d" (and any other
window) are baselines aligned point by point with it. `DetectConfig` holds every threshold.
"""

from infersight.detect.config import DetectConfig
from infersight.detect.fleet import FleetOutlier
from infersight.detect.result import Anomaly, DetectionResult
from infersight.detect.run import detect
from infersight.detect.scope import Scope, ScopeSignal
from infersight.detect.trend import Trend

__all__ = [
    "Anomaly",
    "DetectConfig",
    "DetectionResult",
    "FleetOutlier",
    "Scope",
    "ScopeSignal",
    "Trend",
    "detect",
]
