"""The PromQL behind each finding, and where to open it: the Prometheus UI and Grafana Explore.

A finding names a canonical signal. The query quoted is the one its series came from, exactly as
the pull sent it (`Diagnosis.queries_run`: the family, the expression, the rate window, range and
step), one per family where two families fed the signal (two kinds of instance). Only where no
record exists (a simulator's signals, a bundle written before the record) is it the catalog's
mapping of the source's family (its dialect), else its first, rendered as a pull would send it;
such a query says so (`as_run` False): it may not be the one that produced the data.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from infersight.diagnose.result import Diagnosis
from infersight.exporters import DEFAULT_WINDOW, IDENTITY_LABELS
from infersight.provenance import QueryRun, by_signal

#: what a query without a record says instead of its provenance
CATALOG_NOTE = "the catalog's PromQL: no record of the query that produced this data"


@dataclass(frozen=True)
class Links:
    """Where a reader's Prometheus and Grafana are; None: no link of that kind."""

    prometheus_url: str | None = None
    grafana_url: str | None = None
    #: the Grafana data source (name or uid) Explore opens the query in
    grafana_datasource: str = "prometheus"


@dataclass(frozen=True)
class Query(QueryRun):
    """A query to show: a recorded run (`provenance.QueryRun`), or with `as_run` False the
    catalog's query rendered as a pull would send it, not a record."""

    as_run: bool = True

    @classmethod
    def of(cls, run: QueryRun) -> Query:
        return cls(**dataclasses.asdict(run))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _families(source: dict[str, str]) -> list[str]:
    named = [source.get("dialect", ""), *source.get("families", "").split(",")]
    return [f.strip() for f in named if f.strip()]


def finding_signals(d: Diagnosis) -> list[str]:
    """Every signal a finding of the diagnosis reads, then the user-facing signals its scope
    read, in the order they first appear."""
    seen: dict[str, None] = {}
    for h in d.hypotheses:
        for e in h.evidence:
            seen.setdefault(e.signal, None)
    for u in d.unexplained:
        seen.setdefault(u.signal, None)
    for s in d.scope.get("signals") or []:
        if isinstance(s, dict) and isinstance(s.get("signal"), str):
            seen.setdefault(s["signal"], None)
    return list(seen)


def _from_catalog(d: Diagnosis, signal: str) -> Query | None:
    from infersight.exporters import load_catalog

    maps = load_catalog().mappings_for(signal)
    if not maps:
        return None
    preferred = _families(d.source)
    best = min(
        enumerate(maps),
        key=lambda im: (
            preferred.index(im[1].family) if im[1].family in preferred else len(preferred),
            im[0],
        ),
    )[1]
    window = d.source.get("rate_window") or DEFAULT_WINDOW
    expr = best.render(window, IDENTITY_LABELS)
    return Query(signal, best.family, expr, window, d.start, d.end, d.step, False)


def queries(d: Diagnosis, signals: Iterable[str] | None = None) -> dict[str, tuple[Query, ...]]:
    """Per signal, the queries its series came from (signals neither recorded nor mapped by
    any family are left out)."""
    ran = by_signal(d.queries_run)
    out: dict[str, tuple[Query, ...]] = {}
    for signal in finding_signals(d) if signals is None else signals:
        if signal in ran:
            out[signal] = tuple(Query.of(r) for r in ran[signal])
        elif (q := _from_catalog(d, signal)) is not None:
            out[signal] = (q,)
    return out


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


def _seconds(step: float) -> str:
    return f"{step:g}"


def prometheus_link(base: str, expr: str, start: float, end: float, step: float) -> str:
    """The Prometheus UI's graph of `expr` over [start, end] every `step` seconds."""
    span = max(round(end - start), 60)
    return (
        f"{base.rstrip('/')}/graph?g0.expr={quote(expr, safe='')}&g0.tab=0"
        f"&g0.range_input={span}s&g0.end_input={quote(_iso(end))}"
        f"&g0.step_input={_seconds(step)}"
    )


def grafana_link(
    base: str, expr: str, start: float, end: float, step: float, datasource: str
) -> str:
    """Grafana Explore with `expr` over [start, end], its step no finer than `step`, in
    `datasource`."""
    state = {
        "datasource": datasource,
        "queries": [{"refId": "A", "expr": expr, "interval": f"{_seconds(step)}s"}],
        "range": {"from": str(int(start * 1000)), "to": str(int(end * 1000))},
    }
    left = quote(json.dumps(state, separators=(",", ":")), safe="")
    return f"{base.rstrip('/')}/explore?orgId=1&left={left}"


def link_set(q: Query, links: Links | None) -> dict[str, str]:
    """The links a query has: "prometheus" and "grafana", each when its base URL is known, over
    the query's own range and step."""
    out: dict[str, str] = {}
    if links is None:
        return out
    if links.prometheus_url:
        out["prometheus"] = prometheus_link(links.prometheus_url, q.expr, q.start, q.end, q.step)
    if links.grafana_url:
        out["grafana"] = grafana_link(
            links.grafana_url, q.expr, q.start, q.end, q.step, links.grafana_datasource
        )
    return out


def query_document(d: Diagnosis, links: Links | None = None) -> dict[str, list[dict[str, Any]]]:
    """For the JSON report: per signal read by a finding, each query it came from and its
    links."""
    return {
        signal: [{**q.to_dict(), "links": link_set(q, links)} for q in qs]
        for signal, qs in queries(d).items()
    }
