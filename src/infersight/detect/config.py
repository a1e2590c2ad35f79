"""DetectConfig: every threshold the detectors use, with the reasoning behind its default.

Durations are in grid points (a 15 s grid turns 4 points into one minute); levels are in the
signal's own unit (seconds, ratio 0–1, bytes, °C, MHz, …) as normalised at the edge.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

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


class StreamConfig(BaseModel):
    """Settings of the streaming detectors (`detect/stream.py`): one series, one point at a time.

    Durations are in seconds where they are clock time (seasons, the hour before) and in points
    where they count evidence. The defaults were chosen once on the whole NAB corpus (bench/nab.py)
    and are used unchanged for every series. NAB figures quoted beside a field are from those
    tuning runs, made before rows with repeated daylight-saving stamps were fed in time order
    (which added about 2 points to each profile); the current figures are in docs/benchmarks.md.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    recent_s: float = Field(
        3600.0,
        gt=0,
        description="The hour before: the recent level is the median of this span of points "
        "(seed §6.1 'the last hour').",
    )
    recent_min_points: int = Field(
        3, ge=1, description="Least points in the recent level (hourly data still gets a median)."
    )
    recent_max_points: int = Field(
        12,
        ge=1,
        description="Most points in the recent level: a median of 12 follows a new level within "
        "6 points, slow enough that a shift stands out, fast enough to stop re-flagging it.",
    )
    season_half_width_s: float = Field(
        600.0,
        ge=0,
        description="Same clock time yesterday / last week is the median of ±this around the lag: "
        "10 min absorbs a cron job that runs a scrape or two late.",
    )
    error_points: float = Field(
        288.0,
        gt=1,
        description="Memory (points) of each predictor's mean absolute error, which both picks "
        "the predictor and sets the band's width: a day of 5-min points, so the width is learnt "
        "from the series' own recent history, not a fixed floor.",
    )
    min_error_points: int = Field(
        24,
        ge=1,
        description="Points a seasonal predictor must have been scored on before it may be used "
        "(so yesterday is trusted only once it has predicted well for a while).",
    )
    warmup_points: int = Field(
        30, ge=2, description="Points seen before any score: the band needs a history."
    )
    clip_z: float = Field(
        4.0,
        gt=0,
        description="Errors are clipped at this many band widths before they update the width, "
        "so an incident widens the band only slowly and a spike not at all.",
    )
    shift_points: int = Field(
        6,
        ge=2,
        description="Level shift: the mean of the last this many points against the mean of the "
        "2× as many before them, in band widths. Six 5-min points: a 3-sigma shift is "
        "reportable within 20 minutes.",
    )
    drift_points: int = Field(
        36,
        ge=2,
        description="A slower level shift: the same test over this many points (3 h of 5-min "
        "points), for changes the recent level half follows.",
    )
    shift_clip_z: float = Field(
        3.0,
        gt=0,
        description="Points are clipped at ±this many band widths for the shift tests, so one "
        "spike cannot pass them.",
    )
    variance_points: int = Field(
        12,
        ge=3,
        description="Variance change: mean of z² over this many points against χ² with as many "
        "degrees of freedom (Wilson–Hilferty).",
    )
    variance_clip_z: float = Field(
        4.0, gt=0, description="z is clipped here for the variance test (a spike stays a spike)."
    )
    tail_points: int = Field(
        4032,
        ge=50,
        description="How rare a spike / shift / variance statistic is, is judged against the "
        "series' own last this many values of it (two weeks of 5-min points, two weekly "
        "cycles): what is usual for a bursty series is not a page, and the same likelihood "
        "means the same rarity everywhere. On NAB 2016 scored 55.1 / 47.4 (standard / low FP) "
        "and let one chance report through on art_noisy; 4032 scored 56.5 / 50.1 with none.",
    )
    tail_share: float = Field(
        0.005,
        gt=0,
        lt=0.5,
        description="Above its (1 − this) quantile a statistic's rarity follows an exponential "
        "tail fitted to the excesses (peaks over threshold), so it keeps growing past the "
        "history. The top 0.5% (20 of 4032 values) follow the far tail more closely than the top "
        "2% (NAB standard 61.8 against 53.6 at the same reporting level).",
    )
    tail_min_scale_z: float = Field(
        0.25,
        gt=0,
        description="The fitted tail of a z statistic decays no faster than e-fold per this many "
        "z: on a flat history a change is rare by its size, finitely, so likelihood keeps "
        "ranking instead of saturating at 1.",
    )
    range_min_scale: float = Field(
        0.1,
        gt=0,
        description="The same floor for the value-range statistics, as a share of the band "
        "width (on NAB a whole width scored 53.9 standard, 0.1 scored 57.0, 0.01 56.9).",
    )
    tail_min_excess: int = Field(
        10,
        ge=1,
        description="The fitted tail uses at least this many top values: 0.5% of a short "
        "history is a handful of points, too few to fit a tail on. A trade measured once: on "
        "NAB 1 / 5 / 10 / 20 scored 62.6 / 59.7 / 56.5 / 53.5 (standard), and on 61,200 points "
        "of pure noise (Gaussian, t3, exponential) 5 / 10 / 20 reported 21 / 17 / 13 times, "
        "the chance rate the reporting level implies (6 statistics × 3e-5).",
    )
    tail_min_points: int = Field(
        100,
        ge=10,
        description="Values of each statistic seen before its rarity is trusted (no score before).",
    )
    report_surprise: float = Field(
        4.5,
        gt=0,
        description="A point is reported when −log10 of its rarity reaches this (likelihood ≥ "
        "1 − 3.2e-5). On NAB's five no-anomaly series the highest surprise after probation is "
        "4.26 (art_noisy), so none reports; 4.0 let one chance report through there, and 5.0 "
        "scored 57.2 standard against 61.8.",
    )
    rearm_points: int = Field(
        12,
        ge=1,
        description="After a report the series is quiet for this many points (likelihood under "
        "0.99) before it may report again: one incident pages once.",
    )
    hold_points: int = Field(
        72,
        ge=0,
        description="...and at least this many points have passed since the report (6 h of "
        "5-min points): an incident's aftershocks are one finding, not a page per hour. On NAB "
        "12 points scored 50.1 and 144 points 51.6 where 72 scored 53.6.",
    )
    rearm_surprise: float = Field(
        2.0, ge=0, description="'Quiet' is −log10 tail under this (likelihood < 0.99)."
    )
    resolution_share: float = Field(
        0.5,
        gt=0,
        description="The band is never narrower than this share of the series' resolution (its "
        "smallest non-zero step), so a flat line does not turn a rounding step into a page.",
    )
    level_share: float = Field(
        1e-3,
        ge=0,
        description="...nor narrower than this share of the level (|expected|): 0.1% of a value.",
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
