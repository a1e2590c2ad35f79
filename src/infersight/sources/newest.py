"""Where a server's data is when a window holds none of it: the known exporter families the
server holds at any time, and the time of their newest sample.

A window that ends after the data does (a backfilled lab, `--at` left at now, a server that
stopped scraping) reads as "no known exporter" when the names are asked for the window alone,
right after `probe`, which asks for all time, found them. The answer then says which families
the server holds and when their newest sample is, so the next command is `--at` that time.

The newest sample is found without reading the history: `count()` of the families' marker
metrics on a coarse grid, over spans that grow back from now until one holds a sample (an
instant selector reads only its lookback before each point), then the exact sample time from
`timestamp()` on a fine grid within the one coarse step that held it.

    data_elsewhere(client, catalog) -> Elsewhere | None
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, Field

from infersight.exporters import Catalog, Family
from infersight.sources.prometheus import PrometheusClient


class NewestConfig(BaseModel):
    spans_s: tuple[float, ...] = Field(
        (86400.0, 30 * 86400.0, 400 * 86400.0),
        description="How far back from now to look, each span tried only when the one before "
        "held nothing: data that stopped an hour ago costs one query, a year-old backfill "
        "three. Data older than the last span is said to be absent from it.",
    )
    points: int = Field(
        1000,
        ge=10,
        le=11000,
        description="Grid points of the coarse query over one span (Prometheus answers at most "
        "11,000 per series): a span of 30 days is read every 43 minutes, so a stretch of data "
        "shorter than one step between two points can be missed.",
    )
    fine_step_s: float = Field(
        15.0,
        gt=0,
        description="Resolution of the exact query: a scrape interval, so the newest sample's "
        "own timestamp is read.",
    )
    lookback_s: float = Field(
        300.0,
        gt=0,
        description="How far an instant selector reaches back for its sample (Prometheus's "
        "default lookback delta): a coarse point marks data up to this long before it.",
    )
    max_names: int = Field(
        1,
        ge=1,
        description="Marker metrics read per family: one says when the family was last "
        "scraped, and the query stays as light as the fewest series.",
    )


@dataclass(frozen=True)
class Elsewhere:
    """The known families the server holds at any time, and their newest sample (None when no
    span searched holds one)."""

    families: tuple[str, ...]
    newest: float | None
    searched_s: float


def markers(present: Sequence[Family], names: set[str], per_family: int = 1) -> list[str]:
    """A few metric names that prove each present family is scraped: its marker names first,
    else the names of its mappings the server has."""
    out: list[str] = []
    for f in present:
        own = sorted({m for alts in f.mappings.values() for a in alts for m in a.metrics} & names)
        picked = [m for m in f.detect if m in names] or own
        out += [m for m in picked[:per_family] if m not in out]
    return out


def _latest(names: Sequence[str]) -> str:
    """The latest sample time of any of `names`, as one instant expression. `timestamp()` reads
    a sample's own time only straight on a selector (on a function's result it is the time of
    evaluation), and it drops the metric name, so two metrics with the same labels would clash
    in one selector: one selector per name, each folded to one series labelled with its name."""
    parts = [
        f'label_replace(max(timestamp({{__name__="{n}"}})), "metric", "{n}", "", "")'
        for n in sorted(names)
    ]
    return "max(" + " or ".join(parts) + ")"


def newest_sample(
    client: PrometheusClient, names: Sequence[str], now: float, cfg: NewestConfig
) -> float | None:
    """The time of the newest sample of any of `names` in the spans searched back from `now`."""
    sel = '{__name__=~"' + "|".join(sorted(names)) + '"}'
    fine = cfg.fine_step_s
    end = math.ceil(now / fine) * fine
    for span in cfg.spans_s:
        step = max(fine, math.ceil(span / cfg.points / fine) * fine)
        found = [
            float(s.ts[np.isfinite(s.values) & (s.values > 0)].max(initial=-np.inf))
            for s in client.query_range(f"count({sel})", end - span, end, step)
        ]
        last = max(found, default=-np.inf)
        if not np.isfinite(last):
            continue
        # the sample lies between one lookback before `last` and the next coarse point
        reach = step + cfg.lookback_s
        expr = f"max_over_time({_latest(names)}[{reach:.0f}s:{fine:.0f}s])"
        exact = [float(v) for s in client.query(expr, last + step) for v in s.values]
        return max((v for v in exact if math.isfinite(v)), default=last)
    return None


def data_elsewhere(
    client: PrometheusClient, catalog: Catalog, now: float, cfg: NewestConfig | None = None
) -> Elsewhere | None:
    """The known families the server holds at any time and their newest sample; None when it
    holds none at all (then the window's answer, "no known exporter", is the server's)."""
    c = cfg or NewestConfig()
    names = set(client.metric_names())
    present = catalog.detect(names)
    if not present:
        return None
    newest = newest_sample(client, markers(present, names, c.max_names), now, c)
    return Elsewhere(tuple(f.name for f in present), newest, c.spans_s[-1])
