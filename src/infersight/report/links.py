"""The PromQL behind each finding, and where to open it: the Prometheus UI and Grafana Explore.

A finding names a canonical signal; the catalog holds the exporter PromQL that computes it. The
query is the one of the exporter family the data came from when the source says so (a simulator
dialect, a family list), else the catalog's preferred one, grouped by instance so that a fleet
finding opens with every instance on one graph.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote

from infersight.diagnose.result import Diagnosis

#: the rate window and grouping of the queries shown (the pull's defaults)
RATE_WINDOW = "5m"
GROUP_BY = ("instance",)


@dataclass(frozen=True)
class Links:
    """Where a reader's Prometheus and Grafana are; None: no link of that kind."""

    prometheus_url: str | None = None
    grafana_url: str | None = None
    #: the Grafana data source (name or uid) Explore opens the query in
    grafana_datasource: str = "prometheus"


@dataclass(frozen=True)
class Query:
    signal: str
    family: str
    expr: str

    def to_dict(self) -> dict[str, str]:
        return {"signal": self.signal, "family": self.family, "expr": self.expr}


def _families(source: dict[str, str]) -> list[str]:
    named = [source.get("dialect", ""), *source.get("families", "").split(",")]
    return [f.strip() for f in named if f.strip()]


def finding_signals(d: Diagnosis) -> list[str]:
    """Every signal a finding of the diagnosis reads, in the order they first appear."""
    seen: dict[str, None] = {}
    for h in d.hypotheses:
        for e in h.evidence:
            seen.setdefault(e.signal, None)
    for u in d.unexplained:
        seen.setdefault(u.signal, None)
    return list(seen)


def queries(d: Diagnosis, signals: Iterable[str] | None = None) -> dict[str, Query]:
    """Per signal, the PromQL that computes it (signals no family maps are left out)."""
    from infersight.exporters import load_catalog

    catalog = load_catalog()
    preferred = _families(d.source)
    out: dict[str, Query] = {}
    for signal in finding_signals(d) if signals is None else signals:
        maps = catalog.mappings_for(signal)
        if not maps:
            continue
        best = min(
            enumerate(maps),
            key=lambda im: (
                preferred.index(im[1].family) if im[1].family in preferred else len(preferred),
                im[0],
            ),
        )[1]
        out[signal] = Query(signal, best.family, best.render(RATE_WINDOW, GROUP_BY))
    return out


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


def prometheus_link(base: str, expr: str, start: float, end: float) -> str:
    """The Prometheus UI's graph of `expr` over [start, end]: /graph?g0.expr=…"""
    span = max(int(end - start), 60)
    return (
        f"{base.rstrip('/')}/graph?g0.expr={quote(expr, safe='')}&g0.tab=0"
        f"&g0.range_input={span}s&g0.end_input={quote(_iso(end))}"
    )


def grafana_link(base: str, expr: str, start: float, end: float, datasource: str) -> str:
    """Grafana Explore with `expr` over [start, end] in `datasource`."""
    state = {
        "datasource": datasource,
        "queries": [{"refId": "A", "expr": expr}],
        "range": {"from": str(int(start * 1000)), "to": str(int(end * 1000))},
    }
    left = quote(json.dumps(state, separators=(",", ":")), safe="")
    return f"{base.rstrip('/')}/explore?orgId=1&left={left}"


def link_set(q: Query, links: Links | None, start: float, end: float) -> dict[str, str]:
    """The links a query has: "prometheus" and "grafana", each when its base URL is known."""
    out: dict[str, str] = {}
    if links is None:
        return out
    if links.prometheus_url:
        out["prometheus"] = prometheus_link(links.prometheus_url, q.expr, start, end)
    if links.grafana_url:
        out["grafana"] = grafana_link(
            links.grafana_url, q.expr, start, end, links.grafana_datasource
        )
    return out


def query_document(d: Diagnosis, links: Links | None = None) -> dict[str, dict[str, object]]:
    """For the JSON report: per signal read by a finding, its PromQL and links."""
    return {
        signal: {**q.to_dict(), "links": link_set(q, links, d.start, d.end)}
        for signal, q in queries(d).items()
    }
