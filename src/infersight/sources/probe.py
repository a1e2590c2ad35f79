"""What a Prometheus-compatible server can tell us: exporters found, signals available or not.

A signal is available when a detected exporter family has an alternative whose metrics all
exist on the server. Otherwise it is *unavailable*, with the reason (never reported healthy).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from infersight.exporters import Catalog
from infersight.signals import Layer, get_signal
from infersight.sources.plan import plan_signals
from infersight.sources.prometheus import PrometheusClient


@dataclass(frozen=True)
class SignalAvailability:
    signal: str
    layer: str
    available: bool
    family: str | None  # the family that would provide it (the first by priority)
    expr: str | None  # its PromQL template
    reason: str  # why unavailable ("" when available)

    def to_dict(self) -> dict[str, Any]:
        return {
            "signal": self.signal,
            "layer": self.layer,
            "available": self.available,
            "family": self.family,
            "expr": self.expr,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class ProbeResult:
    url: str
    metric_names: tuple[str, ...]
    families: tuple[str, ...]  # detected, by priority
    signals: dict[str, SignalAvailability]
    coverage: dict[str, tuple[int, int]] = field(default_factory=dict)  # layer -> (avail, total)

    @property
    def available(self) -> list[str]:
        return [s for s, a in self.signals.items() if a.available]

    @property
    def unavailable(self) -> dict[str, str]:
        return {s: a.reason for s, a in self.signals.items() if not a.available}

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "metric_names": len(self.metric_names),
            "families": list(self.families),
            "coverage": {k: {"available": a, "total": t} for k, (a, t) in self.coverage.items()},
            "signals": [a.to_dict() for a in self.signals.values()],
        }


def probe_names(
    names: Iterable[str], catalog: Catalog, url: str = "", signals: Iterable[str] | None = None
) -> ProbeResult:
    """The probe over a known set of metric names (no server needed)."""
    name_set = set(names)
    plans = plan_signals(catalog, name_set, signals)
    avail: dict[str, SignalAvailability] = {}
    coverage = {layer.value: [0, 0] for layer in Layer}
    for sig, p in plans.items():
        layer = get_signal(sig).layer.value
        first = p.mappings[0] if p.mappings else None
        avail[sig] = SignalAvailability(
            sig,
            layer,
            p.available,
            first.family if first else None,
            first.template if first else None,
            p.reason,
        )
        coverage[layer][0] += p.available
        coverage[layer][1] += 1
    return ProbeResult(
        url,
        tuple(sorted(name_set)),
        tuple(f.name for f in catalog.detect(name_set)),
        avail,
        {k: (a, t) for k, (a, t) in coverage.items() if t},
    )


async def aprobe(
    client: PrometheusClient,
    catalog: Catalog,
    signals: Iterable[str] | None = None,
    start: float | None = None,
    end: float | None = None,
) -> ProbeResult:
    names = await client.ametric_names(start, end)
    return probe_names(names, catalog, client.url, signals)


def probe(
    client: PrometheusClient,
    catalog: Catalog,
    signals: Iterable[str] | None = None,
    start: float | None = None,
    end: float | None = None,
) -> ProbeResult:
    """Ask the server which metrics it has; report exporters, signals and coverage per layer."""
    return client.run(lambda: aprobe(client, catalog, signals, start, end))
