"""What changed in the cluster in the window, read from kube-state-metrics: rollouts, images,
scaling, restarts and their reasons, pods not Ready, nodes not Ready or under pressure, pods
that cannot be scheduled or whose image cannot be pulled. Each change has its time and its
figures, and the nodes it touched, so that a report lists it and a finding on one of those
nodes quotes it (seed §2.3: what changed right before is the first thing to ask).

Every kind is one module of `kinds/` (`QUERIES`, `read`); `read_changes` runs them all on any
source that answers PromQL over the window's grid: a Prometheus, or raw samples.
"""

from __future__ import annotations

import importlib
import itertools
import pkgutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType
from typing import Any

import numpy as np

from infersight.frame import FloatArray
from infersight.kube.pods import PodMap

Rows = list[tuple[dict[str, str], FloatArray]]
#: one PromQL expression → its series on the window's grid
Fetch = Callable[[str], Rows]


@dataclass(frozen=True)
class ClusterChange:
    at: float  # when it began (the window's first point: it was so before the window)
    kind: str  # the module that read it: rollout, image, scaling, restart, ...
    subject: str  # `Deployment inference/vllm`, `pod inference/vllm-…`, `node gpu-3`
    what: str  # its figures, in one line
    nodes: tuple[str, ...] = ()  # the nodes it touched, as the diagnosis names instances
    workload: str = ""  # `Deployment/vllm`, where it is one workload's
    until: float | None = None  # when it ended; None while it lasted to the window's end
    before_window: bool = False  # it was already so at the window's first point
    lasting: bool = False  # a state that held for a while (not Ready), not a moment (a rollout)

    def to_dict(self) -> dict[str, Any]:
        return {**vars(self), "nodes": list(self.nodes)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ClusterChange:
        return cls(**{**d, "nodes": tuple(d.get("nodes", ()))})


@dataclass(frozen=True)
class Window:
    """The grid the series are read on, and the pods placed on nodes in it."""

    times: FloatArray
    pods: PodMap = field(default_factory=PodMap)

    def node_of(self, pod: str) -> tuple[str, ...]:
        p = self.pods.pods.get(pod)
        return (p.node,) if p is not None else ()

    def workload_of(self, pod: str) -> str:
        return self.pods.owners.get(pod, "")


def rises(row: FloatArray) -> Iterator[tuple[int, float, float]]:
    """(index, before, after) of each step up of a row, gaps skipped."""
    ok = np.flatnonzero(~np.isnan(row))
    for a, b in itertools.pairwise(ok):
        if row[b] > row[a]:
            yield int(b), float(row[a]), float(row[b])


def runs(on: np.ndarray) -> Iterator[tuple[int, int | None]]:
    """(first, last + 1 or None when it lasts to the end) of each run of True."""
    edges = np.flatnonzero(np.diff(np.concatenate([[0], on.astype(np.int8), [0]])))
    for a, b in zip(edges[::2], edges[1::2], strict=True):
        yield int(a), (int(b) if b < on.size else None)


def lasting(w: Window, kind: str, subject: str, what: str, on: np.ndarray,
            nodes: tuple[str, ...] = (), workload: str = "") -> list[ClusterChange]:  # fmt: skip
    """A change for each stretch a condition held (`on`), with how long."""
    out = []
    for a, b in runs(on):
        until = float(w.times[b]) if b is not None else None
        out.append(ClusterChange(float(w.times[a]), kind, subject, what, nodes, workload, until,
                                 a == 0, lasting=True))  # fmt: skip
    return out


@cache
def kinds() -> tuple[ModuleType, ...]:
    from infersight.kube import kinds as package

    found = []
    for info in pkgutil.iter_modules(package.__path__):
        mod = importlib.import_module(f"{package.__name__}.{info.name}")
        if hasattr(mod, "QUERIES") and hasattr(mod, "read"):
            found.append(mod)
    return tuple(sorted(found, key=lambda m: m.ORDER))


def read_changes(fetch: Fetch, w: Window) -> list[ClusterChange]:
    """Every kind's changes, in time order. A query that returns nothing (a cluster without
    HPAs) gives no change of its kind."""
    out: list[ClusterChange] = []
    for mod in kinds():
        rows = {name: fetch(expr) for name, expr in mod.QUERIES.items()}
        out += mod.read(rows, w)
    return sorted(out, key=lambda c: (c.at, c.kind, c.subject))


def relative(at: float, onset: float | None) -> str:
    """`3 min before the onset`, `at the onset`, `12 min after the onset`."""
    if onset is None:
        return ""
    m = round((onset - at) / 60.0)
    if m == 0:
        return "at the onset"
    return f"{abs(m)} min {'before' if m > 0 else 'after'} the onset"
