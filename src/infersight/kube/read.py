"""The cluster's changes and pods, read from where the metrics are: a Prometheus-compatible
server, or raw samples (a bundle's, the simulator's)."""

from __future__ import annotations

import numpy as np

from infersight.frame import grid
from infersight.kube.changes import ClusterChange, Rows, Window, read_changes
from infersight.kube.pods import POD_INFO, PodMap
from infersight.promql import parse
from infersight.promql.evaluate import evaluate
from infersight.sources.prometheus import PrometheusClient
from infersight.sources.pull import on_grid
from infersight.sources.raw import RawStore

#: kube-state-metrics is there when it describes pods
PRESENT = POD_INFO


def from_store(
    store: RawStore, start: float, end: float, step: float, pods: PodMap
) -> list[ClusterChange]:
    """The changes in raw samples between start and end; none without kube-state-metrics."""
    if PRESENT not in store.names():
        return []
    g_start, n = grid(start, end, step)
    w = Window(g_start + step * np.arange(n, dtype=np.float64), pods)

    def fetch(expr: str) -> Rows:
        return [(dict(lb), v) for lb, v in evaluate(parse(expr), store, g_start, step, n)]

    return read_changes(fetch, w)


def from_prometheus(
    client: PrometheusClient, start: float, end: float, step: float, pods: PodMap
) -> list[ClusterChange]:
    """The changes a server holds between start and end; none without kube-state-metrics.
    A query that fails raises (`SourceError`): the caller says the section could not be read."""
    if PRESENT not in client.metric_names(start, end):
        return []
    g_start, n = grid(start, end, step)
    w = Window(g_start + step * np.arange(n, dtype=np.float64), pods)

    def fetch(expr: str) -> Rows:
        return [
            (s.labels, on_grid(s, g_start, step, n))
            for s in client.query_range(expr, g_start, end, step)
        ]

    return read_changes(fetch, w)
