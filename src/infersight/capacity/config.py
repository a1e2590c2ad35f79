"""Every constant of the capacity package, with the reason for its default."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class CapacityConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # -- max batch size (seed §3.1) ----------------------------------------------------------
    batch_margin: float = Field(
        0.20,
        gt=0.0,
        lt=1.0,
        description="Max batch size sits this share under the knee: the seed's 'leave 20%'.",
    )
    batch_margin_low: float = Field(
        0.25,
        gt=0.0,
        lt=1.0,
        description="The range's low end: 25% under (the seed's knee 32 gives 24).",
    )
    batch_margin_high: float = Field(
        0.125,
        gt=0.0,
        lt=1.0,
        description="The range's high end: 12.5% under (the seed's knee 32 gives 28).",
    )
    knee_sensitivity: float = Field(
        1.0,
        gt=0.0,
        description="Kneedle's S: 1.0 is the paper's default, the most sensitive setting that "
        "still ignores a flat curve's wobble once the curve is smoothed.",
    )
    flat_elasticity: float = Field(
        0.25,
        gt=0.0,
        lt=1.0,
        description="Past a real knee, throughput grows at most x^0.25 from the knee to the "
        "last step (doubling the batch buys under 19% more), where below it it grows about as x "
        "(elasticity 1); more and the curve is still rising (sweep further). A share of the "
        "knee's throughput would not do: per-request overheads (HTTP, JSON) keep shrinking "
        "per item as batches grow, so a saturated device still gains a little per doubling.",
    )
    # -- worker pool, queue, wait (seed §3.3) ------------------------------------------------
    vram_headroom: float = Field(
        0.20,
        ge=0.0,
        lt=1.0,
        description="Share of VRAM kept free when counting concurrent batches: the low end of "
        "the seed's 20–30% (§3.2), so the pool does not plan on the whole card.",
    )
    queue_seconds_default: float = Field(
        1.0,
        gt=0.0,
        description="Without a p99 target, the queue holds what the pool serves in a second: "
        "a user-visible wait, short enough that failing fast (503) still lets a client retry.",
    )
    # -- VRAM headroom (seed §3.2) -----------------------------------------------------------
    headroom_low: float = Field(
        0.20, gt=0.0, lt=1.0, description="Less free VRAM than this at the peak is at risk."
    )
    headroom_high: float = Field(
        0.30,
        gt=0.0,
        lt=1.0,
        description="Free VRAM at the peak between low and this is tight; above it is kept.",
    )
    steady_quantile: float = Field(
        0.50,
        gt=0.0,
        lt=1.0,
        description="Steady VRAM: the median of the history (weights and resident caches).",
    )
    peak_quantile: float = Field(
        1.0,
        gt=0.0,
        le=1.0,
        description="Peak VRAM: the maximum; an OOM happens at the worst moment, not the p99.",
    )
    # -- sweep (open-loop generator) ---------------------------------------------------------
    step_seconds: float = Field(
        5.0, gt=0.0, description="Load per step: long enough for a few hundred requests."
    )
    warmup_seconds: float = Field(
        1.0,
        ge=0.0,
        description="Requests sent in a step's first second are not measured: queues fill.",
    )
    probe_requests: int = Field(
        3,
        ge=1,
        description="Sequential requests that time one request at a step before its load: the "
        "median sets the open-loop rate (Little's law: rate = in flight / latency).",
    )
    request_timeout: float = Field(
        30.0, gt=0.0, description="A request slower than this counts as failed."
    )
    stop_error_share: float = Field(
        0.2,
        gt=0.0,
        le=1.0,
        description="A step where more than this share of requests failed ends the sweep: an "
        "overloaded server keeps working off requests the generator gave up on, so later steps "
        "would measure that backlog and its collapse, not the server's capacity.",
    )
    max_outstanding: int = Field(
        4096,
        ge=1,
        description="Requests in flight at most: an open-loop generator against a stalled "
        "server would otherwise grow without bound (and measure itself).",
    )


DEFAULT_CONFIG = CapacityConfig()
