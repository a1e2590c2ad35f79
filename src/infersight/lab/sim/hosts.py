"""Exporters around the engine: dcgm-exporter, node_exporter, redis_exporter, Milvus, Qdrant."""

from __future__ import annotations

import numpy as np

from infersight.lab.sim.canonical import (
    CACHE,
    HOST_RAM,
    VECTOR_DB,
    node_mem_available,
    shared_signals,
)
from infersight.lab.sim.config import GIB
from infersight.lab.sim.drivers import FloatArray
from infersight.lab.sim.emitter import Target, exponential_table, geometric
from infersight.lab.sim.run import SimResult
from infersight.sources.raw import RawStore

MIB = float(2**20)
FB_RESERVED_MIB = 512.0
CPUS = 4
MILVUS_MS = geometric(1.0, 2.0, 18)  # 1 … 131072 ms
QDRANT_S = (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0)


def dcgm(store: RawStore, res: SimResult) -> None:
    i, cfg = res.trace.inst, res.config
    for j in range(i["up"].shape[1]):
        host = f"node-{j}"
        t = Target(store, res.times, "dcgm", f"{host}:9400", Hostname=host)
        lab = {"gpu": "0", "UUID": f"GPU-{j:08x}-sim", "modelName": "NVIDIA H100 80GB HBM3"}
        used = i["vram"][:, j] / MIB
        t.gauge("DCGM_FI_DEV_GPU_UTIL", np.round(100.0 * i["gpu_util"][:, j]), **lab)
        t.gauge("DCGM_FI_DEV_FB_USED", np.round(used), **lab)
        free = cfg.vram_total / MIB - used - FB_RESERVED_MIB
        t.gauge("DCGM_FI_DEV_FB_FREE", np.round(free), **lab)
        t.gauge("DCGM_FI_DEV_FB_RESERVED", np.full(used.size, FB_RESERVED_MIB), **lab)
        t.gauge("DCGM_FI_DEV_GPU_TEMP", np.round(i["temp"][:, j]), **lab)
        t.gauge("DCGM_FI_DEV_SM_CLOCK", np.round(i["clock"][:, j]), **lab)
        t.gauge("DCGM_FI_DEV_POWER_USAGE", i["power"][:, j], **lab)
        busy = i["gpu_util"][:, j] > 0.9
        reasons = 0x20 * i["throttle"][:, j] + 0x40 * i["throttle"][:, j] + 0x4 * busy
        t.gauge("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", reasons, **lab)
        t.gauge("DCGM_FI_DEV_XID_ERRORS", i["xid"][:, j], **lab)
        t.gauge("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", i["ecc"][:, j], **lab)
        pcie = np.cumsum(i["pcie_rate"][:, j] * res.step)
        t.gauge("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", np.floor(pcie), **lab)
        tensor = 0.45 * i["gpu_util"][:, j] * i["clock"][:, j] / cfg.sm_clock_nominal_mhz
        t.gauge("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", tensor, **lab)


def _node(store: RawStore, res: SimResult, host: str, v: dict[str, FloatArray]) -> None:
    dt = res.step
    t = Target(store, res.times, "node", f"{host}:9100")
    for c in range(CPUS):
        t.counter("node_cpu_seconds_total", (1.0 - v["cpu"]) * dt, cpu=str(c), mode="idle")
        t.counter("node_cpu_seconds_total", v["cpu"] * dt, cpu=str(c), mode="user")
    t.counter("node_pressure_cpu_waiting_seconds_total", v["cpu_pressure"] * dt)
    t.gauge("node_memory_MemTotal_bytes", np.full(res.times.size, v["ram"][0]))
    t.gauge("node_memory_MemAvailable_bytes", v["avail"] * v["ram"])
    t.gauge("node_memory_SwapTotal_bytes", np.full(res.times.size, 32.0 * GIB))
    t.gauge("node_memory_SwapFree_bytes", (1.0 - v["swap"]) * 32.0 * GIB)
    t.counter("node_vmstat_pswpin", v["swapin"] * dt)
    t.counter("node_vmstat_pgmajfault", v["majfault"] * dt)
    t.counter("node_vmstat_oom_kill", v.get("oom_kills", np.zeros(res.times.size)))
    t.counter("node_pressure_memory_stalled_seconds_total", v["mem_pressure"] * dt)
    t.counter("node_pressure_io_stalled_seconds_total", v["io_pressure"] * dt)
    t.counter("node_netstat_Tcp_OutSegs", v["segs"] * dt)
    t.counter("node_netstat_Tcp_RetransSegs", v["segs"] * v["retrans"] * dt)
    t.counter("node_netstat_TcpExt_ListenOverflows", np.zeros(res.times.size))
    t.counter("node_network_receive_drop_total", 0.5 * v["drops"] * dt, device="eth0")
    t.counter("node_network_transmit_drop_total", 0.5 * v["drops"] * dt, device="eth0")
    d = {"device": "nvme0n1"}
    t.counter("node_disk_io_time_seconds_total", v["disk_util"] * dt, **d)
    t.counter("node_disk_writes_completed_total", v["writes"] * dt, **d)
    t.counter("node_disk_write_time_seconds_total", v["writes"] * v["await"] * dt, **d)
    t.counter("node_disk_io_time_weighted_seconds_total", v["queue"] * dt, **d)


def node_exporter(store: RawStore, res: SimResult) -> None:
    n = res.times.size
    i = res.trace.inst
    zeros = np.zeros(n)
    avail = node_mem_available(i["up"] > 0)
    for j in range(i["up"].shape[1]):
        _node(
            store,
            res,
            f"node-{j}",
            {
                "cpu": i["cpu_util"][:, j],
                "cpu_pressure": i["cpu_pressure"][:, j],
                "ram": np.full(n, HOST_RAM),
                "avail": avail[:, j],
                "swap": zeros,
                "swapin": zeros,
                "majfault": zeros + 2.0,
                "mem_pressure": zeros,
                "io_pressure": i["io_pressure"][:, j],
                "segs": i["segments"][:, j],
                "retrans": i["retrans"][:, j],
                "drops": i["nic_drops"][:, j],
                "disk_util": i["disk_util"][:, j],
                "writes": i["disk_writes"][:, j],
                "await": i["disk_await"][:, j],
                "queue": i["disk_queue"][:, j],
                "oom_kills": i["memkill"][:, j],
            },
        )
    v = shared_signals(res.trace, res.tables, res.config)[VECTOR_DB]
    fl = res.trace.fleet
    _node(
        store,
        res,
        VECTOR_DB,
        {
            "cpu": v["infra.cpu_util"],
            "cpu_pressure": zeros,
            "ram": np.full(n, res.config.vector_ram),
            "avail": v["infra.mem_available_ratio"],
            "swap": v["infra.swap_used_ratio"],
            "swapin": v["infra.swap_in_rate"],
            "majfault": v["infra.major_faults"],
            "mem_pressure": v["infra.mem_pressure"],
            "io_pressure": v["infra.io_pressure"],
            "segs": fl["vector_qps"] * 20.0 + 200.0,
            "retrans": np.full(n, res.config.base_loss),
            "drops": zeros,
            "disk_util": v["infra.disk_util"],
            "writes": zeros + 20.0,
            "await": np.full(n, 0.0005),
            "queue": fl["vector_disk_util"] / np.maximum(1.0 - fl["vector_disk_util"], 0.02),
        },
    )


def redis(store: RawStore, res: SimResult) -> None:
    fl, dt = res.trace.fleet, res.step
    t = Target(store, res.times, "redis", f"{CACHE}:9121")
    calls = np.nansum(res.trace.inst["finished"], axis=1) * dt
    t.gauge("redis_up", np.ones(res.times.size))
    t.counter("redis_keyspace_hits_total", calls * fl["hit"], db="db0")
    t.counter("redis_keyspace_misses_total", calls * (1.0 - fl["hit"]), db="db0")
    t.counter("redis_evicted_keys_total", fl["evictions"] * dt)
    maxmem = 16.0 * GIB
    t.gauge("redis_memory_max_bytes", np.full(res.times.size, maxmem))
    t.gauge("redis_memory_used_bytes", fl["cache_mem"] * maxmem)
    t.counter("redis_commands_total", calls, cmd="get")
    t.counter("redis_commands_duration_seconds_total", calls * fl["cache_cmd"], cmd="get")


def milvus(store: RawStore, res: SimResult) -> None:
    fl, dt = res.trace.fleet, res.step
    t = Target(store, res.times, "milvus", f"{VECTOR_DB}:9091")
    cnt = fl["vector_qps"] * dt
    lab = {"node_id": "1", "query_type": "search"}
    t.histogram("milvus_proxy_sq_latency", res.tables.vector, cnt, MILVUS_MS, lab, scale=1000.0)
    queue = exponential_table(np.maximum(fl["vector_queue_wait"], 1e-6))
    t.histogram("milvus_querynode_sq_queue_latency", queue, cnt, MILVUS_MS, lab, scale=1000.0)
    t.counter("milvus_proxy_req_count", cnt, function_name="Search", status="success")


def qdrant(store: RawStore, res: SimResult) -> None:
    fl, dt = res.trace.fleet, res.step
    t = Target(store, res.times, "qdrant", f"{VECTOR_DB}:6333")
    cnt = fl["vector_qps"] * dt
    lab = {"method": "POST", "endpoint": "/collections/{name}/points/search", "status": "200"}
    t.histogram("rest_responses_duration_seconds", res.tables.vector, cnt, QDRANT_S, lab)
    t.counter("rest_responses_total", cnt, **lab)
    t.counter("process_major_page_faults_total", fl["major_faults"] * dt)
    t.gauge("collections_total", np.ones(res.times.size))
