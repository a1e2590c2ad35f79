"""StreamConfig: the streaming detectors' settings, with the reasoning behind each default."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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
