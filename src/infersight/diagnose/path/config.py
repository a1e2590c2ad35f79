"""PathConfig: the request-path walk's constants, each with the reason for its default."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class PathConfig(BaseModel):
    """The walk's constants. Frozen: one diagnosis reads one set throughout."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    more_work: float = Field(
        1.25,
        gt=1.0,
        description="Arrivals at least this many times what they were are more work. By the "
        "utilisation law a server's busy share grows in proportion, and its queueing delay "
        "grows as ρ/(1−ρ): a quarter more work on a server half busy lengthens its queue by "
        "two thirds. A lost peer's share on the survivors of four is a third.",
    )
    step_ratio: float = Field(
        1.25,
        gt=1.0,
        description="A shift of the median since the onset against the median before, by this "
        "ratio, is a change even where detection's band (built for alerting, and wide on "
        "signals that swing with demand) does not call it one: the walk asks what moved at "
        "the onset, not whether it would page someone. Beyond the noise as `rose`/`fell` "
        "read it (`DiagnoseConfig.shift_z`, `shift_min_before`).",
    )
    retries_max_factor: float = Field(
        3.0,
        gt=1.0,
        description="Retries raise a part's arrivals at most this many times what its users "
        "send: clients resend a failed request a few times at most (the OpenAI Python "
        "client's default max_retries is 2, gRPC's retry policy caps maxAttempts at 5 and "
        "backs off between them), so three times the work is every request failing and "
        "sent twice more. Work that grew more came from the users.",
    )
    per_unit_slack: float = Field(
        2.0,
        gt=1.0,
        description="More work explains a busy share or a resource's use (CPU, paging, a "
        "disk's wait) only up to this many times the rise of the work itself: by the "
        "utilisation law they grow in proportion, and twice that allows for a server near "
        "saturation. Paging that rose a thousandfold under a third more searches ran short "
        "on its own.",
    )
    card_full: float = Field(
        0.9,
        gt=0,
        le=1,
        description="A card whose memory rose to this share or more has no headroom left for "
        "the peaks of its batches (seed §3.2 wants 20–30%): allocations fail and work is "
        "preempted, so it slows and fails what runs on it.",
    )
    onset_slack_s: float = Field(
        300.0,
        ge=0,
        description="A cause may be dated this much later than its effect and still explain it: "
        "detection dates a slow ramp (a hit ratio sliding over ten minutes) later than the sharp "
        "change it brings downstream, as `DiagnoseConfig.peak_lead_s` allows for peaks. Beyond "
        "it, a cause does not start after its effect.",
    )
    unfelt_min_score: float = Field(
        8.0,
        ge=0,
        description="Where no user-facing change starts a walk, a change this strong in a "
        "part's time, queue, errors or availability starts one: as strong as the unexplained "
        "change that makes a diagnosis 'not healthy' (`DiagnoseConfig.unhealthy_shift`), so a "
        "window that is not healthy always names where it began.",
    )
    unnamed_min_score: float = Field(
        2.0,
        ge=0,
        description="An end no rule names is reported as a root only where its node changed at "
        "least this much (its strongest change): a faint wobble at the end of a walk is no "
        "cause.",
    )
    unnamed_max_signals: int = Field(
        6,
        ge=1,
        description="An unnamed root lists at most this many of its node's changes, earliest "
        "and largest first: enough to tell mechanisms apart, few enough to read.",
    )
    redate_lookback_s: float = Field(
        3600.0,
        ge=0,
        description="How far before detection's onset a change's first sign is looked for: a "
        "band test can date a small shift late by as long as its sustain and smoothing take; "
        "an hour covers the window's own span.",
    )
    idle_share: float = Field(
        0.01,
        gt=0,
        lt=1,
        description="A replica whose request rate stays under this share of its busiest peer's, "
        "before and since the onset, serves nothing: out of rotation since before the window "
        "(a replica at 1% of its peers' traffic takes no real share).",
    )
    idle_score: float = Field(
        5.0,
        gt=0,
        description="The strength given to a replica out of rotation all window: a standing "
        "state has no deviation to measure, and it is as plain as a strong one.",
    )
