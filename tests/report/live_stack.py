"""A serving stack's history as its exporters expose it, for a real Prometheus (promtool backfill).

ingress-nginx in front of three vLLM engines, with Redis, Qdrant and dcgm-exporter beside them:
real metric names and labels (the catalog's sources), and some of the older names a catalog
mapping falls back to (vLLM's `gpu_cache_usage_perc` and `time_per_output_token_seconds`,
dcgm-exporter without `FB_RESERVED`). At `onset` the gateway's request time doubles (its P99
with it) while the engines' latency stays flat: what the users feel is the gateway's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from infersight.lab.sim.dialects import VLLM_ITL_S, VLLM_REQUEST_S, VLLM_TTFT_S
from infersight.lab.sim.emitter import Z_LEVELS, Target, lognormal_table
from infersight.sources.openmetrics_writer import write_openmetrics
from infersight.sources.raw import RawStore

STEP = 15.0
ENGINES = ("node-0", "node-1", "node-2")
GATEWAY = "ingress-0"
#: seconds: ingress-nginx's default buckets (its collector's `DefBuckets`-like list)
NGINX_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
QDRANT_S = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0)
#: the gateway's median request time before and after the onset (its P99 doubles with it)
GATEWAY_BEFORE_S = 0.4
GATEWAY_AFTER_S = 0.8


def _steady(rng: np.random.Generator, n: int, level: float, rel: float = 0.02) -> np.ndarray:
    return level * (1.0 + rel * rng.standard_normal(n))


def _hist(
    t: Target,
    name: str,
    median: np.ndarray,
    per_step: np.ndarray,
    edges: tuple[float, ...],
    **labels: str,
) -> None:
    t.histogram(name, lognormal_table(median, 0.35, Z_LEVELS), per_step, edges, labels)


def stack_store(end: float, onset: float, hours: float = 2.25) -> RawStore:
    """Every exporter's samples every STEP seconds over `hours` ending at `end`."""
    ts = np.arange(end - hours * 3600.0, end + STEP / 2, STEP)
    n = ts.size
    rng = np.random.default_rng(39)
    after = ts >= onset
    store = RawStore()
    rps = 60.0  # the gateway's requests per second, a third to each engine

    gw = Target(store, ts, "ingress-nginx", f"{GATEWAY}:10254", controller_pod="ingress-0")
    route = {"host": "chat.example", "ingress": "chat", "namespace": "serving",
             "service": "vllm", "path": "/v1", "method": "POST"}  # fmt: skip
    ok = _steady(rng, n, rps * STEP)
    gw.counter("nginx_ingress_controller_requests", ok, status="200", **route)
    gw.counter("nginx_ingress_controller_requests", np.full(n, 0.02 * STEP), status="503", **route)
    request = np.where(after, GATEWAY_AFTER_S, GATEWAY_BEFORE_S) * _steady(rng, n, 1.0)
    _hist(gw, "nginx_ingress_controller_request_duration_seconds", request, ok, NGINX_S, **route)
    upstream = _steady(rng, n, 0.35)
    _hist(gw, "nginx_ingress_controller_response_duration_seconds", upstream, ok, NGINX_S, **route)
    _hist(gw, "nginx_ingress_controller_header_duration_seconds", upstream * 0.3, ok, NGINX_S,
          **route)  # fmt: skip
    _hist(gw, "nginx_ingress_controller_connect_duration_seconds", np.full(n, 0.002), ok,
          NGINX_S, **route)  # fmt: skip

    model = {"model_name": "meta-llama/Llama-3.1-8B-Instruct"}
    for j, host in enumerate(ENGINES):
        t = Target(store, ts, "vllm", f"{host}:8000")
        done = _steady(rng, n, rps / len(ENGINES) * STEP)
        t.counter("vllm:request_success_total", done, finished_reason="stop", **model)
        t.counter("vllm:request_success_total", np.full(n, 0.01 * STEP), finished_reason="abort",
                  **model)  # fmt: skip
        t.gauge("vllm:num_requests_running", np.round(_steady(rng, n, 8.0, 0.05)), **model)
        t.gauge("vllm:num_requests_waiting", np.zeros(n), **model)
        t.gauge("vllm:gpu_cache_usage_perc", _steady(rng, n, 0.4), **model)
        _hist(t, "vllm:e2e_request_latency_seconds", _steady(rng, n, 0.3), done, VLLM_REQUEST_S,
              **model)  # fmt: skip
        _hist(t, "vllm:time_to_first_token_seconds", _steady(rng, n, 0.05), done, VLLM_TTFT_S,
              **model)  # fmt: skip
        _hist(t, "vllm:time_per_output_token_seconds", _steady(rng, n, 0.02), done * 200,
              VLLM_ITL_S, **model)  # fmt: skip
        _hist(t, "vllm:request_queue_time_seconds", _steady(rng, n, 0.005), done, VLLM_TTFT_S,
              **model)  # fmt: skip
        _hist(t, "vllm:request_inference_time_seconds", _steady(rng, n, 0.25), done,
              VLLM_REQUEST_S, **model)  # fmt: skip
        t.counter("vllm:generation_tokens_total", done * 200, **model)
        t.counter("vllm:request_prompt_tokens_sum", done * 900, **model)
        t.counter("vllm:request_prompt_tokens_count", done, **model)
        t.counter("vllm:num_preemptions_total", np.zeros(n), **model)
        t.counter("vllm:prefix_cache_queries_total", done * 900, **model)
        t.counter("vllm:prefix_cache_hits_total", done * 450, **model)

        g = Target(store, ts, "dcgm", f"{host}:9400", Hostname=host)
        lab = {"gpu": "0", "UUID": f"GPU-{j:08x}", "modelName": "NVIDIA H100 80GB HBM3"}
        used = np.round(_steady(rng, n, 52_000.0, 0.002))
        g.gauge("DCGM_FI_DEV_GPU_UTIL", np.round(_steady(rng, n, 70.0)), **lab)
        g.gauge("DCGM_FI_DEV_FB_USED", used, **lab)
        g.gauge("DCGM_FI_DEV_FB_FREE", 81_559.0 - used, **lab)
        g.gauge("DCGM_FI_DEV_GPU_TEMP", np.round(_steady(rng, n, 62.0)), **lab)
        g.gauge("DCGM_FI_DEV_SM_CLOCK", np.full(n, 1980.0), **lab)
        g.gauge("DCGM_FI_DEV_POWER_USAGE", _steady(rng, n, 450.0), **lab)
        g.gauge("DCGM_FI_DEV_XID_ERRORS", np.zeros(n), **lab)

    calls = _steady(rng, n, rps * STEP)
    r = Target(store, ts, "redis", "cache-0:9121")
    r.gauge("redis_up", np.ones(n))
    r.counter("redis_keyspace_hits_total", calls * 0.8, db="db0")
    r.counter("redis_keyspace_misses_total", calls * 0.2, db="db0")
    r.counter("redis_evicted_keys_total", np.zeros(n))
    r.gauge("redis_memory_max_bytes", np.full(n, 16.0 * 2**30))
    r.gauge("redis_memory_used_bytes", _steady(rng, n, 0.5 * 16.0 * 2**30, 0.001))
    r.counter("redis_commands_total", calls, cmd="get")
    r.counter("redis_commands_duration_seconds_total", calls * 0.0002, cmd="get")

    q = Target(store, ts, "qdrant", "vectordb-0:6333")
    search = {"method": "POST", "endpoint": "/collections/{name}/points/search", "status": "200"}
    hits = calls * 0.2
    _hist(q, "rest_responses_duration_seconds", _steady(rng, n, 0.02), hits, QDRANT_S, **search)
    q.counter("rest_responses_total", hits, **search)
    q.counter("process_major_page_faults_total", np.zeros(n))
    q.gauge("collections_total", np.ones(n))
    return store


def write_stack(path: Path, end: float, onset: float) -> Path:
    """The stack's history as OpenMetrics text at `path`, for `promtool tsdb create-blocks-from`."""
    write_openmetrics(stack_store(end, onset), str(path))
    return path
