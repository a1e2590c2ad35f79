"""Which query fed each signal: recorded where the data is read, quoted where it is shown.

A signal's series come from one range query per exporter family that had data (a pull sends
`SignalMapping.render(rate_window, by=IDENTITY_LABELS)` for the family's first alternative whose
metrics the server has; `bundle import` evaluates the same expression over the files' samples).
That expression, its family, the rate window, the range and the step are what a reader needs to
see the same series again: the pull records them (`QueryRun`), the bundle manifest keeps them
per window, the Diagnosis carries the incident window's, and every report quotes them, never the
catalog's first mapping of the signal, which the server may not have at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from infersight.exporters import IDENTITY_LABELS, SignalMapping


@dataclass(frozen=True)
class QueryRun:
    """One range query whose series a signal holds: the exporter family, the PromQL exactly as
    sent, the rate window written into it, and the range [start, end] and step it was sent
    with (epoch seconds)."""

    signal: str
    family: str
    expr: str
    rate_window: str
    start: float
    end: float
    step: float


def runs_of(
    mappings: Iterable[SignalMapping],
    used: Iterable[str],
    rate_window: str,
    start: float,
    end: float,
    step: float,
) -> tuple[QueryRun, ...]:
    """The queries of the families in `used` (those whose series the signal holds), in the
    order they fed it (the highest-priority family first)."""
    by_family = {m.family: m for m in mappings}
    return tuple(
        QueryRun(
            by_family[f].signal,
            f,
            by_family[f].render(rate_window, by=IDENTITY_LABELS),
            rate_window,
            start,
            end,
            step,
        )
        for f in used
        if f in by_family
    )


def by_signal(runs: Iterable[QueryRun]) -> dict[str, tuple[QueryRun, ...]]:
    """The runs grouped per signal, each signal's in the order given."""
    out: dict[str, list[QueryRun]] = {}
    for r in runs:
        out.setdefault(r.signal, []).append(r)
    return {s: tuple(rs) for s, rs in out.items()}
