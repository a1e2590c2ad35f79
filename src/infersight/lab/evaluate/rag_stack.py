"""A RAG stack the rules were not written against, built in the test, not by the simulator.

ingress-nginx (`ingress-0`) → a RAG API with no metrics of its own (worker pool, Redis cache,
vector searches) → an engine on four GPU nodes, with dcgm-exporter's default counters (no
clock-event reasons), node_exporter, redis_exporter (`redis-0`) and a vector DB (`vdb-0`).
An hour at 15 s, the incident at minute 40; the hour before and the same hour yesterday as
baselines. Each case changes a few series at the onset; everything else holds its level with
3% noise (the baselines with noise of their own).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from infersight.frame import MetricFrame, SignalSeries

STEP, N, ONSET = 15.0, 240, 160
END = 1.7649e9  # a weekday, 14:00 UTC
START = END - STEP * N
NODES = ("node-0", "node-1", "node-2", "node-3")
GATEWAY, CACHE, VDB = "ingress-0", "redis-0", "vdb-0"

#: healthy levels: signal → value on every instance it lives on
_ENGINE_VLLM = {
    "service.request_rate": 10.0,
    "service.queue_length": 1.0,
    "service.queue_wait_p99": 0.05,
    "service.e2e_latency_p99": 0.35,
    "service.e2e_latency_p50": 0.15,
    "service.e2e_latency_avg": 0.17,
    "service.ttft_p99": 0.12,
    "service.itl_p99": 0.025,
    "service.error_ratio": 0.001,
    "inference.batch_size": 8.0,
    "inference.running_requests": 8.0,
    "inference.forward_time_avg": 0.12,
    "inference.generation_tokens_rate": 600.0,
    "inference.kv_cache_usage": 0.34,
    "inference.prompt_tokens_per_request": 900.0,
}
_ENGINE_TRITON = {
    "service.request_rate": 2.75,
    "service.queue_length": 0.2,
    "service.queue_wait_avg": 0.0009,
    "service.e2e_latency_avg": 0.05,
    "service.error_ratio": 0.0,
    "inference.batch_size": 1.3,
    "inference.forward_time_avg": 0.045,
}
_DCGM = {
    "inference.gpu_util": 0.62,
    "inference.gpu_mem_used_bytes": 72 * 2**30,
    "inference.gpu_mem_used_ratio": 0.9,
    "infra.gpu_temp_c": 69.0,
    "infra.gpu_sm_clock_mhz": 1980.0,
    "infra.gpu_power_w": 420.0,
}
_NODE = {
    "infra.cpu_util": 0.35,
    "infra.tcp_retrans_ratio": 0.0005,
    "infra.disk_await": 0.002,
    "infra.major_faults": 1.0,
    "infra.mem_available_ratio": 0.6,
}
_GATEWAY = {
    "access.request_rate": 40.0,
    "access.request_latency_p99": 0.38,
    "access.upstream_latency_p99": 0.37,
    "access.5xx_ratio": 0.001,
}
_CACHE = {"dependency.cache_hit_ratio": 0.6, "dependency.cache_evictions": 0.0}
_VDB = {"dependency.vector_query_p99": 0.02}

#: signal → instance → value after the onset (or a function of the point index)
Change = Mapping[str, Mapping[str, float | Callable[[np.ndarray], np.ndarray]]]


def levels(engine: str = "vllm") -> dict[str, dict[str, float]]:
    """signal → instance → healthy level."""
    eng = _ENGINE_VLLM if engine == "vllm" else _ENGINE_TRITON
    out: dict[str, dict[str, float]] = {}
    for group, insts in ((eng, NODES), (_DCGM, NODES), (_NODE, NODES)):
        for sig, v in group.items():
            out.setdefault(sig, {}).update({n: v for n in insts})
    for group, inst in ((_GATEWAY, GATEWAY), (_CACHE, CACHE), (_VDB, VDB)):
        for sig, v in group.items():
            out.setdefault(sig, {})[inst] = v
    out.setdefault("infra.cpu_util", {})[VDB] = 0.3
    out["infra.major_faults"][VDB] = 1.0
    return out


#: relative noise where 3% is not what the exporter shows: allocated memory barely moves, and
#: counts of things (targets up, processes on a card, restarts, configured sizes, error codes)
#: are whole numbers that do not wobble
_NOISE = {
    "inference.gpu_mem_used_bytes": 0.002,
    "inference.gpu_mem_used_ratio": 0.002,
    **dict.fromkeys(
        (
            "infra.target_up",
            "inference.gpu_processes",
            "service.restarts",
            "service.concurrency_limit",
            "infra.gpu_xid",
            "infra.gpu_ecc_dbe",
        ),
        0.0,
    ),
}


def _noisy(row: np.ndarray, sig: str, rng: np.random.Generator) -> np.ndarray:
    # counters of rare events stay exactly zero; everything else wobbles
    if not np.any(row):
        return row
    return row * (1 + _NOISE.get(sig, 0.03) * rng.standard_normal(row.shape[-1]))


def windows(
    change: Change,
    *,
    engine: str = "vllm",
    base: Change | None = None,
    drop: tuple[str, ...] = (),
    seed: int = 0,
) -> dict[str, MetricFrame]:
    """incident, baseline-1h and baseline-1d windows: the healthy stack with `change` applied
    from ONSET on in the incident window (a callable gets the absolute point index: the
    incident window's points are 0..N-1, the hour before -N..-1, yesterday -5760..). `base`
    overrides levels everywhere (before the onset and in the baselines); `drop` removes
    signals (an exporter not deployed)."""
    rng = np.random.default_rng(seed)
    lv = levels(engine)
    for sig, per in (base or {}).items():
        for inst, v in per.items():
            lv.setdefault(sig, {})[inst] = v  # type: ignore[assignment]
    out = {}
    for name, offset in (("incident", 0), ("baseline-1h", -N), ("baseline-1d", -5760)):
        idx = np.arange(N) + offset
        series = {}
        for sig, per in lv.items():
            if sig in drop:
                continue
            insts = tuple(per)
            rows = []
            for inst in insts:
                v = per[inst]
                row = v(idx) if callable(v) else np.full(N, float(v))
                row = _noisy(row, sig, rng)
                after = change.get(sig, {}).get(inst)
                if name == "incident" and after is not None:
                    new = after(idx) if callable(after) else np.full(N, float(after))
                    row = np.where(idx >= ONSET, _noisy(new, sig, rng), row)
                rows.append(row)
            series[sig] = SignalSeries(insts, np.vstack(rows))
        start = START + offset * STEP
        out[name] = MetricFrame(start, STEP, N, series)
    return out


def on_nodes(value: float, nodes: tuple[str, ...] = NODES) -> dict[str, float]:
    return {n: value for n in nodes}
