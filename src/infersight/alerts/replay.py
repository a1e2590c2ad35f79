"""Replay alerting rules over history a Prometheus already holds: which would have fired, when.

Prometheus evaluates rules only from the moment it loads them. To ask what the rules say about
last night, each alert's expression is sent as a range query with the recording rules it
reads inlined as subqueries at the evaluation interval (`x[30m] offset 1d` becomes
`(expr)[30m:1m] offset 1d`), and `for:` is applied to the result the way the rule manager
does: a series must be present at every evaluation from its first until `for` has passed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from infersight.alerts.rules import Group
from infersight.sources.prometheus import PrometheusClient
from infersight.timeparse import parse_duration


@dataclass(frozen=True)
class Firing:
    alert: str
    labels: dict[str, str]
    since: float  # first evaluation at which it was firing
    until: float  # last evaluation at which it was firing

    def to_dict(self) -> dict[str, Any]:
        return {
            "alert": self.alert,
            "labels": self.labels,
            "since": self.since,
            "until": self.until,
        }


def inline(expr: str, recording: Sequence[Group], step: str) -> str:
    """`expr` with every recorded name replaced by the expression that records it."""
    defs = {r.record: r.expr for g in recording for r in g.rules if r.record}
    if not defs:
        return expr
    names = "|".join(re.escape(n) for n in sorted(defs, key=len, reverse=True))
    pattern = re.compile(
        rf"(?<![A-Za-z0-9_:])({names})(?![A-Za-z0-9_:])"
        r"(?:\[(\d+[smhdwy](?:\d+[smhdwy])*)\])?(\s+offset\s+\d+[smhdwy](?:\d+[smhdwy])*)?"
    )

    def sub(m: re.Match[str]) -> str:
        body = f"({defs[m.group(1)]})"
        if m.group(2):
            body += f"[{m.group(2)}:{step}]"
        return body + (m.group(3) or "")

    return pattern.sub(sub, expr)


def hold(ts: np.ndarray, step: float, for_s: float) -> list[tuple[float, float]]:
    """Firing intervals of one series present at `ts` (evaluation times, `step` apart)."""
    out: list[tuple[float, float]] = []
    active = since = last = None
    for t in ts.tolist():
        if last is None or t - last > step * 1.5:
            if since is not None and last is not None:
                out.append((since, last))
            active, since = t, None
        if since is None and active is not None and t - active >= for_s:
            since = t
        last = t
    if since is not None and last is not None:
        out.append((since, last))
    return out


def replay(
    client: PrometheusClient,
    recording: Sequence[Group],
    alerting: Sequence[Group],
    start: float,
    end: float,
) -> list[Firing]:
    """Every alert that would have fired between `start` and `end`, in time order."""
    firings: list[Firing] = []
    for group in alerting:
        step = parse_duration(group.interval)
        for rule in group.rules:
            expr = inline(rule.expr, recording, group.interval)
            for_s = parse_duration(rule.for_) if rule.for_ else 0.0
            for series in client.query_range(expr, start, end, step):
                labels = {k: v for k, v in series.labels.items() if k != "__name__"}
                labels.update(rule.labels)
                for since, until in hold(series.ts, step, for_s):
                    firings.append(Firing(rule.alert, labels, since, until))
    return sorted(firings, key=lambda f: (f.since, f.alert))
