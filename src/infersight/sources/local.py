"""Raw exporter samples → canonical MetricFrame, without a server.

The same semantics as pulling from a Prometheus-compatible server: for each signal, each
exporter family found in the data (in priority order) contributes its first mapping whose
metrics exist; the mapping's PromQL is evaluated locally; series are resolved to instance
identities and merged with the signal's `combine`; a higher-priority family wins per identity.
`LocalResult.runs` records the expression each family's series came from (`provenance`).
Used by `bundle import` (exposition, OpenMetrics, query_range JSON) and the simulator's tests.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from infersight.exporters import IDENTITY_LABELS, Catalog, SignalMapping
from infersight.frame import FloatArray, MetricFrame, SignalSeries, grid
from infersight.kube.pods import PLACED_BEFORE_S, POD_INFO, PodMap
from infersight.limits import Limits
from infersight.promql.evaluate import evaluate
from infersight.provenance import QueryRun, runs_of
from infersight.signals import get_signal
from infersight.sources.merge import first_family_wins, rows_by_identity
from infersight.sources.plan import plan_signals
from infersight.sources.raw import RawStore


@dataclass(frozen=True)
class LocalResult:
    frame: MetricFrame
    #: signal → why it is unavailable (no family provides it, metrics absent, no data)
    missing: dict[str, str] = field(default_factory=dict)
    #: signal → the families whose data it holds, in priority order ("vllm,dcgm")
    sources: dict[str, str] = field(default_factory=dict)
    #: per signal, the expression of each family its series came from, as evaluated
    runs: tuple[QueryRun, ...] = ()
    #: the pods kube-state-metrics placed on nodes (empty off Kubernetes)
    pods: PodMap = field(default_factory=PodMap)


def _rows(
    mapping: SignalMapping,
    store: RawStore,
    start: float,
    step: float,
    n: int,
    window: str,
    pods: PodMap,
) -> dict[str, FloatArray]:
    result = evaluate(mapping.parsed(window, IDENTITY_LABELS), store, start, step, n)
    how = get_signal(mapping.signal).combine
    return rows_by_identity(result, how, pods.identity) if pods else rows_by_identity(result, how)


def pods_of(store: RawStore, start: float, end: float) -> PodMap:
    """The pods `kube_pod_info` places on nodes between start and end, and those that ended
    shortly before start (`PLACED_BEFORE_S`)."""
    return PodMap.from_labels(
        s.label_map
        for s in store.series(POD_INFO)
        if s.ts.size and s.ts[0] <= end and s.ts[-1] >= start - PLACED_BEFORE_S
    )


#: how a signal whose metrics hold only NaN is said missing (coverage.py reads it)
ONLY_NAN = "every sample of "
NO_DATA = "the exporter's metrics are present but hold no data in the window"


def _why_empty(mappings: Iterable[SignalMapping], store: RawStore, names: set[str]) -> str:
    """Why a signal whose metrics are present came out empty: every sample NaN, or none in the
    window."""
    metrics = sorted(set().union(*(m.metrics for m in mappings)) & names)
    samples = [s.values for name in metrics for s in store.series(name)]
    if samples and all(np.isnan(v).all() for v in samples):
        return f"{ONLY_NAN}{', '.join(metrics)} is NaN"
    return NO_DATA


def canonical_frame(
    store: RawStore,
    catalog: Catalog,
    start: float,
    end: float,
    step: float,
    window: str = "5m",
    signals: Iterable[str] | None = None,
    limits: Limits | None = None,
) -> LocalResult:
    """Evaluate every signal's mapping over the raw samples onto the grid start..end by step.

    Raises `LimitExceeded` for a grid of more points than `limits.grid_points` before evaluating
    anything (mappings are evaluated one at a time, so the raw series count does not multiply it).
    """
    start, n = grid(start, end, step)
    (limits or Limits()).check_grid(n, 1, "the samples' time span")
    names = store.names()
    pods = pods_of(store, start, end)
    series: dict[str, SignalSeries] = {}
    missing: dict[str, str] = {}
    sources: dict[str, str] = {}
    runs: list[QueryRun] = []
    for signal, plan in plan_signals(catalog, names, signals).items():
        if not plan.available:
            missing[signal] = plan.reason
            continue
        rows, used = first_family_wins(
            (m.family, _rows(m, store, start, step, n, window, pods)) for m in plan.mappings
        )
        if not rows:
            missing[signal] = _why_empty(plan.mappings, store, names)
            continue
        instances = sorted(rows)
        series[signal] = SignalSeries(tuple(instances), np.vstack([rows[i] for i in instances]))
        sources[signal] = ",".join(used)
        runs += runs_of(plan.mappings, used, window, start, end, step)
    return LocalResult(MetricFrame(start, step, n, series), missing, sources, tuple(runs), pods)
