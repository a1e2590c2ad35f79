"""Absence is evidence: a target that goes down, or a series that stops while others go on.

Three findings, all of kind "absent":

* an availability flag (`answers` in signals.yaml: `infra.target_up`, an exporter's own
  `dependency.service_up` such as `redis_up`) below 0.5 for `absent_min_points` consecutive
  points, after being up (in the window or in a baseline) — the scrape target, or the service
  an exporter watches, is down;
* a series whose tail is NaN for at least `absent_min_points` points while the same signal's
  other instances, or the same instance's other signals, still report — it stopped;
* a series present in a baseline window but missing from the whole incident window while the
  signal or the instance otherwise reports — it is gone.

When every series ends together, the data ends; that is not a finding.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import numpy.typing as npt

from infersight.detect._stats import BoolArray, FloatArray, sustained
from infersight.detect.config import DetectConfig
from infersight.detect.onset import leading_gap
from infersight.detect.result import Anomaly
from infersight.frame import MetricFrame
from infersight.signals import answering

TARGET_UP = "infra.target_up"


#: the availability flags: 0 means the target, or the service an exporter watches, is down
ANSWERING: frozenset[str] = frozenset(answering()) | {TARGET_UP}


def _flags() -> frozenset[str]:
    return ANSWERING


def _alive(frame: MetricFrame) -> dict[str, BoolArray]:
    """Per instance: whether any of its signals (target_up aside) has data at each point."""
    pos: dict[str, int] = {}
    rows: dict[tuple[str, ...], npt.NDArray[np.intp]] = {}  # signals share instance tuples
    parts: list[tuple[npt.NDArray[np.intp], BoolArray]] = []
    flags = _flags()
    for name, s in frame.series.items():
        if name in flags:
            continue
        idx = rows.get(s.instances)
        if idx is None:
            idx = np.array([pos.setdefault(inst, len(pos)) for inst in s.instances], np.intp)
            rows[s.instances] = idx
        parts.append((idx, ~np.isnan(s.values)))
    acc = np.zeros((len(pos), frame.n), dtype=bool)
    for idx, ok in parts:
        acc[idx] |= ok  # instances are unique within a series
    return {inst: acc[i] for inst, i in pos.items()}


def _alive_without(frame: MetricFrame, signal: str, inst: str, lo: int, hi: int) -> bool:
    """Whether `inst` has data in [lo, hi) in a signal other than `signal` (and target_up)."""
    for name, s in frame.series.items():
        if name == signal or name in _flags():
            continue
        row = s.row(inst)
        if row is not None and np.any(~np.isnan(row[lo:hi])):
            return True
    return False


_WHAT = {TARGET_UP: "scrape target", "dependency.service_up": "service watched by the exporter"}


def _target_down(
    frame: MetricFrame,
    baselines: Mapping[str, MetricFrame],
    cfg: DetectConfig,
    layer: str,
    flag: str = TARGET_UP,
) -> list[Anomaly]:
    """`flag` below 0.5 for long enough after being up: what it watches stopped answering."""
    s = frame.get(flag)
    if s is None:
        return []
    out: list[Anomaly] = []
    t = frame.times
    with np.errstate(invalid="ignore"):
        down = s.values < 0.5
    run = sustained(down, cfg.absent_min_points, cfg.absent_min_points)
    for r in np.flatnonzero(run.any(axis=1)):
        inst = s.instances[r]
        i = int(np.argmax(run[r]))
        before: FloatArray = s.values[r, :i]
        was_up = bool(np.any(before >= 0.5))
        known_before = bool(np.any(~np.isnan(before)))
        for b in baselines.values():
            bs = b.get(flag)
            row = bs.row(inst) if bs is not None else None
            if row is not None and np.any(~np.isnan(row)):
                known_before = True
                was_up |= bool(np.any(row >= 0.5))
        if known_before and not was_up:
            continue  # down all along: a standing condition, not this incident
        weak = not known_before
        score = cfg.absent_score * (cfg.fallback_weight if weak else 1.0)
        out.append(
            Anomaly(
                signal=flag,
                layer=layer,
                instance=inst,
                kind="absent",
                onset=float(t[i]),
                onset_uncertainty_s=frame.step * (1 + leading_gap(s.values[r], i)),
                direction="down",
                score=score,
                baseline=1.0,
                observed=float(np.nanmin(s.values[r, i:])),
                end=float(t[int(np.flatnonzero(run[r])[-1])]),
                fraction=float(np.mean(down[r, i:])),
                weak=weak,
                detail=f"{_WHAT.get(flag, flag)} of {inst} down from point {i} "
                f"({int(down[r, i:].sum())} of {frame.n - i} points)",
            )
        )
    return out


def detect_absent(
    frame: MetricFrame,
    baselines: Mapping[str, MetricFrame],
    cfg: DetectConfig,
    layer_of: Callable[[str], str],
) -> list[Anomaly]:
    """Absence findings in `frame` (already cut to the analysed span)."""
    flags = _flags()
    out = [a for f in sorted(flags) for a in _target_down(frame, baselines, cfg, layer_of(f), f)]
    n, t = frame.n, frame.times
    if n == 0:
        return out
    alive: dict[str, BoolArray] | None = None  # read only where a baseline's series is gone
    lookback = max(frame.step, cfg.absent_lookback_s)
    seen: set[tuple[str, str]] = set()
    present: dict[str, BoolArray] = {}  # per signal, the rows with any data in the window
    for name, s in frame.series.items():
        if name in flags:
            continue
        ok = ~np.isnan(s.values)
        any_ok: BoolArray = np.any(ok, axis=1)
        present[name] = any_ok
        last = np.where(any_ok, n - 1 - ok[:, ::-1].argmax(axis=1), -1)
        for r in np.flatnonzero(any_ok & (n - 1 - last >= cfg.absent_min_points)):
            inst, lo = s.instances[r], int(last[r]) + 1
            if ok[r, :lo].sum() < 3:
                continue
            others = [k for k in range(len(s.instances)) if k != r]
            peers_on = sum(1 for k in others if ok[k, lo:].any())
            peer_ok = bool(others) and peers_on >= 0.5 * len(others)
            if not peer_ok and not _alive_without(frame, name, inst, lo, n):
                continue
            seen.add((name, inst))
            who = f"{peers_on} of {len(others)} peers" if peer_ok else "its other signals"
            out.append(
                Anomaly(
                    signal=name,
                    layer=layer_of(name),
                    instance=inst,
                    kind="absent",
                    onset=float(t[lo]),
                    onset_uncertainty_s=lookback,
                    direction="down",
                    score=cfg.absent_score,
                    baseline=float(s.values[r, lo - 1]),
                    observed=None,
                    end=float(t[-1]),
                    fraction=1.0,
                    detail=f"{name} of {inst} stopped reporting while {who} continue",
                )
            )
    # Present in a baseline, missing from the whole incident window.
    order = sorted(baselines.items(), key=lambda kv: -kv[1].start)  # most recent first
    for bname, b in order:
        for name, bs in b.series.items():
            if name in flags:
                continue
            cur = frame.get(name)
            had = np.any(~np.isnan(bs.values), axis=1)
            has: dict[str, bool] = {}
            cur_any = np.zeros(0, dtype=bool)
            if cur is not None:
                cur_any = present[name]
            others_on = bool(cur_any.any())
            if cur is not None and cur.instances == bs.instances:
                had &= ~cur_any  # present in the incident window: not gone
            elif cur is not None:
                has = dict(zip(cur.instances, cur_any.tolist(), strict=True))
            for rb in np.flatnonzero(had):
                inst = bs.instances[rb]
                if (name, inst) in seen or has.get(inst, False):
                    continue
                if alive is None:
                    alive = _alive(frame)
                inst_on = inst in alive and bool(alive[inst].any())
                if not (others_on or inst_on):
                    continue
                seen.add((name, inst))
                brow = bs.values[rb]
                last_b = int(np.flatnonzero(~np.isnan(brow))[-1])
                gap = frame.start - (b.start + last_b * b.step)
                weak = bname != order[0][0]
                out.append(
                    Anomaly(
                        signal=name,
                        layer=layer_of(name),
                        instance=inst,
                        kind="absent",
                        onset=frame.start,
                        onset_uncertainty_s=max(frame.step, gap),
                        direction="down",
                        score=cfg.absent_score * (cfg.fallback_weight if weak else 1.0),
                        baseline=float(brow[last_b]),
                        observed=None,
                        end=float(t[-1]),
                        fraction=1.0,
                        baselines=(bname,),
                        weak=weak,
                        detail=f"{name} of {inst} reported in {bname} but not in this window",
                    )
                )
    return out
