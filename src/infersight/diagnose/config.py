"""DiagnoseConfig: every constant of the diagnosis engine, with the reason for its default.

`diagnose(..., config=)` takes one; `Context.config` carries it to the condition kinds, the
chain, the ranking, the fallback and the summary. Durations are in seconds; scores are on the
scale `rank.confidence` reads (detection's robust z × effect, saturating at
`score_saturation`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

#: σ of a normal distribution per median absolute deviation: a statistical identity, not a
#: setting
MAD_TO_SIGMA = 1.4826


class DiagnoseConfig(BaseModel):
    """The engine's constants. Frozen: one diagnosis reads one set throughout."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # -- where the incident begins --------------------------------------------------------
    tail_share: float = Field(
        0.3,
        gt=0,
        lt=1,
        description="Without any anomaly to date it, the incident part is the last share of "
        "the window.",
    )
    symptom_min_score: float = Field(
        3.0,
        ge=0,
        description="A user-facing anomaly this strong (detection's score: robust z × effect) "
        "dates the incident's onset and starts the request-path walk: a change too small to "
        "call an incident (a wobble hours before the alert) is not when it began, and has no "
        "cause to find.",
    )
    peak_lead_s: float = Field(
        300.0,
        ge=0,
        description="A peak compared with the one before the incident is 'before' up to this "
        "long before the onset: the onset is the users' symptom, and its cause's first "
        "readings come a sample or a few earlier (a second process's memory at 12:54, the "
        "latency out of its band at 12:55). Deviations that began earlier than this are sized "
        "on the incident's readings.",
    )
    settle_s: float = Field(
        300.0,
        ge=0,
        description="After a target was down, readings computed from counters are not trusted "
        "for peaks for this long (the default rate window): a counter that restarted and "
        "outgrew its old value before the next scrape hides its reset, and a ratio of two such "
        "rates (a mean batch size) can read far past anything that happened. Gauges are read "
        "as they are.",
    )
    event_lead_s: float = Field(
        1800.0,
        ge=0,
        description="`event` counts what happened from this long before the incident's onset: "
        "a cause begins before the users notice, and 'before' is what came earlier than that.",
    )

    # -- deviations -------------------------------------------------------------------------
    episode_gap_s: float = Field(
        900.0,
        gt=0,
        description="A deviation back under a condition's size this long has ended: a traffic "
        "bump served at 11:10 and gone by 11:25 does not date the surge of 11:40 that the "
        "users felt.",
    )
    incident_min_readings: int = Field(
        3,
        ge=1,
        description="An excursion is sized on the incident's readings only with at least this "
        "many of them.",
    )
    extreme_factor: float = Field(
        2.0,
        gt=1,
        description="`up`/`down` with `stat: max`/`min` without a `factor`: the extreme since "
        "the onset against the one before, by this ratio (a burst too short for a sustained "
        "deviation).",
    )

    # -- shifts (rose / fell) ---------------------------------------------------------------
    shift_z: float = Field(
        3.0,
        gt=0,
        description="`rose`/`fell`: the shift of the medians must exceed this many robust σ of "
        "single samples before the onset: conservative, a noisy signal needs more than "
        "`factor`.",
    )
    shift_min_before: int = Field(
        5,
        ge=2,
        description="`rose`/`fell`: fewer samples than this before the onset tell nothing of "
        "its noise, and the shift is not read.",
    )
    partial_shift: float = Field(
        0.5,
        gt=0,
        le=1,
        description="`rose`/`fell` on instances another condition pinned (where: same): a shift "
        "that went this share of its factor's way (in ratio terms: 1.2× asked, 1.095× seen), "
        "and beyond the noise, is weak support in a confirm. The anchor already found the cause "
        "there; how much its consequence shows is a matter of degree (a milder fault, a "
        "coarser scrape), not a yes or no. Never in a refute: weak evidence vetoes nothing.",
    )
    partial_score: float = Field(
        1.0,
        ge=0,
        description="The score of such a partial shift: as weak as a `normal` held.",
    )

    # -- when: together ---------------------------------------------------------------------
    together_s: float = Field(
        900.0,
        ge=0,
        description="`when: together`: changes on one instance this close in time began "
        "together (a second process brings its memory and its slowdown at once; a slowdown an "
        "hour before the memory rose is another story).",
    )

    # -- normal -------------------------------------------------------------------------------
    normal_shown: int = Field(
        3,
        ge=1,
        description="`normal` reports the first few instances it holds on, not all of a large "
        "fleet.",
    )

    # -- capacity (seed §3.3) -----------------------------------------------------------------
    capacity_share: float = Field(
        1.0,
        gt=0,
        le=1,
        description="Capacity states without `level`: the limit is held against the whole card.",
    )
    capacity_margin: float = Field(
        2.0,
        gt=1,
        description="Capacity states without `factor`: a 2× margin, `over_capacity` where the "
        "limit admits more than twice what the card holds.",
    )
    capacity_clipped: float = Field(
        0.97,
        gt=0,
        le=1,
        description="Samples with VRAM at or above this share of the card are clipped by an "
        "OOM, not a reading.",
    )
    capacity_down: float = Field(
        0.05,
        ge=0,
        lt=1,
        description="Below this share of the card the process is down or restarting: no "
        "request state to read.",
    )
    capacity_min_points: int = Field(
        10, ge=2, description="Fewer paired samples than this: no fit of VRAM per request."
    )
    capacity_min_spread: float = Field(
        1.0,
        gt=0,
        description="In-flight work that never moved by this many requests: no fit (the slope "
        "is noise).",
    )
    capacity_recommended_share: float = Field(
        0.8,
        gt=0,
        le=1,
        description="The seed's sizing keeps 20–30% of VRAM as headroom: the pool size "
        "recommended in evidence.",
    )
    capacity_max_points: int = Field(
        400,
        ge=2,
        description="The pairwise slopes of the Theil–Sen fit are subsampled past this many "
        "samples (the fit is quadratic in them).",
    )

    adds_floor_s: float = Field(
        0.005,
        gt=0,
        description="`adds`: the least time a client-timed latency must have grown to place it "
        "on the request path, as detection's floor for seconds: 5 ms is not worth a look.",
    )
    load_wait_margin: float = Field(
        5.0,
        gt=1,
        description="`outwaits_load`: how many times one server's mean wait with Poisson "
        "arrivals (ρ/(1−ρ) service times) a wait must pass to be more than busy servers make. "
        "Pollaczek–Khinchine scales that wait by (1+C²)/2, so 5 leaves room for arrivals and "
        "service times as bursty as C² = 9, far past what a steady load shows.",
    )

    # -- scores of states read from the rows ----------------------------------------------------
    state_score_cap: float = Field(
        10.0,
        gt=0,
        description="A state read from the rows rather than from a scored anomaly (a peak "
        "ratio, a shift, an outage, the limit over capacity) scores its size, capped here: half "
        "of `score_saturation`, so a ratio alone never counts as the strongest detection "
        "finding.",
    )
    event_score: float = Field(
        10.0,
        gt=0,
        description="An `event` (an Xid, an OOM kill) that appeared has no size to score: it "
        "counts as a capped row reading (`state_score_cap`).",
    )
    level_score: float = Field(
        5.0,
        gt=0,
        description="A level past its threshold (`above`/`below`) has no baseline to be "
        "measured against: half the cap. An outage exactly `level` seconds long scores this, "
        "a longer one in proportion.",
    )
    within_capacity_score: float = Field(
        1.0,
        ge=0,
        description="`within_capacity` is the absence of a fault (a limit the card holds): "
        "weak evidence.",
    )
    normal_score: float = Field(
        1.0,
        ge=0,
        description="`normal` held on every instance: one weak score for the condition, "
        "whatever the fleet's size.",
    )

    # -- confidence of a confirmed hypothesis (rank.confidence) -------------------------------
    score_saturation: float = Field(
        20.0,
        gt=0,
        description="Each supporting anomaly's score (robust z × effect, capped) saturates "
        "here: past it a larger change is no stronger evidence.",
    )
    confidence_base: float = Field(
        0.35,
        ge=0,
        le=1,
        description="What any confirmed hypothesis is worth: its conditions all held.",
    )
    confidence_strength: float = Field(
        0.4,
        ge=0,
        le=1,
        description="Weight of the mean saturated score of the conditions that held.",
    )
    confidence_breadth: float = Field(
        0.25,
        ge=0,
        le=1,
        description="Weight of breadth: more independent conditions that hold, with more "
        "supporting evidence, raise the figure (base + strength + breadth = 1).",
    )
    breadth_conditions: float = Field(
        2.0,
        gt=0,
        description="Breadth is 1 - exp(-conditions / this): two conditions make 63% of it.",
    )
    supporting_full: int = Field(
        4, ge=1, description="Pieces of supporting evidence that give breadth its full weight."
    )
    gap_weight: float = Field(
        0.5,
        ge=0,
        le=1,
        description="A hypothesis confirmed with predictions it could not check (their signals "
        "absent, not required) loses this share of its confidence times the share of its "
        "predictions that were gaps: at the same onset, a cause checked in full ranks above "
        "one checked in part, and half its predictions unchecked cost a quarter.",
    )

    across_days_s: float = Field(
        43200.0,
        gt=0,
        description="A trend that spans this long or more was read across the hour and the day "
        "before (detection's slow climbs, which compare with the same hour yesterday): it "
        "needs no second look against yesterday. Half a day: no window-internal fit spans it.",
    )

    # -- chain and ranking ----------------------------------------------------------------------
    late_s: float = Field(
        900.0,
        ge=0,
        description="A would-be cause whose onset is this much later than its effect's does "
        "not explain it (a cause does not start after its effect; seed §5 reads the 02:17 "
        "incident in the order things happened).",
    )
    user_facing_symptoms: tuple[str, ...] = Field(
        ("latency_high", "errors_high", "throughput_low"),
        description="Symptoms the user sees; of chains of one length, the one that ends in one "
        "of these is shown.",
    )
    chain_max_len: int = Field(
        12, ge=2, description="A root's chain is searched depth-first up to this many links."
    )
    reach_band: float = Field(
        3.0,
        gt=1.0,
        description="Roots are ranked first by the strongest change the users felt that they "
        "explain, in bands this many times apart (detection's score): a root under the outage "
        "ranks above one under a wobble an hour earlier, while two roots under one symptom "
        "(the 02:17 incident's) are ordered by onset.",
    )
    onset_tie_s: float = Field(
        900.0,
        ge=0,
        description="Roots whose onsets are closer than this are simultaneous and ranked by "
        "strength of evidence: detectors date a slow ramp later than a step.",
    )

    # -- health, fallback, summary ----------------------------------------------------------
    unhealthy_shift: float = Field(
        8.0,
        gt=0,
        description="An unexplained change at least this large (σ) means 'not healthy' even "
        "with no rule firing.",
    )
    notable_shift: float = Field(
        5.0,
        gt=0,
        description="An unexplained change this large (σ) is named even where nothing is wrong "
        "enough to call an incident (below `unhealthy_shift`): a GPU 20 °C above its own past "
        "that has not yet throttled is worth a look, and 'nothing changed' would hide it.",
    )
    fallback_rel_scale_floor: float = Field(
        0.05,
        ge=0,
        description="Floor on the fallback's scale as a share of |median before|, so a flat "
        "line does not make an infinite shift score.",
    )
    fallback_score_cap: float = Field(
        100.0,
        gt=0,
        description="Cap on a fallback shift score (and the score of a series gone absent).",
    )
    fallback_min_before: int = Field(
        3, ge=2, description="Fewer readings than this before the onset: no fallback shift score."
    )
    fallback_max_changes: int = Field(
        12, ge=1, description="Unexplained changes listed, largest first."
    )
    max_checks: int = Field(
        8,
        ge=0,
        description="Signals to make available listed among the next actions, those that "
        "would decide a cause upstream of a root first.",
    )


#: the defaults, shared where no config is passed
DEFAULT_CONFIG = DiagnoseConfig()
