"""Fleet outliers: each instance against its peers at the same moment (seed §4.2).

"The fleet is at 200 ms, one machine at 350 ms." Peers are the instances carrying the signal,
split by `peer_groups` (instance → model / GPU type / role) when given. At every point the
peers' median and MAD give a band; an instance outside it, in the bad direction, past the same
relative/absolute floors as a deviation, for a sustained run covering at least
`fleet_min_fraction` of its points, is named with its value, the fleet's, and the ratio.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from infersight.detect import onset as onset_mod
from infersight.detect._stats import (
    MAD_TO_SIGMA,
    BoolArray,
    FloatArray,
    finite_or_none,
    median_mad_sorted,
    nanmedian,
    sustained,
    valid_count,
)
from infersight.detect.config import DetectConfig
from infersight.detect.result import Sign
from infersight.frame import MetricFrame
from infersight.units import format_value

UNGROUPED = ""


@dataclass(frozen=True)
class FleetOutlier:
    signal: str
    layer: str
    instance: str
    group: str | None
    value: float  # the instance's median over its outlying points
    fleet_value: float  # the peers' median over the same points
    ratio: float | None
    z: float
    fraction: float  # share of the instance's points that are outlying
    peers: int
    onset: float
    onset_uncertainty_s: float
    direction: Sign
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "signal": self.signal,
            "layer": self.layer,
            "instance": self.instance,
            "group": self.group,
            "value": self.value,
            "fleet_value": self.fleet_value,
            "ratio": finite_or_none(self.ratio),
            "z": finite_or_none(self.z),
            "fraction": self.fraction,
            "peers": self.peers,
            "onset": self.onset,
            "onset_uncertainty_s": self.onset_uncertainty_s,
            "direction": self.direction,
            "detail": self.detail,
        }


def default_peer_groups(frame: MetricFrame) -> dict[str, str]:
    """Peers by role: instances exposing the same set of non-infrastructure signals.

    GPU nodes running one engine export the same service/inference signals; a vector-DB host, a
    cache or a gateway exports others, so it is never compared with the GPU nodes on the host
    signals they share (CPU, memory). An instance that serves no requests has no latency or
    error *ratio* (nothing to divide by), so its set is a subset of its busy peers': a set that
    covers at least half of a larger one joins it (an idle node is the outlier to find, not a
    role of its own). The label is internal and never shown.
    """
    sig: dict[str, set[str]] = {}
    for name, series in frame.series.items():
        role = not name.startswith("infra.")
        has = np.any(~np.isnan(series.values), axis=1)
        for inst, ok in zip(series.instances, has, strict=True):
            bucket = sig.setdefault(inst, set())
            if role and ok:
                bucket.add(name)
    # largest sets first, ties by name (not by hash order: the grouping is reproducible); the
    # last wider set seen is the smallest one
    root: dict[frozenset[str], frozenset[str]] = {}
    for s in sorted({frozenset(v) for v in sig.values()}, key=lambda n: (-len(n), sorted(n))):
        wider = [big for big in root if s < big and 2 * len(s) >= len(big)]
        root[s] = root[wider[-1]] if wider else s
    return {inst: "role:" + ",".join(sorted(root[frozenset(v)])) for inst, v in sig.items()}


def _groups(
    instances: tuple[str, ...], peer_groups: Mapping[str, str] | None
) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, inst in enumerate(instances):
        g = peer_groups.get(inst, UNGROUPED) if peer_groups is not None else UNGROUPED
        out.setdefault(g, []).append(i)
    return out


def detect_fleet(
    signal: str,
    layer: str,
    unit: str | None,
    bad: str,
    instances: tuple[str, ...],
    t: FloatArray,
    x: FloatArray,
    abs_floor: float,
    rel_floor: float,
    cfg: DetectConfig,
    peer_groups: Mapping[str, str] | None = None,
    *,
    show_group: bool = True,
    group_cache: dict[tuple[str, ...], dict[str, list[int]]] | None = None,
) -> tuple[list[FleetOutlier], BoolArray]:
    """Outliers of one signal and the sustained outlier mask (rows × n) used by scope.

    group_cache: filled and reused across calls with the same `peer_groups` (by instances).
    """
    rows, n = x.shape
    mask = np.zeros((rows, n), dtype=bool)
    found: list[FleetOutlier] = []
    step = float(t[1] - t[0]) if n > 1 else 0.0
    if group_cache is None:
        groups = _groups(instances, peer_groups)
    else:  # signals of one frame share their instance tuples
        groups = group_cache.get(instances) or group_cache.setdefault(
            instances, _groups(instances, peer_groups)
        )
    for group, idx in groups.items():
        if len(idx) < cfg.fleet_min_size:
            continue
        g = x if len(idx) == rows else x[idx]  # one group of all rows: no copy
        gs = np.sort(g.T, axis=-1)  # per point, the peers' values sorted (NaN last)
        count = valid_count(gs)
        med, mad = median_mad_sorted(gs, count)
        typical = float(nanmedian(mad[None, :])[0]) if n else 0.0
        scale = np.fmax(MAD_TO_SIGMA * mad, MAD_TO_SIGMA * typical)
        floor = np.maximum(cfg.scale_floor_rel(unit) * np.abs(med), cfg.mad_floor_abs * abs_floor)
        scale = np.fmax(np.fmax(scale, floor), 1e-12)
        delta = g - med[None, :]
        d = delta if bad == "up" else -delta if bad == "down" else np.abs(delta)
        with np.errstate(invalid="ignore"):
            z = d / scale[None, :]
            flags = (
                (z >= cfg.fleet_z_threshold)
                & (d >= abs_floor)
                & (d >= rel_floor * np.abs(med)[None, :])
                & (d > 0)
                & (count >= cfg.fleet_min_size)[None, :]
            )
        flags &= ~np.isnan(z)
        sus = sustained(flags, cfg.min_points, cfg.sustain_window)
        valid = np.count_nonzero(~np.isnan(g), axis=1)
        frac = sus.sum(axis=1) / np.maximum(valid, 1)
        for r in np.flatnonzero(frac >= cfg.fleet_min_fraction):
            row = idx[r]
            on = onset_mod.estimate(
                z[r],
                sus[r],
                g[r],
                z_threshold=cfg.fleet_z_threshold,
                search=cfg.onset_search_points,
                clip=cfg.cusum_clip,
                max_back=cfg.sustain_window,
            )
            if on is None:
                continue
            mask[row] = sus[r]
            pts = sus[r]
            value = float(np.median(g[r, pts]))
            fleet = float(np.median(med[pts]))
            ratio = value / fleet if fleet != 0 else None
            sgn: Sign = "up" if value >= fleet else "down"
            peers = int(np.median(count[pts])) - 1
            rtxt = f", {ratio:.2f}×" if ratio is not None else ""
            named = show_group and group != UNGROUPED
            gtxt = f" ({group})" if named else ""
            detail = (
                f"{instances[row]} at {format_value(value, unit)} where the fleet{gtxt} is at "
                f"{format_value(fleet, unit)}{rtxt}, {peers} peers, {frac[r]:.0%} of the window"
            )
            found.append(
                FleetOutlier(
                    signal=signal,
                    layer=layer,
                    instance=instances[row],
                    group=group if named else None,
                    value=value,
                    fleet_value=fleet,
                    ratio=ratio,
                    z=float(np.median(z[r, pts])),
                    fraction=float(frac[r]),
                    peers=peers,
                    onset=float(t[on.index]),
                    onset_uncertainty_s=on.uncertainty_s(step),
                    direction=sgn,
                    detail=detail,
                )
            )
    return found, mask
