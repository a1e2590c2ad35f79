"""The model's own observation: its trace as canonical signals on the frame's grid.

GPU nodes are `node-<i>`; the shared dependencies are `vectordb-0` and `cache-0`; the load
balancer is `gateway-0`. Units as signals.yaml: seconds, ratios 0–1, bytes, °C, MHz, W.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from infersight.frame import MetricFrame, SignalSeries
from infersight.lab.sim.config import GIB, FleetConfig
from infersight.lab.sim.deps import VECTOR_HOST_RESERVED
from infersight.lab.sim.drivers import FloatArray
from infersight.lab.sim.latency import MASS, fleet_quantile, quantile_at
from infersight.lab.sim.model import Trace
from infersight.signals import all_signals

VECTOR_DB = "vectordb-0"
CACHE = "cache-0"
GATEWAY = "gateway-0"
TOKENS_PER_REQUEST = 160.0
WINDOW_STEPS_S = 300.0  # "in the window" counts use Prometheus' usual 5 m
HOST_RAM = 512.0 * GIB


@dataclass(frozen=True)
class Tables:
    e2e: npt.NDArray[np.floating[Any]]  # (n, N, L), float32: request times need no more
    vector: FloatArray  # (n, L)


def node_names(instances: int) -> list[str]:
    return [f"node-{i}" for i in range(instances)]


def windowed_sum(x: FloatArray, steps: int) -> FloatArray:
    """Sum over the last `steps` grid points (axis 0), as increase() over a window."""
    c = np.cumsum(np.nan_to_num(x), axis=0)
    out = c.copy()
    out[steps:] -= c[:-steps]
    return out


def forward_p99(cfg: FleetConfig, batch_s: FloatArray) -> FloatArray:
    s = cfg.forward_sigma
    out: FloatArray = batch_s * float(np.exp(2.326 * s - 0.5 * s * s))
    return out


def node_mem_available(up: npt.NDArray[np.bool_]) -> FloatArray:
    """A GPU node's available host memory: the OS and agents, plus the engine while it runs."""
    out: FloatArray = 1.0 - (8.0 * GIB + (3.0 * GIB) * up.astype(np.float64)) / HOST_RAM
    return out


def node_signals(tr: Trace, tab: Tables, cfg: FleetConfig, dt: float) -> dict[str, FloatArray]:
    """(n, N) arrays for the GPU nodes, keyed by canonical signal."""
    i = tr.inst
    up = i["up"] > 0
    total = i["served"] + i["errors"]
    w = max(1, round(WINDOW_STEPS_S / dt))
    mean_e2e = np.tensordot(tab.e2e, MASS, axes=([-1], [0]))
    out = {
        "service.request_rate": i["finished"],
        "service.queue_length": i["queue"],
        "service.queue_wait_p99": 1.294 * i["queue_wait"],
        "service.queue_wait_avg": i["queue_wait"],
        "service.e2e_latency_p99": quantile_at(tab.e2e, 0.99),
        "service.e2e_latency_p50": quantile_at(tab.e2e, 0.5),
        "service.e2e_latency_avg": mean_e2e,
        "service.error_rate": i["errors"],
        "service.error_ratio": np.where(total > 0, i["errors"] / np.maximum(total, 1e-9), 0.0),
        "service.rejection_rate": i["rejected"],
        "service.threadpool_busy_ratio": i["in_flight"] / i["workers"],
        "service.gc_collections_rate": i["gc_rate"],
        "service.gc_pause_ratio": i["gc_ratio"],
        "service.process_rss": i["rss"],
        "service.process_cpu": i["cpu_cores"],
        "service.restarts": windowed_sum(np.diff(i["restarts"], axis=0, prepend=0.0), w),
        "inference.batch_size": i["batch_size"],
        "inference.batch_fill_wait_p99": 0.99 * i["batch_wait_max"],
        "inference.batch_window": i["window"],
        "inference.forward_time_avg": i["batch_s"],
        "inference.forward_time_p99": forward_p99(cfg, i["batch_s"]),
        "inference.running_requests": i["batch_size"],
        "inference.generation_tokens_rate": i["served"] * TOKENS_PER_REQUEST,
        "inference.kv_cache_usage": i["kv_ratio"],
        "inference.gpu_util": i["gpu_util"],
        "inference.tensor_active": 0.45 * i["gpu_util"] * i["clock"] / cfg.sm_clock_nominal_mhz,
        "inference.gpu_mem_used_ratio": i["vram"] / cfg.vram_total,
        "inference.gpu_mem_used_bytes": i["vram"],
        "inference.gpu_processes": i["gpu_processes"],
        "inference.oom_rate": i["oom"] / dt,
        "inference.model_load_time": i["load_time"],
        "infra.target_up": i["alive"],  # scraped at the step's end: a crash shows at once
        "infra.gpu_temp_c": i["temp"],
        "infra.gpu_sm_clock_mhz": i["clock"],
        "infra.gpu_power_w": i["power"],
        "infra.gpu_throttle": i["throttle"],
        "infra.gpu_xid": i["xid"],
        "infra.gpu_ecc_dbe": windowed_sum(np.diff(i["ecc"], axis=0, prepend=0.0), w),
        "infra.gpu_pcie_replay": i["pcie_rate"],
        "infra.cpu_util": i["cpu_util"],
        "infra.cpu_pressure": i["cpu_pressure"],
        "infra.mem_available_ratio": node_mem_available(up),
        "infra.tcp_retrans_ratio": i["retrans"],
        "infra.nic_drops": i["nic_drops"],
        "infra.disk_util": i["disk_util"],
        "infra.disk_await": i["disk_await"],
        "infra.disk_queue": i["disk_queue"],
        "infra.io_pressure": i["io_pressure"],
        "infra.swap_used_ratio": 0.0 * up,
        "infra.swap_in_rate": 0.0 * up,
        "infra.major_faults": 2.0 + 0.0 * up,
        "infra.mem_pressure": 0.0 * up,
        "infra.oom_kills": windowed_sum(i["memkill"], w),
        "infra.listen_overflow": 0.0 * up,
    }
    engine_down = ~up
    for k, v in out.items():
        if k.startswith(("service.", "inference.")) and k not in _DEVICE_SIGNALS:
            out[k] = np.where(engine_down, np.nan, v)
    return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}


#: inference signals read from the GPU (dcgm), which a dead serving process does not silence
_DEVICE_SIGNALS = frozenset(
    {"inference.gpu_util", "inference.tensor_active", "inference.gpu_mem_used_ratio",
     "inference.gpu_mem_used_bytes"}
)  # fmt: skip


def shared_signals(tr: Trace, tab: Tables, cfg: FleetConfig) -> dict[str, dict[str, FloatArray]]:
    """(n,) arrays for the shared instances: {instance: {signal: values}}."""
    f, i = tr.fleet, tr.inst
    n = f["hit"].size
    ones = np.ones(n)
    ram = cfg.vector_ram
    used = f["resident"]  # share of the index in RAM; the rest of RAM stays free
    avail = np.clip(
        1.0 - (VECTOR_HOST_RESERVED + used * (ram - VECTOR_HOST_RESERVED)) / ram, 0.0, 1.0
    )
    avail = np.maximum(avail, 0.02)
    swapping = f["p_fault"] > 0
    vector = {
        "dependency.vector_query_p99": quantile_at(tab.vector, 0.99),
        "dependency.vector_queue_wait_p99": 2.0 * f["vector_queue_wait"],
        "dependency.vector_major_faults_rate": f["major_faults"],
        "dependency.retrieval_request_rate": f["vector_qps"],
        "infra.target_up": ones,
        "infra.mem_available_ratio": np.where(swapping, 0.015, avail),
        "infra.swap_used_ratio": f["swap_used"],
        "infra.swap_in_rate": 0.5 * f["major_faults"],
        "infra.major_faults": f["major_faults"],
        "infra.mem_pressure": np.clip(f["p_fault"] * f["vector_disk_util"], 0.0, 1.0),
        "infra.cpu_util": f["vector_cpu"],
        "infra.disk_util": f["vector_disk_util"],
        "infra.io_pressure": np.clip(f["vector_disk_util"] - 0.3, 0.0, 1.0),
        "infra.oom_kills": 0.0 * ones,
        "infra.listen_overflow": 0.0 * ones,
        "infra.nic_drops": 0.0 * ones,
    }
    lookups = np.nansum(i["finished"], axis=1)
    cache = {
        "dependency.cache_hit_ratio": f["hit"],
        "dependency.cache_miss_rate": lookups * (1.0 - f["hit"]),
        "dependency.service_up": ones,
        "dependency.cache_evictions": f["evictions"],
        "dependency.cache_mem_ratio": f["cache_mem"],
        "dependency.cache_cmd_latency_avg": f["cache_cmd"],
        "dependency.cache_concurrent_loads": f["concurrent_loads"],
        "dependency.singleflight_joins_rate": f["joins"],
        "infra.target_up": ones,
    }
    served = np.nan_to_num(i["finished"])
    # the gateway counts responses by status: every request ends ok or as an error
    errs = i["errors"].sum(axis=1)
    total = i["served"].sum(axis=1) + errs
    mean_e2e = np.tensordot(tab.e2e, MASS, axes=([-1], [0]))
    w = np.where(np.isfinite(mean_e2e), served, 0.0)
    avg = (np.nan_to_num(mean_e2e) * w).sum(axis=1) / np.maximum(w.sum(axis=1), 1e-9)
    p99 = fleet_quantile(tab.e2e, served, 0.99)
    gateway = {
        "access.request_rate": f["offered"],
        "access.request_latency_p99": p99 + 0.002,
        "access.upstream_latency_p99": p99,
        "access.upstream_latency_avg": avg,
        "access.5xx_ratio": errs / np.maximum(total, 1e-9),
        "access.upstream_5xx_ratio": errs / np.maximum(total, 1e-9),
    }
    return {VECTOR_DB: vector, CACHE: cache, GATEWAY: gateway}


def build_frame(tr: Trace, tab: Tables, cfg: FleetConfig, start: float, dt: float) -> MetricFrame:
    n, m = tr.inst["up"].shape
    nodes = tuple(node_names(m))
    series: dict[str, SignalSeries] = {}
    shared: dict[str, tuple[list[str], list[FloatArray]]] = {}
    for inst, sigs in shared_signals(tr, tab, cfg).items():
        for sig, arr in sigs.items():
            names, vals = shared.setdefault(sig, ([], []))
            names.append(inst)
            vals.append(np.asarray(arr, dtype=np.float64))
    per_node = node_signals(tr, tab, cfg, dt)
    for sig in all_signals():
        # one signal at a time, its (n, N) array released as soon as it is laid out (m, n):
        # the frame is built without holding every node signal twice
        node = per_node.pop(sig, None)
        names = list(nodes) if node is not None else []
        parts: list[FloatArray] = [node.T] if node is not None else []
        del node
        if sig in shared:
            names += shared[sig][0]
            parts += [v[None, :] for v in shared.pop(sig)[1]]
        if parts:
            series[sig] = SignalSeries(tuple(names), np.ascontiguousarray(np.vstack(parts)))
    return MetricFrame(start, dt, n, series)
