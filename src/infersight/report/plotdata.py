"""The series a report plots: observed in the incident window vs the band of its baselines.

`windows` are the frames the diagnosis was computed on: "incident" and optional baseline
windows ("baseline-1h", "baseline-1d", "baseline-7d", …) aligned point by point with it, so
point k of a baseline is the same time of hour/day/week as point k of the incident. The band at
each point is the min–max over the baselines, its middle line their median.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from infersight.diagnose.result import Diagnosis, HypothesisResult
from infersight.frame import FloatArray, MetricFrame
from infersight.report.view import build_view, signal_unit

INCIDENT = "incident"


@dataclass(frozen=True)
class PlotTarget:
    """One signal on one instance that evidence of a root cause or a chain step rests on."""

    signal: str
    instance: str
    unit: str
    onset: float | None
    hypothesis: str  # id of the first hypothesis whose evidence names it
    statement: str
    figures: tuple[float | None, float | None]  # baseline, observed
    #: the other instances the same finding was made on (a fleet-wide finding)
    peers: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlotSeries:
    times: FloatArray
    observed: FloatArray
    band_lo: FloatArray | None
    band_hi: FloatArray | None
    band_mid: FloatArray | None
    baselines: tuple[str, ...]  # names of the baseline windows in the band
    #: the same signal on the finding's other instances
    peers: tuple[FloatArray, ...] = ()


def _row(frame: MetricFrame, signal: str, instance: str) -> FloatArray | None:
    s = frame.get(signal)
    if s is None:
        return None
    row = s.row(instance)
    if row is None and len(s.instances) == 1 and not instance:
        row = s.values[0]
    return row


def plot_targets(d: Diagnosis) -> list[PlotTarget]:
    """Evidence signals of the root causes and their chains, each (signal, instance) once."""
    hyps: list[HypothesisResult] = []
    for r in build_view(d).roots:
        hyps += [s.hypothesis for s in r.steps if s.hypothesis is not None and s.first]
    seen: set[tuple[str, str]] = set()
    out: list[PlotTarget] = []
    for h in hyps:
        for e in h.evidence:
            key = (e.signal, e.instance)
            if key in seen:
                continue
            seen.add(key)
            onset = e.onset if e.onset is not None else h.onset
            unit = e.unit or signal_unit(e.signal)
            figs = (e.baseline, e.observed)
            original = d.hypothesis(h.id)
            same = original.evidence if original is not None else h.evidence
            peers = tuple(
                dict.fromkeys(
                    x.instance
                    for x in same
                    if x.signal == e.signal
                    and x.supports == e.supports
                    and x.instance != e.instance
                )
            )
            out.append(
                PlotTarget(e.signal, e.instance, unit, onset, h.id, e.statement, figs, peers)
            )
    return out


def plot_series(
    windows: Mapping[str, MetricFrame], signal: str, instance: str, peers: tuple[str, ...] = ()
) -> PlotSeries | None:
    """Observed and baseline band for one signal on one instance (and the same signal on its
    `peers`, for a fleet-wide finding); None when nothing to plot."""
    incident = windows.get(INCIDENT)
    if incident is None or incident.n < 2:
        return None
    observed = _row(incident, signal, instance)
    if observed is None or not np.isfinite(observed).any():
        return None
    rows: list[FloatArray] = []
    names: list[str] = []
    for name, frame in windows.items():
        if name == INCIDENT or frame.n != incident.n:
            continue
        row = _row(frame, signal, instance)
        if row is not None and np.isfinite(row).any():
            rows.append(row)
            names.append(name)
    others = tuple(
        r
        for r in (_row(incident, signal, p) for p in peers)
        if r is not None and np.isfinite(r).any()
    )
    if not rows:
        return PlotSeries(incident.times, observed, None, None, None, (), others)
    stack = np.vstack(rows)
    finite = np.isfinite(stack).any(axis=0)
    lo = np.full(incident.n, np.nan)
    hi = np.full(incident.n, np.nan)
    mid = np.full(incident.n, np.nan)
    lo[finite] = np.nanmin(stack[:, finite], axis=0)
    hi[finite] = np.nanmax(stack[:, finite], axis=0)
    mid[finite] = np.nanmedian(stack[:, finite], axis=0)
    return PlotSeries(incident.times, observed, lo, hi, mid, tuple(names), others)
