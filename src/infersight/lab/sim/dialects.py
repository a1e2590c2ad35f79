"""One run, many exporters: the serving engine as vLLM, Triton, TGI or infersight's own names.

Labels follow the real exporters: the engine at `node-3:8000`, dcgm-exporter at `node-3:9400`
with `Hostname="node-3"`, node_exporter at `node-3:9100`, the shared dependencies as their own
instances (`vectordb-0`, `cache-0`), and `up` per target.

A Python engine (vLLM's API server, infersight's own) also exposes prometheus_client's default
collectors on its target: `python_info`, `python_gc_collections_total{generation}` and the
`process_*` family, `process_start_time_seconds` included. TGI's router (Rust) and Triton (C++)
expose none of them; their restarts show as `up` 0, counters back at zero and, for Triton, the
new `nv_model_load_duration_secs`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from infersight.lab.sim import hosts, kubernetes
from infersight.lab.sim.canonical import TOKENS_PER_REQUEST
from infersight.lab.sim.emitter import (
    Z_LEVELS,
    Target,
    geometric,
    lognormal_table,
    uniform_table,
)
from infersight.lab.sim.infra import GC_YOUNGER_PER_OLDER
from infersight.lab.sim.knobs import Exposure
from infersight.lab.sim.latency import LEVELS, MASS
from infersight.lab.sim.run import SimResult
from infersight.sources.raw import RawStore

VLLM_REQUEST_S = (
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
    120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0,
)  # fmt: skip
#: vLLM's own buckets (vllm/v1/metrics/loggers.py): time to first token, and between tokens
VLLM_TTFT_S = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)  # fmt: skip
VLLM_ITL_S = (
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0,
)  # fmt: skip
#: the share of a request's time on the GPU spent on its prompt (prefill) rather than on
#: generating its tokens (decode): a RAG chat's prompt carries the retrieved context
PREFILL_SHARE = 0.2
TGI_S = geometric(0.00015, 1.5, 35)
NATIVE_S = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
BATCH_SIZE_BUCKETS = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0)


class _Node:
    """Per-instance views of the trace an engine exporter needs."""

    def __init__(self, res: SimResult, j: int) -> None:
        i, dt = res.trace.inst, res.step
        self.res, self.j, self.dt = res, j, dt
        self.col = {k: v[:, j] for k, v in i.items()}
        self.e2e = res.tables.e2e[:, j, :]
        self.ok = self.col["served"] * dt
        self.err = self.col["errors"] * dt
        self.rej = self.col["rejected"] * dt
        self.done = self.col["finished"] * dt
        qw = self.col["queue_wait"]
        self.queue_table = qw[:, None] * (0.7 + 0.6 * LEVELS)
        sig = res.config.forward_sigma
        self.fwd_table = lognormal_table(
            self.col["batch_s"] * np.exp(-0.5 * sig * sig), sig, Z_LEVELS
        )
        self.fill_table = uniform_table(self.col["batch_wait_max"])
        self.batches = np.where(
            self.col["batch_size"] > 0, self.done / np.maximum(self.col["batch_size"], 1e-9), 0.0
        )


PYTHON_VERSION = ("3", "12", "9")
#: what prometheus_client's default collectors add to a Python engine's target
PYTHON_RUNTIME = (
    "python_info",
    "python_gc_collections_total",
    "process_start_time_seconds",
    "process_resident_memory_bytes",
    "process_cpu_seconds_total",
)


def _engine(store: RawStore, res: SimResult, v: _Node, job: str, port: int) -> Target:
    """The engine's scrape target: answers while its process runs (`up` 0 while it is down or
    loading the model); counters restart from zero with each new process."""
    c = v.col
    return Target(store, res.times, job, f"node-{v.j}:{port}", c["alive"], c["generation"])


def python_runtime(t: Target, v: _Node) -> None:
    """prometheus_client's default collectors (gc_collector.py, process_collector.py, platform)."""
    c, dt = v.col, v.dt
    major, minor, patch = PYTHON_VERSION
    info = {"implementation": "CPython", "major": major, "minor": minor, "patchlevel": patch}
    t.gauge("python_info", np.ones(c["up"].size), version=".".join(PYTHON_VERSION), **info)
    full = c["gc_rate"] * dt  # generation-2 collections in each step
    for gen in range(3):
        per_step = full * GC_YOUNGER_PER_OLDER ** (2 - gen)
        t.counter("python_gc_collections_total", per_step, generation=str(gen))
    t.gauge("process_start_time_seconds", np.round(v.res.t0 + c["started"], 2))
    t.gauge("process_resident_memory_bytes", c["rss"])
    t.counter("process_cpu_seconds_total", c["cpu_cores"] * dt)


def vllm(store: RawStore, res: SimResult) -> None:
    for j in range(res.trace.inst["up"].shape[1]):
        v = _Node(res, j)
        t = _engine(store, res, v, "vllm", 8000)
        m = {"model_name": "chat-model", "engine": "0"}
        t.gauge("vllm:num_requests_waiting", v.col["queue"], **m)
        t.gauge("vllm:num_requests_running", v.col["batch_size"], **m)
        t.gauge("vllm:kv_cache_usage_perc", v.col["kv_ratio"], **m)
        t.counter("vllm:request_success_total", v.ok, finished_reason="stop", **m)
        t.counter("vllm:request_success_total", v.err, finished_reason="abort", **m)
        t.counter("vllm:generation_tokens_total", v.ok * TOKENS_PER_REQUEST, **m)
        t.counter("vllm:num_preemptions_total", np.zeros(res.times.size), **m)
        t.histogram("vllm:e2e_request_latency_seconds", v.e2e, v.done, VLLM_REQUEST_S, m)
        t.histogram("vllm:request_queue_time_seconds", v.queue_table, v.done, VLLM_REQUEST_S, m)
        t.histogram("vllm:request_inference_time_seconds", v.fwd_table, v.done, VLLM_REQUEST_S, m)
        vllm_token_timings(t, v, m)
        python_runtime(t, v)


def vllm_token_timings(t: Target, v: _Node, m: dict[str, str]) -> None:
    """TTFT, ITL, prefill and decode as vLLM records them. The model's engine runs a request in
    batch iterations of `batch_s`: the gap between two tokens is one iteration (one ITL sample
    per gap), a request's time on the GPU splits into its prefill and its decode, and the first
    token comes after the queue and the prefill."""
    prefill = v.fwd_table * PREFILL_SHARE
    decode = v.fwd_table * (1.0 - PREFILL_SHARE)
    gaps = TOKENS_PER_REQUEST - 1.0
    t.histogram("vllm:time_to_first_token_seconds", v.queue_table + prefill, v.done, VLLM_TTFT_S, m)
    t.histogram("vllm:inter_token_latency_seconds", v.fwd_table, v.done * gaps, VLLM_ITL_S, m)
    t.histogram("vllm:request_prefill_time_seconds", prefill, v.done, VLLM_REQUEST_S, m)
    t.histogram("vllm:request_decode_time_seconds", decode, v.done, VLLM_REQUEST_S, m)


def triton(store: RawStore, res: SimResult) -> None:
    cfg = res.config
    for j in range(res.trace.inst["up"].shape[1]):
        v = _Node(res, j)
        t = _engine(store, res, v, "triton", 8002)
        m = {"model": "chat-model", "version": "1"}
        # Triton runs a request whose client has already given up (an HTTP disconnect does not
        # cancel it) and counts it a success, with its whole wait: a client timeout is not a
        # Triton failure, and the queue time keeps growing while the clients time out
        gave_up = v.col["timeouts"] * v.dt
        t.counter("nv_inference_request_success", v.done, **m)
        t.counter("nv_inference_request_failure", v.rej, reason="REJECTED", **m)
        t.counter("nv_inference_request_failure", v.err - v.rej - gave_up, reason="OTHER", **m)
        t.counter("nv_inference_count", v.done, **m)
        t.counter("nv_inference_exec_count", v.batches, **m)
        t.gauge("nv_inference_pending_request_count", v.col["queue"], **m)
        t.counter("nv_inference_queue_duration_us", v.col["queue_wait"] * v.done * 1e6, **m)
        mean = np.nan_to_num(v.e2e) @ MASS
        t.counter("nv_inference_request_duration_us", mean * v.done * 1e6, **m)
        t.counter("nv_inference_compute_infer_duration_us", v.col["batch_s"] * v.done * 1e6, **m)
        t.gauge("nv_model_load_duration_secs", v.col["load_time"], **m)
        g = {"gpu_uuid": f"GPU-{j:08x}-sim"}
        t.gauge("nv_gpu_utilization", v.col["gpu_util"], **g)
        t.gauge("nv_gpu_memory_used_bytes", v.col["vram"], **g)
        t.gauge("nv_gpu_memory_total_bytes", np.full(res.times.size, cfg.vram_total), **g)
        t.gauge("nv_gpu_power_usage", v.col["power"], **g)


def tgi(store: RawStore, res: SimResult) -> None:
    for j in range(res.trace.inst["up"].shape[1]):
        v = _Node(res, j)
        t = _engine(store, res, v, "tgi", 8080)
        t.gauge("tgi_queue_size", v.col["queue"])
        t.gauge("tgi_batch_current_size", v.col["batch_size"])
        t.counter("tgi_request_count", v.ok + v.err)
        t.counter("tgi_request_success", v.ok)
        t.counter("tgi_request_failure", v.rej, err="overloaded")
        t.counter("tgi_request_failure", v.err - v.rej, err="timeout")
        t.histogram("tgi_request_duration", v.e2e, v.done, TGI_S)
        t.histogram("tgi_request_queue_duration", v.queue_table, v.done, TGI_S)
        t.histogram(
            "tgi_batch_forward_duration", v.fwd_table, v.batches, TGI_S, {"method": "decode"}
        )
        t.counter("tgi_request_generated_tokens_sum", v.ok * TOKENS_PER_REQUEST)
        t.counter("tgi_request_generated_tokens_count", v.ok)


def native(store: RawStore, res: SimResult) -> None:
    fl = res.trace.fleet
    m_inst = res.trace.inst["up"].shape[1]
    for j in range(m_inst):
        v = _Node(res, j)
        c = v.col
        t = _engine(store, res, v, "infersight", 8000)
        t.counter("infersight_requests_total", v.ok, outcome="ok")
        t.counter("infersight_requests_total", v.err - v.rej, outcome="error")
        t.counter("infersight_requests_total", v.rej, outcome="rejected")
        t.counter("infersight_rejections_total", v.rej)
        t.histogram("infersight_request_duration_seconds", v.e2e, v.done, NATIVE_S)
        t.gauge("infersight_queue_length", c["queue"])
        t.histogram("infersight_queue_wait_seconds", v.queue_table, v.done, NATIVE_S)
        t.gauge("infersight_workers_busy", c["in_flight"])
        t.gauge("infersight_workers_limit", c["workers"])
        t.counter("infersight_gc_pause_seconds_total", c["gc_ratio"] * v.dt)
        bs = np.repeat(c["batch_size"][:, None], LEVELS.size, axis=1)
        t.histogram("infersight_batch_size", bs, v.batches, BATCH_SIZE_BUCKETS)
        t.histogram("infersight_batch_fill_wait_seconds", v.fill_table, v.done, NATIVE_S)
        t.gauge("infersight_batch_window_seconds", c["window"])
        t.histogram("infersight_batch_duration_seconds", v.fwd_table, v.batches, NATIVE_S)
        t.gauge("infersight_gpu_processes", c["gpu_processes"])
        t.counter("infersight_oom_total", c["oom"])
        t.gauge("infersight_model_load_seconds", c["load_time"])
        share = v.done / np.maximum(np.nansum(res.trace.inst["finished"], axis=1) * v.dt, 1e-9)
        vq = v.done * (1.0 - fl["hit"]) * res.config.vector_queries_per_miss
        t.histogram(
            "infersight_dependency_duration_seconds",
            res.tables.vector,
            vq,
            NATIVE_S,
            {"dependency": "vector_db"},
        )
        t.counter("infersight_cache_requests_total", v.done * fl["hit"], result="hit")
        t.counter("infersight_cache_requests_total", v.done * (1.0 - fl["hit"]), result="miss")
        t.gauge("infersight_cache_concurrent_loads", fl["concurrent_loads"] * share)
        t.counter("infersight_singleflight_joins_total", fl["joins"] * share * v.dt)
        python_runtime(t, v)


ENGINES: dict[str, Callable[[RawStore, SimResult], None]] = {
    "vllm": vllm,
    "triton": triton,
    "tgi": tgi,
    "native": native,
}
VECTOR_DBS: dict[str, Callable[[RawStore, SimResult], None]] = {
    "milvus": hosts.milvus,
    "qdrant": hosts.qdrant,
}
DEFAULT_VECTOR_DB = {"vllm": "milvus", "tgi": "milvus", "triton": "qdrant", "native": "qdrant"}
DIALECTS = tuple(ENGINES)
#: dialects of a whole stack rather than one engine: the engine each serves with
STACKS = {kubernetes.DIALECT: kubernetes.ENGINE}
HOSTS: dict[str, Callable[[RawStore, SimResult], None]] = {
    "dcgm": hosts.dcgm,
    "node": hosts.node_exporter,
    "redis": hosts.redis,
}
#: the exporters around the engine that `Exposure.without` may leave undeployed: the hosts'
#: exporters, the vector DB's own, and the Python runtime's collectors on the engine's target
EXPORTERS = (*HOSTS, "vector_db", "python_runtime")


class UnknownDialectError(ValueError):
    pass


def emit(
    res: SimResult,
    dialect: str = "vllm",
    vector_db: str | None = None,
    exposure: Exposure | None = None,
) -> RawStore:
    """The run as raw exporter samples: engine dialect + dcgm + node + redis + a vector DB,
    less the exporters `exposure` leaves out, scraped and relabelled as it says. A stack's
    dialect (`kubernetes`) is its engine's, as that stack scrapes and describes it."""
    engine = STACKS.get(dialect, dialect)
    if engine not in ENGINES:
        choices = [*ENGINES, *STACKS]
        raise UnknownDialectError(f"unknown dialect {dialect!r}; choose one of {choices}")
    vdb = vector_db or DEFAULT_VECTOR_DB[engine]
    if vdb not in VECTOR_DBS:
        raise UnknownDialectError(f"unknown vector DB {vdb!r}; choose one of {list(VECTOR_DBS)}")
    exp = exposure or Exposure()
    unknown = set(exp.without) - set(EXPORTERS)
    if unknown:
        raise UnknownDialectError(
            f"unknown exporter {sorted(unknown)[0]!r}; choose from {list(EXPORTERS)}"
        )
    store = RawStore()
    ENGINES[engine](store, res)
    for name, write in HOSTS.items():
        if name not in exp.without:
            write(store, res)
    if "vector_db" not in exp.without:
        VECTOR_DBS[vdb](store, res)
    if dialect == kubernetes.DIALECT:
        store = kubernetes.relabel(store, res, vdb)
    if exp.is_default:
        return store
    return relabel(store, res, exp)


def relabel(store: RawStore, res: SimResult, exp: Exposure) -> RawStore:
    """What reaches the monitoring system: samples on the scrape grid only, dropped and renamed
    metric names applied (the Python runtime's names, when it is left out, dropped too)."""
    step = res.step
    every = 1 if exp.scrape_s is None else round(exp.scrape_s / step)
    if every < 1 or abs(every * step - (exp.scrape_s or step)) > 1e-6 * step:
        raise ValueError(f"scrape interval {exp.scrape_s} s is not a multiple of the {step} s step")
    drop = set(exp.drop_metrics)
    if "python_runtime" in exp.without:
        drop |= set(PYTHON_RUNTIME)
    rename = dict(exp.rename_metrics)
    t0 = res.t0
    out = RawStore()
    for s in store:
        if s.name in drop:
            continue
        keep = np.rint((s.ts - t0) / step).astype(np.int64) % every == 0
        out.add_many(rename.get(s.name, s.name), s.labels, s.ts[keep], s.values[keep])
    return out
