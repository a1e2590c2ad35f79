"""Sample diagnoses for the report tests: the 02:17 incident (seed §5), a healthy window, one
where most could not be checked, and a hostile one whose strings try to break out of HTML."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import numpy as np

from infersight.diagnose.result import (
    Diagnosis,
    Evidence,
    HypothesisResult,
    RootCause,
    UncheckedCause,
    UnexplainedChange,
)
from infersight.frame import FloatArray, MetricFrame, SignalSeries

START = datetime(2024, 5, 14, 1, 45, tzinfo=UTC).timestamp()
STEP = 15.0
N = 241  # 01:45 .. 02:45
END = START + STEP * (N - 1)
ONSET = datetime(2024, 5, 14, 2, 17, tzinfo=UTC).timestamp()
HOSTILE = '<script>alert("x")</script>'


def ev(
    signal: str,
    instance: str,
    statement: str,
    baseline: float | None,
    observed: float | None,
    unit: str,
    supports: bool = True,
    kind: str = "deviation",
    onset: float | None = ONSET,
) -> Evidence:
    return Evidence(signal, instance, kind, supports, statement, START, END, baseline, observed,
                    unit, onset)  # fmt: skip


def hyp(
    hid: str,
    title: str,
    layer: str,
    verdict: str,
    confidence: float,
    *evidence: Evidence,
    **kw: object,
) -> HypothesisResult:
    return HypothesisResult(hid, title, layer, verdict, confidence, kw.pop("seed", "4.1"),  # type: ignore[arg-type]
                            evidence=evidence, **kw)  # type: ignore[arg-type]  # fmt: skip


CONFIRMED = (
    hyp("vector_db_swap", "Vector DB index swapped out of RAM", "dependency", "confirmed", 0.86,
        ev("dependency.vector_query_p99", "milvus-0",
           "Vector DB query P99 rose from 20 ms to 800 ms (40×) at 02:16:30", 0.02, 0.8, "s",
           onset=ONSET - 30),
        ev("infra.swap_in_rate", "milvus-0", "Swap-in on milvus-0 rose from 0/s to 2,400 pages/s",
           0.0, 2400.0, "per_s", onset=ONSET - 30),
        ev("infra.mem_available_ratio", "milvus-0",
           "Available memory on milvus-0 fell from 35% to 3%", 0.35, 0.03, "ratio",
           onset=ONSET - 90),
        onset=ONSET - 30, instances=("milvus-0",), explains=("queue_backlog",), is_root=True,
        remedy="Give the vector DB node RAM for the whole index (or shard it); disable swap.",
        runbook="runbooks/vector-db-memory.md"),
    hyp("cache_capacity", "Cache too small for the working set", "dependency", "confirmed", 0.74,
        ev("dependency.cache_hit_ratio", "redis-0", "Cache hit ratio fell from 95% to 60%",
           0.95, 0.60, "ratio", onset=ONSET - 180),
        ev("dependency.cache_evictions", "redis-0", "Evictions rose from 2/s to 850/s",
           2.0, 850.0, "per_s", onset=ONSET - 180),
        onset=ONSET - 180, instances=("redis-0",), explains=("queue_backlog",), is_root=True,
        remedy="Raise maxmemory to hold the working set; add singleflight on cache misses.",
        refute_undecided=True, refute_missing=("dependency.cache_concurrent_loads",)),
    hyp("queue_backlog", "Request queue backlog", "service", "confirmed", 0.9,
        ev("service.queue_length", "infer-1", "Queue length rose from 3 to 180 requests",
           3.0, 180.0, "count"),
        ev("service.queue_wait_p99", "infer-1", "Queue wait P99 rose from 50 ms to 2.9 s",
           0.05, 2.9, "s"),
        seed="3.3", onset=ONSET, instances=("infer-0", "infer-1", "infer-2", "infer-3"),
        explains=("batch_starvation",), explained_by=("vector_db_swap", "cache_capacity")),
    hyp("batch_starvation", "Batch starvation: small batches while requests wait", "inference",
        "confirmed", 0.7,
        ev("inference.batch_size", "infer-1", "Average batch size fell from 24 to 6", 24.0, 6.0,
           "count", onset=ONSET + 30),
        seed="3.1", onset=ONSET + 30, explains=("vram_pressure",), explained_by=("queue_backlog",)),
    hyp("vram_pressure", "GPU memory near capacity", "inference", "confirmed", 0.66,
        ev("inference.gpu_mem_used_bytes", "infer-1", "GPU memory in use rose from 57.6 GiB to "
           "77.6 GiB (97% of 80 GiB)", 57.6 * 2**30, 77.6 * 2**30, "bytes", onset=ONSET + 60),
        seed="3.2", onset=ONSET + 60, explains=("gpu_util_low",),
        explained_by=("batch_starvation",)),
    hyp("gpu_util_low", "GPU idle while requests queue (not compute-bound)", "inference",
        "confirmed", 0.8,
        ev("inference.gpu_util", "infer-1", "GPU utilisation fell from 70% to 40% while the "
           "queue grew", 0.70, 0.40, "ratio", onset=ONSET + 60),
        ev("service.e2e_latency_p99", "infer-1", "End-to-end P99 rose from 380 ms to 4.1 s",
           0.38, 4.1, "s", onset=ONSET + 15),
        ev("service.error_ratio", "infer-1", "Error ratio rose from 0.1% to 5%", 0.001, 0.05,
           "ratio", onset=ONSET + 45),
        seed="2.2", onset=ONSET + 60, explained_by=("vram_pressure",)),
)  # fmt: skip

REFUTED = (
    hyp("gpu_throttling", "GPU thermal throttling", "infrastructure", "refuted", 0.0,
        ev("infra.gpu_temp_c", "infer-1", "GPU temperature 66 °C, below the 80 °C throttle "
           "point (64 °C before)", 64.0, 66.0, "celsius", supports=False, kind="level"),
        ev("infra.gpu_sm_clock_mhz", "infer-1", "SM clock steady at 1,980 MHz", 1980.0, 1980.0,
           "MHz", supports=False, kind="normal", onset=None),
        seed="4.2"),
    hyp("network_retrans", "Network retransmissions", "infrastructure", "refuted", 0.0,
        ev("infra.tcp_retrans_ratio", "infer-1", "TCP retransmits flat at 0.01%", 0.0001, 0.0001,
           "ratio", supports=False, kind="normal", onset=None),
        seed="4.3"),
)  # fmt: skip

INCONCLUSIVE = (
    hyp("cold_start", "Model cold start from remote storage", "inference", "inconclusive", 0.0,
        missing_signals=("inference.model_load_time",), seed="4.3"),
    hyp("disk_io", "Log disk I/O stalls", "infrastructure", "inconclusive", 0.0,
        missing_signals=("infra.disk_await", "infra.io_pressure"), seed="4.3"),
)  # fmt: skip

CHAIN = ("vector_db_swap", "queue_backlog", "batch_starvation", "vram_pressure", "gpu_util_low")
SCOPE = {
    "requests": "all",
    "requests_why": "service.e2e_latency_p50 up on 4 of 4 instances",
    "timing": "continuous",
    "timing_why": "96% of points anomalous since onset, up to 1 burst(s)",
    "instances": "cluster",
    "instances_why": "4 of 4 instances on service.e2e_latency_p99",
    "anomalous_instances": ["infer-0", "infer-1", "infer-2", "infer-3"],
    "total_instances": 4,
    "signals": [
        {"signal": "service.e2e_latency_p99", "instances": 4, "share": 1.0, "fraction": 0.96,
         "bursts": 1, "observed": 4.1, "anomalous": ["infer-0", "infer-1", "infer-2", "infer-3"]},
        {"signal": "service.error_ratio", "instances": 4, "share": 1.0, "fraction": 0.9,
         "bursts": 1, "observed": 0.05, "anomalous": ["infer-0", "infer-1", "infer-2", "infer-3"]},
    ],
}  # fmt: skip
NEXT = (
    "Freeze the scene: `infersight capture` before restarting anything",
    "Run runbook vector-db-memory (dry run first)",
    "Raise the cache's maxmemory; watch the hit ratio return above 90%",
)
MISSING = {
    "inference.model_load_time": "no exporter in the source reports model load time",
    "infra.disk_await": "node_exporter is not scraped on infer-*",
}


def incident() -> Diagnosis:
    return Diagnosis(
        start=START, end=END, step=STEP, healthy=False,
        summary="The vector DB began swapping at 02:16 and the cache lost a third of its hits; "
        "requests queued, batches starved and GPUs idled while P99 went from 380 ms to 4.1 s.",
        scope=SCOPE,
        root_causes=(RootCause("vector_db_swap", 1, 0.86, CHAIN),
                     RootCause("cache_capacity", 2, 0.74, ("cache_capacity", *CHAIN[1:]))),
        hypotheses=CONFIRMED + REFUTED + INCONCLUSIVE,
        unexplained=(UnexplainedChange("service.process_rss", "infer-2", "service", 4.2,
                                       "Resident memory on infer-2 grew from 6.1 GiB to 7.9 GiB",
                                       ONSET + 300, 6.1 * 2**30, 7.9 * 2**30),),
        next_actions=NEXT, missing_signals=MISSING,
        source={"kind": "bundle", "path": "incident-0217.isb"},
        unchecked_causes=(UncheckedCause("disk_io", ("vector_db_swap",),
                                         ("infra.disk_await", "infra.io_pressure")),),
    )  # fmt: skip


LIMIT = hyp(
    "unbounded_queue", "Overload flows into an unbounded queue", "service", "confirmed", 0.7,
    ev("service.queue_wait_p99", "infer-1", "Queue wait P99 rose from 50 ms to 31 s", 0.05, 31.0,
       "s", onset=ONSET + 60),
    seed="3.3", onset=ONSET + 60, instances=("infer-1",), is_root=True,
    remedy="Bound the queue and set a maximum wait, so overload fails fast with 503s.",
)  # fmt: skip
UNNAMED = hyp(
    "change@engine:infer-0+1",
    "A change at the engine of infer-0, infer-1 that no known failure mode names", "inference",
    "confirmed", 0.5,
    ev("inference.prefix_cache_hit_ratio", "infer-0", "Prefix cache hit ratio fell from 60% to 20%",
       0.6, 0.2, "ratio", onset=ONSET + 30),
    ev("service.ttft_p99", "infer-0", "TTFT P99 rose from 200 ms to 400 ms", 0.2, 0.4, "s",
       onset=ONSET + 45),
    seed="5.2", onset=ONSET + 30, instances=("infer-0", "infer-1"), is_root=True,
    remedy="Look at the engine of infer-0, infer-1 first.",
)  # fmt: skip


def on_path() -> Diagnosis:
    """The 02:17 incident as the request-path walk reads it: the cache's misses (a trigger)
    piled up at the vector DB, which slowed and held the API; an unbounded queue is a limit
    the cache's work ran into; a change at two engines no rule names."""
    d = incident()
    chain = ("queue_backlog",)
    roots = (
        RootCause("cache_capacity", 1, 0.74, ("cache_capacity", *chain), node="cache:redis-0",
                  nodes=("cache:redis-0",), bottleneck="retrieval:milvus-0", trigger=True,
                  via=("cache:redis-0", "retrieval:milvus-0", "hop")),
        RootCause("vector_db_swap", 2, 0.86, ("vector_db_swap", *chain), node="host:milvus-0",
                  nodes=("host:milvus-0", "retrieval:milvus-0"), bottleneck="hop",
                  via=("retrieval:milvus-0", "hop")),
        RootCause("unbounded_queue", 3, 0.7, ("unbounded_queue",), node="service:infer-1",
                  nodes=("service:infer-1",), bottleneck="service:infer-1",
                  via=("service:infer-1",), triggered_by="cache_capacity"),
        RootCause("change@engine:infer-0+1", 4, 0.5, ("change@engine:infer-0+1",),
                  node="engine:infer-0", nodes=("engine:infer-0", "engine:infer-1"),
                  bottleneck="service:infer-0", via=("engine:infer-0", "service:infer-0"),
                  unnamed=True),
    )  # fmt: skip
    return replace(d, root_causes=roots, hypotheses=(*d.hypotheses, LIMIT, UNNAMED))


def healthy() -> Diagnosis:
    return Diagnosis(
        start=START, end=END, step=STEP, healthy=True, summary="",
        scope={"requests": "none", "requests_why": "no anomaly on 3 user-facing signal(s)",
               "timing": "none", "timing_why": "no anomaly on 3 user-facing signal(s)",
               "instances": "none", "instances_why": "no anomaly on 3 user-facing signal(s)",
               "anomalous_instances": [], "total_instances": 4, "signals": []},
        hypotheses=REFUTED,
        source={"kind": "prometheus", "url": "http://127.0.0.1:9090"},
    )  # fmt: skip


def unchecked() -> Diagnosis:
    """Anomalous, but no cause could be confirmed: most hypotheses lack their signals."""
    return Diagnosis(
        start=START, end=END, step=STEP, healthy=False,
        summary="Latency is up; the signals that would say why are missing.",
        scope={"requests": "part", "requests_why": "service.e2e_latency_p99 up with P50 flat",
               "timing": "intermittent", "timing_why": "30% of points anomalous, 4 bursts",
               "instances": "one", "instances_why": "only infer-2: 1 of 4 instances",
               "region": "eu-west-1"},
        hypotheses=INCONCLUSIVE + REFUTED[:1],
        next_actions=("Scrape node_exporter on infer-*", "Add model load time to the exporter"),
        missing_signals=MISSING,
    )  # fmt: skip


def hostile() -> Diagnosis:
    """Every user-controlled string carries markup that must stay text."""
    d = incident()
    first = d.hypotheses[0]
    e0 = replace(first.evidence[0], instance=HOSTILE, statement=f"P99 up on {HOSTILE}")
    h0 = replace(first, title=f"Swap {HOSTILE}", evidence=(e0, *first.evidence[1:]),
                 instances=(HOSTILE,), remedy=f"Fix {HOSTILE}")  # fmt: skip
    return replace(
        d, summary=f"Summary {HOSTILE}", hypotheses=(h0, *d.hypotheses[1:]),
        scope={**d.scope, "instances_why": HOSTILE, "note": HOSTILE},
        next_actions=(f"Run {HOSTILE}",), missing_signals={"x.y": HOSTILE},
        source={"path": HOSTILE},
    )  # fmt: skip


# -- frames ---------------------------------------------------------------------------------
def _shape(
    base: float, observed: float, onset: float | None, seed: int, noise: float, top: float
) -> FloatArray:
    rng = np.random.default_rng(seed)
    t = START + STEP * np.arange(N)
    level = np.full(N, base)
    if onset is not None:
        ramp = np.clip((t - onset) / 120.0, 0.0, 1.0)
        level = base + (observed - base) * ramp
    jitter = 1.0 + noise * rng.standard_normal(N)
    values = level * jitter + noise * 0.05 * abs(observed - base) * rng.standard_normal(N)
    return np.asarray(np.clip(values, 0.0, top))


def windows(d: Diagnosis | None = None) -> dict[str, MetricFrame]:
    """Incident and baseline frames for every evidence signal of `d` (baselines: no change)."""
    d = d or incident()
    rows: dict[str, dict[str, tuple[float, float, float | None, float]]] = {}
    for h in d.hypotheses:
        for e in h.evidence:
            if e.baseline is not None and e.observed is not None:
                top = 1.0 if e.unit == "ratio" else np.inf
                rows.setdefault(e.signal, {})[e.instance] = (e.baseline, e.observed, e.onset, top)
    out: dict[str, MetricFrame] = {}
    for k, (name, shift) in enumerate(
        [("incident", 0.0), ("baseline-1h", 3600.0), ("baseline-1d", 86400.0),
         ("baseline-7d", 7 * 86400.0)]
    ):  # fmt: skip
        series: dict[str, SignalSeries] = {}
        for j, (sig, by_inst) in enumerate(rows.items()):
            vals = [
                _shape(b, o, onset if k == 0 else None, seed=100 * k + j, noise=0.04, top=top)
                for b, o, onset, top in by_inst.values()
            ]
            series[sig] = SignalSeries(tuple(by_inst), np.vstack(vals))
        out[name] = MetricFrame(START - shift, STEP, N, series)
    return out
