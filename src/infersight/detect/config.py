"""DetectConfig: every threshold the detectors use, with the reasoning behind its default.

The streaming detectors' own settings are `StreamConfig` (stream_config.py), one field here.

Durations are in grid points (a 15 s grid turns 4 points into one minute); levels are in the
signal's own unit (seconds, ratio 0–1, bytes, °C, MHz, …) as normalised at the edge.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from infersight.detect.stream_config import StreamConfig
from infersight.signals import all_signals

#: Absolute change a deviation must exceed, per unit. Chosen so that a change smaller than this
#: is not worth a human's attention whatever the statistics say.
DEFAULT_ABS_FLOORS: dict[str, float] = {
    "s": 0.005,  # 5 ms
    "ratio": 0.10,  # 10 percentage points (ratios use this instead of a relative floor)
    "bytes": 64 * 2**20,  # 64 MiB
    "celsius": 5.0,
    "MHz": 100.0,
    "W": 25.0,
    "count": 2.0,
    "per_s": 0.05,
    "cores": 0.25,
    "code": 0.5,  # any change of an error code
}

#: Units whose relative floor differs from rel_floor: ratios rely on their absolute floor; a
#: clock 20% under nominal or a GPU 10 °C hotter is already trouble (seed §4.2).
DEFAULT_UNIT_REL_FLOORS: dict[str, float] = {
    "ratio": 0.0,
    "MHz": 0.1,
    "celsius": 0.1,
    "W": 0.2,
    "code": 0.0,
}

#: The least scale of a band as a share of the level, per unit, where `mad_floor_rel` (5%)
#: would make the z test ask for more than the unit's own floor. An SM clock under load holds
#: within a few per cent of its boost level, and throttling pulls it 10–40% lower (seed §4.2):
#: with a 5% floor a steady clock needed a 20% drop to reach z 4 (an 18% drop read z 3.7);
#: 2.5% lets the unit's 10% floor decide. Temperature and power follow the load by tens of
#: per cent over a day and keep the general floor.
DEFAULT_UNIT_SCALE_FLOORS: dict[str, float] = {"MHz": 0.025}

#: Per-signal facts live in catalog/signals.yaml (`abs_floor`, `trend`, `load`, `user_facing`):
#: these are the defaults they give.
DEFAULT_SIGNAL_ABS_FLOORS: dict[str, float] = {
    s.name: s.abs_floor for s in all_signals().values() if s.abs_floor is not None
}
DEFAULT_TREND_SIGNALS: tuple[str, ...] = tuple(s.name for s in all_signals().values() if s.trend)

#: Minimum change over the fitted span for a trend to be worth reporting, per unit.
DEFAULT_TREND_FLOORS: dict[str, float] = {
    "ratio": 0.02,
    "bytes": 32 * 2**20,
}

DEFAULT_LOAD_SIGNALS: tuple[str, ...] = tuple(s.name for s in all_signals().values() if s.load)
DEFAULT_DEMAND_SIGNALS: tuple[str, ...] = tuple(s.name for s in all_signals().values() if s.demand)
DEFAULT_BURST_RIDERS: tuple[str, ...] = tuple(
    s.name for s in all_signals().values() if s.rides_bursts
)
DEFAULT_USER_FACING: tuple[str, ...] = tuple(
    s.name
    for s in sorted(all_signals().values(), key=lambda s: s.user_facing or 0)
    if s.user_facing is not None
)


class DetectConfig(BaseModel):
    """Settings of every detector. The defaults are meant for real, noisy 15 s–5 min data."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # -- deviation from baseline ------------------------------------------------------------
    rel_floor: float = Field(
        0.4, ge=0, description="Minimum relative change |x - baseline| / |baseline| (not ratios)."
    )
    unit_rel_floors: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_UNIT_REL_FLOORS),
        description="Relative floor per unit where rel_floor does not fit (ratios, clocks, °C).",
    )
    abs_floors: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_ABS_FLOORS),
        description="Minimum absolute change per unit; unknown units/signals use 0.",
    )
    signal_abs_floors: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_SIGNAL_ABS_FLOORS),
        description="Per-signal overrides of the unit floor.",
    )
    z_threshold: float = Field(4.0, gt=0, description="Minimum robust z (deviation / scale).")
    mad_floor_rel: float = Field(
        0.05, ge=0, description="Scale is at least this fraction of |baseline| (flat lines)."
    )
    unit_scale_floors: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_UNIT_SCALE_FLOORS),
        description="mad_floor_rel per unit where a steady series is steadier than 5%.",
    )
    mad_floor_abs: float = Field(
        0.25, ge=0, description="Scale is at least this fraction of the absolute floor."
    )
    min_points: int = Field(
        4, ge=1, description="Anomalous points needed within a sustain window to count."
    )
    sustain_window: int = Field(
        5, ge=1, description="Sliding window (points) in which min_points must be anomalous."
    )
    load_signals: tuple[str, ...] = DEFAULT_LOAD_SIGNALS
    load_min_duration_s: float = Field(
        900.0, ge=0, description="How long a load-following signal must deviate (bursts pass)."
    )
    demand_signals: tuple[str, ...] = DEFAULT_DEMAND_SIGNALS
    burst_riders: tuple[str, ...] = DEFAULT_BURST_RIDERS
    load_sustain_fraction: float = Field(
        0.75, gt=0, le=1, description="Share of that duration that must be anomalous."
    )
    block_points: int = Field(8, ge=1, description="Baseline band resolution in points.")
    local_half_width: int = Field(
        8, ge=0, description="Extra baseline points pooled on each side of a block (time-local)."
    )
    edge_z: float = Field(
        3.0,
        ge=0,
        description="Where the references' own point-aligned level (median of 3 neighbours, "
        "median across windows) departs from the block median by more than this many scales, "
        "the centre follows the references point by point: a daily edge that yesterday and last "
        "week had at this clock time is expected, also at the newest points (NAB's "
        "art_daily_no_noise, 24-point windows: 84 flagged rows before, none after). 3 scales, "
        "not 2: a 3-point median of noise passes 2 scales often enough to shift the band on "
        "one series in a hundred. 0 turns it off.",
    )
    min_ref_points: int = Field(
        6, ge=1, description="Baseline points a block needs; fewer falls back to pre-onset."
    )
    derive_from_incident: bool = Field(
        True,
        description="When a baseline window is missing but the incident window is long enough, "
        "take the same lag from the incident window itself (self-1h, self-1d, self-7d).",
    )
    fallback_fraction: float = Field(
        0.3, gt=0, lt=1, description="Early share of the window used as pre-onset reference."
    )
    fallback_min_points: int = Field(8, ge=2, description="Minimum pre-onset reference length.")
    fallback_weight: float = Field(
        0.5, gt=0, le=1, description="Score multiplier for findings against pre-onset reference."
    )
    z_cap: float = Field(50.0, gt=0, description="Robust z is capped here before scoring.")

    stream: StreamConfig = Field(
        default_factory=StreamConfig, description="The streaming detectors (`detect --follow`)."
    )

    # -- onset ------------------------------------------------------------------------------
    onset_search_points: int = Field(
        30, ge=2, description="Change-point search radius around the first sustained point."
    )
    cusum_clip: float = Field(3.0, gt=0, description="Residuals (in z) are clipped for CUSUM.")

    # -- trends -----------------------------------------------------------------------------
    trend_signals: tuple[str, ...] = DEFAULT_TREND_SIGNALS
    trend_floors: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_TREND_FLOORS))
    trend_rel_floor: float = Field(
        0.02, ge=0, description="Change over the span must exceed this share of the level."
    )
    trend_recent_share: float = Field(
        0.5,
        gt=0,
        lt=1,
        description="The latest share of the window is fitted on its own too: a leak that began "
        "inside the window climbs only there. Half: enough points for a monotone fit at 60 s.",
    )
    trend_recent_faster: float = Field(
        1.5,
        gt=1,
        description="Where the whole window holds a trend too, the latest share's fit is used "
        "when its pace is this many times the window's: time to exhaustion is at the pace of "
        "now (a leak begun mid-window averages to about half its pace over the window).",
    )
    trend_daily_carry: float = Field(
        0.5,
        gt=0,
        lt=1,
        description="A climb shaped like yesterday's at the same hour is the daily cycle unless "
        "today sits at least this share of a day's climb at its pace above yesterday: a leak "
        "carries its climb over the night, a cycle falls back (a step on top of the cycle, "
        "another process arriving, is not a day's climb). Half: midway between the two.",
    )
    trend_subsample: int = Field(48, ge=8, description="Points used by Theil–Sen (pairs²/2).")
    trend_min_points: int = Field(12, ge=4, description="Valid points needed for a trend.")
    trend_min_tau: float = Field(
        0.6, gt=0, le=1, description="Minimum Kendall tau (monotone enough)."
    )
    trend_min_mk_z: float = Field(
        4.0, gt=0, description="Minimum Mann–Kendall z (high: real series are autocorrelated)."
    )
    trend_noise_k: float = Field(
        3.0, ge=0, description="Change over the span must exceed this × residual noise."
    )
    capacities: dict[str, float] = Field(
        default_factory=dict,
        description="Capacity per signal for time to exhaustion (bytes signals); ratios use 1.",
    )

    # -- fleet ------------------------------------------------------------------------------
    fleet_min_size: int = Field(3, ge=3, description="Instances in a peer group to compare.")
    fleet_z_threshold: float = Field(4.0, gt=0, description="Robust z across peers.")
    fleet_min_fraction: float = Field(
        0.25, gt=0, le=1, description="Share of the instance's points that must be outlying."
    )

    # -- absence ----------------------------------------------------------------------------
    absent_min_points: int = Field(
        4, ge=1, description="Missing tail / target down points before absence is evidence."
    )
    absent_lookback_s: float = Field(
        300.0, ge=0, description="Staleness window of the source (Prometheus: 5 min)."
    )
    absent_score: float = Field(8.0, gt=0, description="Score of an absence finding.")

    # -- scope ------------------------------------------------------------------------------
    user_facing: tuple[str, ...] = DEFAULT_USER_FACING
    cluster_share: float = Field(
        0.5, gt=0, le=1, description="Share of instances anomalous for 'cluster'."
    )
    continuous_fraction: float = Field(
        0.7, gt=0, le=1, description="Post-onset anomalous share for 'continuous'."
    )
    partial_error_ratio: float = Field(
        0.5, gt=0, le=1, description="Error ratio below this means part of the requests fail."
    )

    def sustain_for(self, signal: str, step: float) -> tuple[int, int]:
        """(min_points, window) of the sustain rule for this signal on this grid."""
        if signal in self.load_signals and step > 0:
            w = max(self.sustain_window, round(self.load_min_duration_s / step))
            return max(self.min_points, int(np.ceil(self.load_sustain_fraction * w))), w
        return self.min_points, self.sustain_window

    def abs_floor(self, signal: str, unit: str | None) -> float:
        if signal in self.signal_abs_floors:
            return self.signal_abs_floors[signal]
        return self.abs_floors.get(unit or "", 0.0)

    def rel_floor_for(self, unit: str | None) -> float:
        return self.unit_rel_floors.get(unit or "", self.rel_floor)

    def scale_floor_rel(self, unit: str | None) -> float:
        """The least scale of a band, as a share of its level (`unit_scale_floors`, else
        `mad_floor_rel`)."""
        return self.unit_scale_floors.get(unit or "", self.mad_floor_rel)
