"""detect(): every detector over one incident window and its baselines, one typed result."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from infersight.detect import onset as onset_mod
from infersight.detect._stats import BoolArray, FloatArray, masked_median
from infersight.detect.absence import ANSWERING, detect_absent
from infersight.detect.baseline import (
    PRE_ONSET,
    STANDARD_BASELINES,
    Band,
    Deviation,
    Reference,
    band,
    derivable,
    deviation,
    references,
)
from infersight.detect.config import DetectConfig
from infersight.detect.demand import burst_followers, raised
from infersight.detect.fleet import FleetOutlier, default_peer_groups, detect_fleet
from infersight.detect.result import Anomaly, DetectionResult, Sign
from infersight.detect.scope import (
    ScopeEntry,
    ScopeSignal,
    post_onset,
    post_share,
    summarize_signal,
    triage,
)
from infersight.detect.slow_climb import slow_climbs
from infersight.detect.trend import Trend, detect_trends
from infersight.frame import MetricFrame, SignalSeries
from infersight.readings import readable
from infersight.signals import all_signals
from infersight.units import format_duration, format_value

INCIDENT = "incident"
UNKNOWN_LAYER = "unknown"


@dataclass(frozen=True)
class _Meta:
    layer: str
    unit: str | None
    bad: str


def _meta(signal: str) -> _Meta | None:
    s = all_signals().get(signal)
    return None if s is None else _Meta(s.layer.value, s.unit, s.bad)


def _cut(frame: MetricFrame, n: int) -> MetricFrame:
    if frame.n <= n:
        return frame
    series = {k: SignalSeries(v.instances, v.values[:, :n]) for k, v in frame.series.items()}
    return MetricFrame(frame.start, frame.step, n, series)


def _deviation_anomalies(
    signal: str,
    meta: _Meta,
    instances: tuple[str, ...],
    t: FloatArray,
    x: FloatArray,
    refs: list[Reference],
    bd: Band,
    dev: Deviation,
    abs_floor: float,
    rel_floor: float,
    cfg: DetectConfig,
) -> list[tuple[Anomaly, int]]:
    """One anomaly per row with a sustained deviation, with the onset's grid index."""
    out: list[tuple[Anomaly, int]] = []
    step = float(t[1] - t[0]) if t.size > 1 else 0.0
    rows = np.flatnonzero(dev.sustained.any(axis=1))
    # the medians over each row's sustained points, all rows at once (one sort each)
    held = dev.sustained[rows]
    observed, centre = masked_median(x[rows], held), masked_median(bd.center[rows], held)
    zs, signed = masked_median(dev.z[rows], held), masked_median(dev.signed[rows], held)
    fell_back = np.count_nonzero(bd.fallback[rows] & held, axis=1) / held.sum(axis=1)
    for j, r in enumerate(rows):
        on = onset_mod.estimate(
            dev.z[r],
            dev.sustained[r],
            x[r],
            z_threshold=cfg.z_threshold,
            search=cfg.onset_search_points,
            clip=cfg.cusum_clip,
            max_back=cfg.sustain_window,
        )
        if on is None:
            continue
        pts = dev.sustained[r]
        obs, base = float(observed[j]), float(centre[j])
        ratio = obs / base if base != 0 else None
        z = min(float(zs[j]), cfg.z_cap)
        effect = abs(obs - base) / max(rel_floor * abs(base), abs_floor, 1e-12)
        weak = bool(fell_back[j] > 0.5)
        score = float(np.sqrt(z * min(effect, cfg.z_cap)))
        if weak:
            score *= cfg.fallback_weight
            used: tuple[str, ...] = (PRE_ONSET,)
        else:
            used = tuple(ref.name for ref in refs if np.any(~np.isnan(ref.values[r, pts])))
            used = used or tuple(ref.name for ref in refs if np.any(~np.isnan(ref.values[r])))
        sign: Sign
        if meta.bad in ("up", "down"):
            sign = "up" if meta.bad == "up" else "down"
        else:
            sign = "up" if signed[j] >= 0 else "down"
        valid = ~np.isnan(x[r])
        frac = post_share(dev.flags[r], valid, on.index)
        rtxt = f"{ratio:.2f}×, " if ratio is not None else ""
        detail = (
            f"{instances[r]}: {signal} at {format_value(obs, meta.unit)} vs "
            f"{format_value(base, meta.unit)} ({rtxt}z {z:.1f}) against {', '.join(used)}"
        )
        anomaly = Anomaly(
            signal=signal,
            layer=meta.layer,
            instance=instances[r],
            kind="deviation",
            onset=float(t[on.index]),
            onset_uncertainty_s=on.uncertainty_s(step),
            direction=sign,
            score=score,
            baseline=base,
            observed=obs,
            ratio=ratio,
            z=z,
            end=float(t[int(np.flatnonzero(pts)[-1])]),
            fraction=frac,
            baselines=used,
            weak=weak,
            detail=detail,
        )
        out.append((anomaly, on.index))
    return out


def _fleet_anomaly(f: FleetOutlier, cfg: DetectConfig) -> Anomaly:
    effect = abs((f.ratio or 1.0) - 1.0) / max(cfg.rel_floor, 1e-12)
    return Anomaly(
        signal=f.signal,
        layer=f.layer,
        instance=f.instance,
        kind="fleet_outlier",
        onset=f.onset,
        onset_uncertainty_s=f.onset_uncertainty_s,
        direction=f.direction,
        score=float(np.sqrt(min(f.z, cfg.z_cap) * min(max(effect, 1.0), cfg.z_cap))),
        baseline=f.fleet_value,
        observed=f.value,
        ratio=f.ratio,
        z=f.z,
        fraction=f.fraction,
        baselines=("fleet" if f.group is None else f"fleet:{f.group}",),
        detail=f.detail,
    )


def _pace(tr: Trend) -> str:
    """The pace in words and the signal's unit: climbing 307 MiB an hour."""
    meta = _meta(tr.signal)
    way = "climbing" if tr.slope_per_s > 0 else "falling"
    return f"{way} {format_value(abs(tr.slope_per_h), meta.unit if meta else None)} an hour"


def _trend_anomaly(tr: Trend, step: float) -> Anomaly:
    tte = tr.time_to_exhaustion_s
    txt = f", exhausted in {tte / 3600:.1f} h" if tte is not None else ""
    return Anomaly(
        signal=tr.signal,
        layer=tr.layer,
        instance=tr.instance,
        kind="trend",
        onset=tr.start,
        onset_uncertainty_s=max(step, tr.span_s),
        direction="up" if tr.slope_per_s > 0 else "down",
        score=float(min(abs(tr.mk_z), 50.0)),
        observed=tr.level,
        baseline=tr.level - tr.change,
        detail=f"{tr.instance}: {tr.signal} {_pace(tr)} over {format_duration(tr.span_s)}{txt}",
    )


def _byte_capacity(frame: MetricFrame, n: int) -> dict[str, float]:
    """GPU memory capacity per instance from bytes / ratio, when both are reported."""
    b = frame.get("inference.gpu_mem_used_bytes")
    r = frame.get("inference.gpu_mem_used_ratio")
    if b is None or r is None:
        return {}
    out: dict[str, float] = {}
    rpos = {inst: i for i, inst in enumerate(r.instances)}
    for i, inst in enumerate(b.instances):
        j = rpos.get(inst)
        if j is None:
            continue
        rr = r.values[j]
        with np.errstate(invalid="ignore", divide="ignore"):
            cap = b.values[i, :n] / rr[:n]
        cap = cap[np.isfinite(cap) & (rr[:n] > 0.05)]
        if cap.size:
            out[inst] = float(np.median(cap))
    return out


def _baseline_notes(
    incident: MetricFrame, baselines: Mapping[str, MetricFrame], cfg: DetectConfig
) -> tuple[tuple[str, ...], list[str]]:
    missing: list[str] = []
    notes: list[str] = []
    for name in STANDARD_BASELINES:
        b = baselines.get(name)
        if b is not None and b.points() > 0:
            if abs(b.step - incident.step) > 1e-9:
                notes.append(f"{name}: step {b.step} s differs from {incident.step} s; ignored")
                missing.append(name)
            continue
        if cfg.derive_from_incident and b is None and derivable(name, incident):
            notes.append(f"{name}: not given; taken from the incident window itself (self-)")
            continue
        missing.append(name)
        why = "empty" if b is not None else "not given"
        notes.append(f"{name}: {why}; unavailable")
    if len(missing) == len(STANDARD_BASELINES) and not any(
        k not in STANDARD_BASELINES for k in baselines
    ):
        notes.append(
            f"no baseline: series are compared to the first {cfg.fallback_fraction:.0%} of the "
            "window (pre-onset), weaker evidence"
        )
    return tuple(missing), notes


def detect(
    windows: Mapping[str, MetricFrame],
    *,
    at: float | None = None,
    config: DetectConfig | None = None,
    peer_groups: Mapping[str, str] | None = None,
) -> DetectionResult:
    """Run every detector on windows["incident"] against the other windows as baselines.

    at: the moment of interest (an alert); points after it are ignored. peer_groups:
    instance → group (model, GPU type) for fleet comparison; default: all instances.
    """
    cfg = config or DetectConfig()
    if INCIDENT not in windows:
        raise ValueError("detect needs an 'incident' window; got " + ", ".join(windows))
    windows = readable(windows)[0]  # ±Inf and magnitudes no metric reaches are gaps
    full = windows[INCIDENT]
    n = full.n if at is None else (full.index_of(at) + 1 if at >= full.start else 0)
    inc = _cut(full, n)
    baselines = {k: _cut(v, n) for k, v in windows.items() if k != INCIDENT}
    missing, notes = _baseline_notes(full, baselines, cfg)
    t = inc.times
    n_pre = max(cfg.fallback_min_points, int(cfg.fallback_fraction * n))
    capacity = _byte_capacity(inc, n)
    groups = peer_groups if peer_groups is not None else default_peer_groups(inc)
    group_cache: dict[tuple[str, ...], dict[str, list[int]]] = {}
    anomalies: list[Anomaly] = []
    trends: list[Trend] = []
    fleet: list[FleetOutlier] = []
    unknown: list[str] = []
    scope_flags: dict[str, tuple[SignalSeries, BoolArray, dict[str, tuple[int, float | None]]]] = {}
    demand_up: dict[str, BoolArray] = {}  # instance → points its demand was above its band
    followers: list[tuple[Anomaly, BoolArray, BoolArray]] = []  # deviations a burst may explain
    marks: list[tuple[Anomaly, BoolArray]] = []  # deviations no burst explains
    fallback_series = series_checked = 0
    for signal, s in inc.series.items():
        meta = _meta(signal)
        if meta is None:
            unknown.append(signal)
            meta = _Meta(UNKNOWN_LAYER, None, "both")
        if signal in ANSWERING or n < 2:
            continue
        x = s.values
        series_checked += x.shape[0]
        abs_floor = cfg.abs_floor(signal, meta.unit)
        rel_floor = cfg.rel_floor_for(meta.unit)
        refs = references(signal, s.instances, x, full, baselines, cfg)
        bd = band(x, refs, abs_floor, n_pre, cfg, meta.unit)
        fallback_series += int(np.count_nonzero(bd.fallback.mean(axis=1) > 0.5))
        sustain = cfg.sustain_for(signal, inc.step)
        dev = deviation(x, bd, meta.bad, abs_floor, rel_floor, cfg, sustain)
        found = _deviation_anomalies(
            signal, meta, s.instances, t, x, refs, bd, dev, abs_floor, rel_floor, cfg
        )
        anomalies.extend(a for a, _ in found)
        if signal in cfg.demand_signals:
            up = raised(x, bd, abs_floor, rel_floor, cfg)
            for r, inst in enumerate(s.instances):
                demand_up[inst] = demand_up[inst] | up[r] if inst in demand_up else up[r]
        elif signal not in cfg.load_signals:  # load signals: their own duration rule
            row_of = {inst: r for r, inst in enumerate(s.instances)}
            if signal in cfg.burst_riders:
                followers.extend(
                    (a, dev.sustained[row_of[a.instance]], dev.flags[row_of[a.instance]])
                    for a, _ in found
                )
            else:
                marks.extend((a, dev.sustained[row_of[a.instance]]) for a, _ in found)
        outliers, fmask = detect_fleet(
            signal, meta.layer, meta.unit, meta.bad, s.instances, t, x, abs_floor, rel_floor,
            cfg, groups, show_group=peer_groups is not None, group_cache=group_cache,
        )  # fmt: skip
        fleet.extend(outliers)
        anomalies.extend(_fleet_anomaly(f, cfg) for f in outliers)
        if signal in cfg.trend_signals:
            yest = next((r.values for r in refs if r.name in ("baseline-1d", "self-1d")), None)
            tr = detect_trends(
                signal, meta.layer, meta.unit, meta.bad, s.instances, t, x, yest, cfg,
                capacity if meta.unit == "bytes" else None,
            )  # fmt: skip
            seen = {x_.instance for x_ in tr}
            climbs = slow_climbs(
                signal, meta.layer, meta.unit, meta.bad, s.instances, x, baselines,
                inc.end, cfg, capacity if meta.unit == "bytes" else None,
            )  # fmt: skip
            tr += [c for c in climbs if c.instance not in seen]
            trends.extend(tr)
            anomalies.extend(_trend_anomaly(x_, inc.step) for x_ in tr)
        if signal in cfg.user_facing:
            onsets: dict[str, tuple[int, float | None]] = {
                a.instance: (i, a.observed) for a, i in found
            }
            for f in outliers:
                onsets.setdefault(f.instance, (inc.index_of(f.onset), f.value))
            scope_flags[signal] = (s, dev.flags | fmask, onsets)
    absent = detect_absent(
        inc, baselines, cfg, lambda s: (_meta(s) or _Meta(UNKNOWN_LAYER, None, "both")).layer
    )
    anomalies.extend(absent)
    stopped = {a.instance for a in absent}
    passed = burst_followers(followers, marks, demand_up, stopped, inc.step, cfg)
    if passed:
        followed = {(a.signal, a.instance) for a in anomalies if id(a) in passed}
        anomalies = [a for a in anomalies if id(a) not in passed]
        kept = {(f.signal, f.instance) for f in fleet}
        for name, (_series, _flags, onsets) in scope_flags.items():
            for who in [i for i in onsets if (name, i) in followed and (name, i) not in kept]:
                del onsets[who]
    sigs: list[ScopeSignal] = []
    for signal in cfg.user_facing:
        sf = scope_flags.get(signal)
        if sf is None:
            continue
        s, flags, onsets = sf
        entries = [
            ScopeEntry(
                inst, *post_onset(flags[r], ~np.isnan(s.values[r]), on, cfg.sustain_window), obs
            )
            for r, inst in enumerate(s.instances)
            if inst in onsets
            for on, obs in [onsets[inst]]
        ]
        gone = {a.instance for a in absent if a.signal == signal and a.instance not in onsets}
        entries.extend(ScopeEntry(inst, 1.0, 1, None) for inst in sorted(gone))
        sigs.append(summarize_signal(signal, len(s.instances), entries))
    anomalies.sort(key=lambda a: (-a.score, a.onset))
    trends.sort(key=lambda tr: (tr.time_to_exhaustion_s is None, tr.time_to_exhaustion_s or 0.0))
    fleet.sort(key=lambda f: -f.z)
    return DetectionResult(
        start=inc.start,
        end=inc.end,
        step=inc.step,
        anomalies=tuple(anomalies),
        trends=tuple(trends),
        fleet_outliers=tuple(fleet),
        scope=triage(sigs, cfg),
        unavailable_baselines=missing,
        baseline_notes=tuple(notes),
        fallback_series=fallback_series,
        signals_checked=len(inc.series),
        series_checked=series_checked,
        unknown_signals=tuple(unknown),
    )
