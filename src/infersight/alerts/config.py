"""Every knob of the generated rules and dashboard, with the reason for its default."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: the gateway's request time, what users wait for (client time and every hop included)
GATEWAY_LATENCY = "access.request_latency_p99"
#: the section of the runbooks page for an alert with no runbook of its own
DIAGNOSE_FIRST = "from-an-alert-diagnose-first"


class Deviation(BaseModel):
    """One soft signal compared with the same time yesterday and with the previous hour."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    alert: str
    signal: str
    #: how far from both baselines, as a share of them, before anything is said (seed §6.1:
    #: "deviating by more than a certain proportion")
    ratio: float = Field(gt=0)
    #: the absolute level the value must also pass (above it for a rise, below it for a
    #: fall): a P99 going from 20 ms to 40 ms doubles and still pages no one
    floor: float
    for_: str = Field(alias="for")
    rule: str  # the diagnose rule it points at
    runbook: str = ""
    what: str  # the noun in the summary


def _deviations() -> tuple[Deviation, ...]:
    d = Deviation.model_validate
    return (
        # P99 of the whole request: the seed's first soft metric. 60% over both baselines
        # clears a busy evening's queueing; 0.25 s keeps a fast embedding service quiet.
        d({"alert": "InferLatencyP99Deviation", "signal": "service.e2e_latency_p99",
           "ratio": 0.6, "floor": 0.25, "for": "10m", "rule": "latency_high",
           "what": "end-to-end P99"}),
        # the same at the gateway, from its own histogram (ingress-nginx's request duration):
        # what users wait for, hops and the wire included, and there even where the engine
        # keeps no latency histogram; the same bounds, a client's P99 is no faster
        d({"alert": "InferGatewayLatencyP99Deviation", "signal": GATEWAY_LATENCY,
           "ratio": 0.6, "floor": 0.25, "for": "10m", "rule": "latency_high",
           "what": "gateway request P99"}),
        d({"alert": "InferTTFTP99Deviation", "signal": "service.ttft_p99", "ratio": 0.6,
           "floor": 0.5, "for": "10m", "rule": "long_prefill_blocking",
           "runbook": "vllm-chunked-prefill", "what": "time-to-first-token P99"}),
        # batches waiting to fill: the batch-size distribution's symptom (seed §3.1)
        d({"alert": "InferBatchFillWaitDeviation", "signal": "inference.batch_fill_wait_p99",
           "ratio": 1.0, "floor": 0.1, "for": "15m", "rule": "batch_window_starvation",
           "runbook": "batch-window-adaptive", "what": "batch fill wait P99"}),
        # vector DB: 20 ms to 800 ms in the 02:17 incident; a doubling above 50 ms is worth it
        d({"alert": "InferVectorQueryP99Deviation", "signal": "dependency.vector_query_p99",
           "ratio": 1.0, "floor": 0.05, "for": "10m", "rule": "vector_db_slow",
           "runbook": "vectordb-memory", "what": "vector DB query P99"}),
        # cache hit ratio 95% to 60% in the incident: a 15% relative drop under 90%
        d({"alert": "InferCacheHitCollapse", "signal": "dependency.cache_hit_ratio",
           "ratio": 0.15, "floor": 0.9, "for": "10m", "rule": "cache_capacity",
           "runbook": "cache-resize", "what": "cache hit ratio"}),
    )  # fmt: skip


class SLO(BaseModel):
    """Error-budget burn alerts, multi-window multi-burn-rate as Sloth and Pyrra generate
    them (Google SRE workbook ch. 5): a fast page and a slow ticket."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: share of requests that must succeed; 99.5% leaves an LLM API room for client aborts
    error_objective: float = Field(0.995, gt=0, lt=1)
    #: share of requests that must finish under `latency_threshold_s`
    latency_objective: float = Field(0.99, gt=0, lt=1)
    #: must be a bucket bound of the request-latency histogram read: the gateway's where there
    #: is one (ingress-nginx keeps Prometheus' default buckets, 2.5 s among them), else the
    #: engine's (vLLM has 2.5 s)
    latency_threshold_s: float = Field(2.5, gt=0)
    #: (long window, short window, burn factor, severity, for): the workbook's four pairs for a
    #: 30-day budget; 14.4 burns 2% of it in an hour, 1 burns it at exactly the allowed pace
    windows: tuple[tuple[str, str, float, str, str], ...] = (
        ("1h", "5m", 14.4, "page", "2m"),
        ("6h", "30m", 6.0, "page", "15m"),
        ("1d", "2h", 3.0, "ticket", "1h"),
        ("3d", "6h", 1.0, "ticket", "3h"),
    )


class AlertsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    #: rate window of the recorded signals: four scrapes at the common 15 s interval and short
    #: enough that a 10-minute `for:` sees the change
    window: str = "5m"
    #: rule evaluation interval (seconds as Prometheus writes them)
    interval: str = "1m"
    #: labels the recorded signals keep: the scrape target, and the model of a multi-model server
    by: tuple[str, ...] = ("instance", "model_name", "model")
    #: the machine behind a target: `node-7:8000` and `node-7:9400` are one host, so the
    #: engine's queue and dcgm-exporter's GPU meet (DESIGN §3)
    host_from: str = "instance"
    host_regex: str = r"([^:]+)(?::\d+)?"
    #: yesterday: a 30-minute average centred on the same time (a single point is one burst)
    day_offset: str = "23h45m"
    day_range: str = "30m"
    #: the previous hour, whole: ends an hour ago so an incident's own first hour is not in it
    hour_offset: str = "1h"
    hour_range: str = "1h"
    deviations: tuple[Deviation, ...] = Field(default_factory=_deviations)
    #: VRAM: fit the last `vram_fit` and alert when the line reaches `vram_full` within
    #: `vram_horizon_s`, only above `vram_floor` (a cold card filling its cache is normal)
    vram_fit: str = "1h"
    vram_horizon_s: int = 6 * 3600
    vram_full: float = 0.98
    vram_floor: float = 0.75
    vram_for: str = "15m"
    #: GPU clock: below nominal by this share of yesterday's and the last hour's clock, while
    #: hot; vendors start thermal slowdown around 80-85 °C (seed §4.2)
    clock_drop_ratio: float = 0.1
    hot_c: float = 80.0
    throttle_for: str = "5m"
    #: Xid: any non-zero code seen in this window (the field keeps the last code)
    xid_window: str = "5m"
    #: queue growth with the GPU idle (seed §2.2: not compute-bound): a queue above this many
    #: requests and `queue_ratio` times yesterday's, while GPU busy time is down by `gpu_drop`
    queue_floor: float = 10.0
    queue_ratio: float = 3.0
    gpu_drop_ratio: float = 0.2
    queue_for: str = "10m"
    #: the queue's peak and the GPUs' mean over this window: a queue that flaps between full
    #: and empty (shedding, crashes) holds the alert instead of resetting it
    queue_smooth: str = "5m"
    slo: SLO = Field(default_factory=SLO)
    #: the Prometheus the `infersight diagnose` hint points at; Prometheus fills in its own
    #: --web.external-url when left as this template
    prometheus_url: str = "{{ $externalURL }}"
    #: where the runbook pages are published: each alert's `runbook_url` annotation (the one
    #: Alertmanager templates and Grafana link) is this, `#`, and its runbook's id. The
    #: default is the project's own page, docs/runbooks.md, as a path: the project publishes
    #: no site of its own, and a guessed host would send the on-call to a page nobody
    #: controls. Point it at your published copy (a wiki, your Git host's view of the file)
    runbook_base_url: str = "docs/runbooks.md"

    @field_validator("runbook_base_url")
    @classmethod
    def _base_url(cls, v: str) -> str:
        if not v or re.search(r"[\s\"'<>#{}\\]", v) or not v.isprintable():
            raise ValueError(
                f"{v!r}: a URL or path to the runbooks page, without spaces, quotes, braces or a "
                "#fragment (each alert adds #<runbook id>)"
            )
        scheme = re.match(r"([a-zA-Z][a-zA-Z0-9+.-]*):", v)
        if scheme and scheme.group(1).lower() not in ("http", "https"):
            raise ValueError(f"{v!r}: only http(s) URLs or a path")
        return v
