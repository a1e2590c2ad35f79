"""Each exporter family's mappings on realistic exposition text, units included.

Every test renders 20 minutes of scrapes (every 15 s) the way the exporter exposes them (its
metric names, label sets, units), parses the text with the product exposition parser, runs
`canonical_frame` and checks canonical values whose truth is known from the generator.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pytest

from infersight.exporters import load_catalog
from infersight.sources.exposition import parse_text, to_store
from infersight.sources.local import LocalResult, canonical_frame
from infersight.sources.raw import RawStore

T0 = 1_700_000_000.0
STEP = 15.0
SCRAPES = 81  # 20 minutes
INF = math.inf


class Scrape:
    """One /metrics page: `# TYPE` once per family, then its samples."""

    def __init__(self, t: float) -> None:
        self.t = t  # seconds since the exporter started
        self.families: dict[str, tuple[str, list[str]]] = {}

    def _add(self, family: str, kind: str, name: str, labels: dict[str, str], v: float) -> None:
        lbl = ",".join(f'{k}="{val}"' for k, val in labels.items())
        text = f"{name}{{{lbl}}}" if lbl else name
        self.families.setdefault(family, (kind, []))[1].append(f"{text} {v!r}")

    def gauge(self, name: str, labels: dict[str, str], value: float) -> None:
        self._add(name, "gauge", name, labels, value)

    def counter(self, name: str, labels: dict[str, str], per_s: float) -> None:
        self._add(name, "counter", name, labels, per_s * self.t)

    def histogram(
        self, name: str, labels: dict[str, str], bounds: Sequence[float], per_s: Sequence[float]
    ) -> None:
        """Buckets with `per_s` observations per second falling in each (non-cumulative)."""
        total = 0.0
        for le, r in zip(bounds, per_s, strict=True):
            total += r * self.t
            le_text = "+Inf" if math.isinf(le) else repr(le)
            self._add(name, "histogram", f"{name}_bucket", {**labels, "le": le_text}, total)
        self._add(name, "histogram", f"{name}_sum", labels, 0.1 * total)
        self._add(name, "histogram", f"{name}_count", labels, total)

    def text(self) -> str:
        out = []
        for fam, (kind, lines) in self.families.items():
            out += [f"# HELP {fam} generated", f"# TYPE {fam} {kind}", *lines]
        return "\n".join(out) + "\n"


def scrape(store: RawStore, instance: str, page: Callable[[Scrape], None], t_start: float = 3600):
    """SCRAPES scrapes of one target; the exporter has been up `t_start` s at the first."""
    for k in range(SCRAPES):
        s = Scrape(t_start + k * STEP)
        page(s)
        parsed = parse_text(s.text(), f"{instance}@{k}", "text")
        to_store([(parsed, instance)], job="job", start=T0 + k * STEP, interval=STEP, store=store)


def run(store: RawStore, *signals: str) -> LocalResult:
    return canonical_frame(store, load_catalog(), T0 + 600, T0 + 1200, 60.0, "5m", signals)


def last(res: LocalResult, signal: str, ident: str) -> float:
    series = res.frame.get(signal)
    assert series is not None, f"{signal} missing: {res.missing.get(signal)}"
    row = series.row(ident)
    assert row is not None, f"{signal}: no {ident} among {series.instances}"
    return float(row[-1])


# three buckets below +Inf: 50% ≤ 0.1, 40% in (0.1, 0.5], 9.5% in (0.5, 1], 0.5% above
BOUNDS = (0.1, 0.5, 1.0, INF)
SHARES = (0.5, 0.4, 0.095, 0.005)
P99 = 0.5 + 0.5 * (0.99 - 0.9) / 0.095  # linear inside (0.5, 1]
P50 = 0.1  # the rank falls exactly on the first bucket's upper bound


def per_s(rate: float) -> list[float]:
    return [rate * s for s in SHARES]


def approx(x: float) -> object:
    return pytest.approx(x, rel=1e-9)


@pytest.mark.parametrize("old_names", [False, True])
def test_vllm(old_names: bool) -> None:
    m = {"engine": "0", "model_name": "meta-llama/Llama-3.1-8B-Instruct"}

    def page(s: Scrape) -> None:
        s.gauge("vllm:num_requests_running", m, 12)
        s.gauge("vllm:num_requests_waiting", m, 3)
        kv = "vllm:gpu_cache_usage_perc" if old_names else "vllm:kv_cache_usage_perc"
        s.gauge(kv, m, 0.42)
        s.counter("vllm:request_success_total", {**m, "finished_reason": "stop"}, 9.0)
        s.counter("vllm:request_success_total", {**m, "finished_reason": "abort"}, 1.0)
        s.counter("vllm:num_preemptions_total", m, 0.25)
        s.counter("vllm:generation_tokens_total", m, 800.0)
        s.counter("vllm:prefix_cache_queries_total", m, 1000.0)
        s.counter("vllm:prefix_cache_hits_total", m, 600.0)
        s.histogram("vllm:e2e_request_latency_seconds", m, BOUNDS, per_s(10))
        itl = (
            "vllm:time_per_output_token_seconds"
            if old_names
            else "vllm:inter_token_latency_seconds"
        )
        s.histogram(itl, m, BOUNDS, per_s(800))

    store = RawStore()
    scrape(store, "node-7:8000", page)
    res = run(
        store,
        "service.queue_length",
        "inference.kv_cache_usage",
        "service.request_rate",
        "service.error_ratio",
        "service.itl_p99",
        "service.e2e_latency_p99",
        "service.e2e_latency_p50",
        "service.e2e_latency_avg",
        "inference.preemption_rate",
        "inference.prefix_cache_hit_ratio",
        "inference.running_requests",
        "inference.generation_tokens_rate",
    )
    assert last(res, "service.queue_length", "node-7") == 3
    assert last(res, "inference.kv_cache_usage", "node-7") == approx(0.42)
    assert last(res, "inference.running_requests", "node-7") == 12
    assert last(res, "service.request_rate", "node-7") == approx(10.0)
    assert last(res, "service.error_ratio", "node-7") == approx(0.1)
    assert last(res, "inference.preemption_rate", "node-7") == approx(0.25)
    assert last(res, "inference.generation_tokens_rate", "node-7") == approx(800.0)
    assert last(res, "inference.prefix_cache_hit_ratio", "node-7") == approx(0.6)
    assert last(res, "service.itl_p99", "node-7") == approx(P99)
    assert last(res, "service.e2e_latency_p99", "node-7") == approx(P99)
    assert last(res, "service.e2e_latency_p50", "node-7") == approx(P50)
    assert last(res, "service.e2e_latency_avg", "node-7") == approx(0.1)
    assert res.sources["service.itl_p99"] == "vllm"


def test_triton_microseconds_become_seconds() -> None:
    def page(s: Scrape) -> None:
        for model, rate in (("resnet50", 30.0), ("bert", 10.0)):
            m = {"model": model, "version": "1"}
            s.counter("nv_inference_request_success", m, rate)
            s.counter("nv_inference_request_failure", {**m, "reason": "REJECTED"}, 0.5)
            s.counter("nv_inference_request_failure", {**m, "reason": "BACKEND"}, 0.0)
            s.counter("nv_inference_count", m, rate * 4)
            s.counter("nv_inference_exec_count", m, rate)
            s.counter("nv_inference_queue_duration_us", m, rate * 2500)  # 2.5 ms each
            s.counter("nv_inference_request_duration_us", m, rate * 20_000)  # 20 ms each
            s.counter("nv_inference_compute_infer_duration_us", m, rate * 12_000)
            s.gauge("nv_inference_pending_request_count", m, 4)
            s.histogram(
                "nv_inference_first_response_histogram_ms", m, (100, 500, 1000, INF), per_s(rate)
            )
        g = {"gpu_uuid": "GPU-8f2c1a9e-4b7d-11ee-be56-0242ac120002"}
        s.gauge("nv_gpu_utilization", g, 0.83)
        s.gauge("nv_gpu_memory_used_bytes", g, 30e9)
        s.gauge("nv_gpu_memory_total_bytes", g, 80e9)
        s.gauge("nv_gpu_power_usage", g, 310.5)

    store = RawStore()
    scrape(store, "node-3:8002", page)
    res = run(
        store,
        "service.queue_wait_avg",
        "service.e2e_latency_avg",
        "inference.batch_size",
        "inference.forward_time_avg",
        "service.queue_length",
        "service.rejection_rate",
        "service.error_ratio",
        "service.ttft_p99",
        "inference.gpu_util",
        "inference.gpu_mem_used_ratio",
        "infra.gpu_power_w",
    )
    assert last(res, "service.queue_wait_avg", "node-3") == approx(0.0025)
    assert last(res, "service.e2e_latency_avg", "node-3") == approx(0.020)
    assert last(res, "inference.forward_time_avg", "node-3") == approx(0.012)
    assert last(res, "inference.batch_size", "node-3") == approx(4.0)
    assert last(res, "service.queue_length", "node-3") == 8
    assert last(res, "service.rejection_rate", "node-3") == approx(1.0)
    assert last(res, "service.error_ratio", "node-3") == approx(1.0 / 41.0)
    assert last(res, "service.ttft_p99", "node-3") == approx(P99 * 1000 / 1000)
    assert last(res, "inference.gpu_util", "node-3") == approx(0.83)
    assert last(res, "inference.gpu_mem_used_ratio", "node-3") == approx(0.375)
    assert last(res, "infra.gpu_power_w", "node-3") == approx(310.5)


def test_tgi() -> None:
    def page(s: Scrape) -> None:
        s.gauge("tgi_queue_size", {}, 7)
        s.gauge("tgi_batch_current_size", {}, 16)
        s.counter("tgi_request_count", {}, 20.0)
        s.counter("tgi_request_success", {}, 19.0)
        s.counter("tgi_request_failure", {"err": "overloaded"}, 0.75)
        s.counter("tgi_request_failure", {"err": "validation"}, 0.25)
        s.histogram("tgi_request_queue_duration", {}, BOUNDS, per_s(20))
        s.histogram("tgi_request_duration", {}, BOUNDS, per_s(20))
        s.histogram("tgi_request_mean_time_per_token_duration", {}, BOUNDS, per_s(20))
        for method in ("prefill", "decode"):
            s.histogram("tgi_batch_forward_duration", {"method": method}, BOUNDS, per_s(5))

    store = RawStore()
    scrape(store, "tgi-0:80", page)
    res = run(
        store,
        "service.queue_length",
        "inference.batch_size",
        "service.request_rate",
        "service.error_ratio",
        "service.rejection_rate",
        "service.queue_wait_p99",
        "service.itl_p99",
        "inference.prefill_time_p99",
        "inference.forward_time_p99",
    )
    assert last(res, "service.queue_length", "tgi-0") == 7
    assert last(res, "inference.batch_size", "tgi-0") == 16
    assert last(res, "service.request_rate", "tgi-0") == approx(19.0)
    assert last(res, "service.error_ratio", "tgi-0") == approx(0.05)
    assert last(res, "service.rejection_rate", "tgi-0") == approx(0.75)
    for sig in (
        "service.queue_wait_p99",
        "service.itl_p99",
        "inference.prefill_time_p99",
        "inference.forward_time_p99",
    ):
        assert last(res, sig, "tgi-0") == approx(P99)


@pytest.mark.parametrize("host_label", ["Hostname", "hostname"])
def test_dcgm_percent_and_mib(host_label: str) -> None:
    def page(s: Scrape) -> None:
        for gpu, util, used in (("0", 70.0, 30_000.0), ("1", 90.0, 50_000.0)):
            lbl = {
                "gpu": gpu,
                "UUID": f"GPU-{gpu}a1b",
                "pci_bus_id": f"00000000:0{gpu}:00.0",
                "device": f"nvidia{gpu}",
                "modelName": "NVIDIA H100 80GB HBM3",
                host_label: "node-7",
                "DCGM_FI_DRIVER_VERSION": "550.54.15",
            }
            s.gauge("DCGM_FI_DEV_GPU_UTIL", lbl, util)
            s.gauge("DCGM_FI_DEV_FB_USED", lbl, used)
            s.gauge("DCGM_FI_DEV_FB_FREE", lbl, 81_559.0 - used - 400)
            s.gauge("DCGM_FI_DEV_FB_RESERVED", lbl, 400.0)
            s.gauge("DCGM_FI_DEV_GPU_TEMP", lbl, 84.0 if gpu == "1" else 61.0)
            s.gauge("DCGM_FI_DEV_MEMORY_TEMP", lbl, 9223372036854775794.0)  # unsupported
            s.gauge("DCGM_FI_DEV_SM_CLOCK", lbl, 1980.0 if gpu == "0" else 1410.0)
            s.gauge("DCGM_FI_DEV_POWER_USAGE", lbl, 400.0)
            s.gauge("DCGM_FI_DEV_XID_ERRORS", {**lbl, "err_code": "0", "err_msg": ""}, 0.0)
            # gpu 1: hw_thermal (0x40) + power_cap (0x4); gpu 0: power_cap only (not throttle)
            s.gauge("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", lbl, 68.0 if gpu == "1" else 4.0)
            s.counter("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", lbl, 0.5)

    store = RawStore()
    scrape(store, "node-7:9400", page)
    res = run(
        store,
        "inference.gpu_util",
        "inference.gpu_mem_used_ratio",
        "inference.gpu_mem_used_bytes",
        "infra.gpu_temp_c",
        "infra.gpu_sm_clock_mhz",
        "infra.gpu_power_w",
        "infra.gpu_throttle",
        "infra.gpu_xid",
        "infra.gpu_pcie_replay",
        "infra.gpu_ecc_dbe",
    )
    assert res.frame.get("inference.gpu_util").instances == ("node-7",)  # type: ignore[union-attr]
    assert last(res, "inference.gpu_util", "node-7") == approx(0.80)  # mean of 0.70 and 0.90
    assert last(res, "inference.gpu_mem_used_ratio", "node-7") == approx(50_000 / 81_559)
    assert last(res, "inference.gpu_mem_used_bytes", "node-7") == approx(80_000 * 2**20)
    assert last(res, "infra.gpu_temp_c", "node-7") == 84
    assert last(res, "infra.gpu_sm_clock_mhz", "node-7") == 1410
    assert last(res, "infra.gpu_power_w", "node-7") == 800
    assert last(res, "infra.gpu_throttle", "node-7") == 1
    assert last(res, "infra.gpu_xid", "node-7") == 0
    assert last(res, "infra.gpu_pcie_replay", "node-7") == approx(1.0)
    assert "infra.gpu_ecc_dbe" in res.missing  # ECC counters are off by default


def test_dcgm_power_cap_alone_is_not_throttling() -> None:
    def page(s: Scrape) -> None:
        for bits in (0.0, 1.0, 4.0, 2.0, 16.0, 256.0):
            lbl = {"gpu": str(int(bits)), "Hostname": "node-1"}
            s.gauge("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", lbl, bits)
            s.gauge("DCGM_FI_DEV_GPU_UTIL", lbl, 50.0)

    store = RawStore()
    scrape(store, "node-1:9400", page)
    assert last(run(store, "infra.gpu_throttle"), "infra.gpu_throttle", "node-1") == 0


def test_node_exporter() -> None:
    def page(s: Scrape) -> None:
        for cpu in range(4):  # each core idle 25% of the time: 75% busy
            for mode, share in (("idle", 0.25), ("user", 0.6), ("system", 0.15)):
                s.counter("node_cpu_seconds_total", {"cpu": str(cpu), "mode": mode}, share)
        s.gauge("node_memory_MemTotal_bytes", {}, 64e9)
        s.gauge("node_memory_MemAvailable_bytes", {}, 16e9)
        s.gauge("node_memory_SwapTotal_bytes", {}, 8e9)
        s.gauge("node_memory_SwapFree_bytes", {}, 6e9)
        s.counter("node_vmstat_pswpin", {}, 120.0)
        s.counter("node_vmstat_pgmajfault", {}, 40.0)
        s.counter("node_vmstat_oom_kill", {}, 0.0)
        s.counter("node_netstat_Tcp_RetransSegs", {}, 5.0)
        s.counter("node_netstat_Tcp_OutSegs", {}, 1000.0)
        s.counter("node_pressure_memory_stalled_seconds_total", {}, 0.2)
        for dev in ("nvme0n1", "sda"):
            s.counter(
                "node_disk_io_time_seconds_total", {"device": dev}, 0.9 if dev == "sda" else 0.1
            )
            s.counter("node_disk_write_time_seconds_total", {"device": dev}, 0.5)
            s.counter("node_disk_writes_completed_total", {"device": dev}, 100.0)
        for dev in ("eth0", "lo"):
            s.counter("node_network_receive_drop_total", {"device": dev}, 1.0)
            s.counter("node_network_transmit_drop_total", {"device": dev}, 0.5)

    store = RawStore()
    scrape(store, "node-7:9100", page)
    res = run(
        store,
        "infra.cpu_util",
        "infra.mem_available_ratio",
        "infra.swap_used_ratio",
        "infra.swap_in_rate",
        "infra.major_faults",
        "infra.oom_kills",
        "infra.tcp_retrans_ratio",
        "infra.mem_pressure",
        "infra.disk_util",
        "infra.disk_await",
        "infra.nic_drops",
    )
    assert last(res, "infra.cpu_util", "node-7") == approx(0.75)
    assert last(res, "infra.mem_available_ratio", "node-7") == approx(0.25)
    assert last(res, "infra.swap_used_ratio", "node-7") == approx(0.25)
    assert last(res, "infra.swap_in_rate", "node-7") == approx(120.0)
    assert last(res, "infra.major_faults", "node-7") == approx(40.0)
    assert last(res, "infra.oom_kills", "node-7") == 0
    assert last(res, "infra.tcp_retrans_ratio", "node-7") == approx(0.005)
    assert last(res, "infra.mem_pressure", "node-7") == approx(0.2)
    assert last(res, "infra.disk_util", "node-7") == approx(0.9)
    assert last(res, "infra.disk_await", "node-7") == approx(0.005)
    assert last(res, "infra.nic_drops", "node-7") == approx(3.0)


def test_redis_exporter() -> None:
    def page(s: Scrape) -> None:
        s.gauge("redis_up", {}, 1)
        s.counter("redis_keyspace_hits_total", {}, 900.0)
        s.counter("redis_keyspace_misses_total", {}, 100.0)
        s.counter("redis_evicted_keys_total", {}, 12.0)
        s.gauge("redis_memory_used_bytes", {}, 3.0 * 2**30)
        s.gauge("redis_memory_max_bytes", {}, 4.0 * 2**30)
        for cmd, calls in (("get", 900.0), ("set", 100.0)):
            s.counter("redis_commands_total", {"cmd": cmd}, calls)
            s.counter("redis_commands_duration_seconds_total", {"cmd": cmd}, calls * 50e-6)

    store = RawStore()
    scrape(store, "redis://cache-1:6379", page)
    res = run(
        store,
        "dependency.cache_hit_ratio",
        "dependency.cache_evictions",
        "dependency.cache_mem_ratio",
        "dependency.cache_cmd_latency_avg",
    )
    assert last(res, "dependency.cache_hit_ratio", "cache-1") == approx(0.9)
    assert last(res, "dependency.cache_evictions", "cache-1") == approx(12.0)
    assert last(res, "dependency.cache_mem_ratio", "cache-1") == approx(0.75)
    assert last(res, "dependency.cache_cmd_latency_avg", "cache-1") == approx(50e-6)


def test_redis_without_maxmemory_has_no_memory_ratio() -> None:
    def page(s: Scrape) -> None:
        s.gauge("redis_up", {}, 1)
        s.gauge("redis_memory_used_bytes", {}, 1e9)
        s.gauge("redis_memory_max_bytes", {}, 0)

    store = RawStore()
    scrape(store, "cache-2:9121", page)
    res = run(store, "dependency.cache_mem_ratio")
    assert "dependency.cache_mem_ratio" in res.missing


def test_ingress_nginx() -> None:
    def page(s: Scrape) -> None:
        base = {
            "controller_class": "k8s.io/ingress-nginx",
            "controller_namespace": "ingress-nginx",
            "controller_pod": "ingress-nginx-controller-7d9f",
            "ingress": "chat",
            "namespace": "prod",
            "service": "llm",
            "method": "POST",
            "path": "/v1",
        }
        for status, rate in (("200", 95.0), ("503", 4.0), ("504", 1.0)):
            s.counter("nginx_ingress_controller_requests", {**base, "status": status}, rate)
        for h in ("request", "response", "header", "connect"):
            s.histogram(
                f"nginx_ingress_controller_{h}_duration_seconds",
                {**base, "status": "200"},
                BOUNDS,
                per_s(95.0),
            )

    store = RawStore()
    scrape(store, "gw-1:10254", page)
    res = run(
        store,
        "access.request_rate",
        "access.5xx_ratio",
        "access.request_latency_p99",
        "access.upstream_latency_p99",
        "access.upstream_ttfb_p99",
        "access.upstream_connect_p99",
    )
    assert last(res, "access.request_rate", "gw-1") == approx(100.0)
    assert last(res, "access.5xx_ratio", "gw-1") == approx(0.05)
    for sig in (
        "access.request_latency_p99",
        "access.upstream_latency_p99",
        "access.upstream_ttfb_p99",
        "access.upstream_connect_p99",
    ):
        assert last(res, sig, "gw-1") == approx(P99)


def test_envoy_milliseconds_become_seconds() -> None:
    ms = (100.0, 500.0, 1000.0, INF)

    def page(s: Scrape) -> None:
        c = {"envoy_cluster_name": "llm_backend"}
        s.counter("envoy_cluster_upstream_rq_total", c, 50.0)
        s.counter("envoy_cluster_upstream_rq_xx", {**c, "envoy_response_code_class": "2"}, 48.0)
        s.counter("envoy_cluster_upstream_rq_xx", {**c, "envoy_response_code_class": "5"}, 2.0)
        s.gauge("envoy_cluster_upstream_rq_pending_active", c, 9)
        s.counter("envoy_cluster_upstream_rq_pending_overflow", c, 0.5)
        s.histogram("envoy_cluster_upstream_rq_time", c, ms, per_s(50))
        s.histogram("envoy_cluster_upstream_cx_connect_ms", c, ms, per_s(5))

    store = RawStore()
    scrape(store, "envoy-0:9901", page)
    res = run(
        store,
        "access.request_rate",
        "access.upstream_5xx_ratio",
        "access.upstream_pending",
        "access.upstream_overflow_rate",
        "access.upstream_latency_p99",
        "access.upstream_connect_p99",
    )
    assert last(res, "access.request_rate", "envoy-0") == approx(50.0)
    assert last(res, "access.upstream_5xx_ratio", "envoy-0") == approx(0.04)
    assert last(res, "access.upstream_pending", "envoy-0") == 9
    assert last(res, "access.upstream_overflow_rate", "envoy-0") == approx(0.5)
    assert last(res, "access.upstream_latency_p99", "envoy-0") == approx(P99)  # 973.7 ms
    assert last(res, "access.upstream_connect_p99", "envoy-0") == approx(P99)


@pytest.mark.parametrize("name", ["milvus_proxy_sq_latency", "milvus_proxy_sq_lantency"])
def test_milvus_milliseconds_become_seconds(name: str) -> None:
    ms = (100.0, 500.0, 1000.0, INF)

    def page(s: Scrape) -> None:
        for qt, rate in (("search", 40.0), ("query", 10.0)):
            s.histogram(name, {"node_id": "12", "query_type": qt}, ms, per_s(rate))
        s.histogram("milvus_querynode_sq_queue_latency", {"node_id": "3"}, ms, per_s(40))

    store = RawStore()
    scrape(store, "milvus-0:9091", page)
    res = run(store, "dependency.vector_query_p99", "dependency.vector_queue_wait_p99")
    assert last(res, "dependency.vector_query_p99", "milvus-0") == approx(P99)
    assert last(res, "dependency.vector_queue_wait_p99", "milvus-0") == approx(P99)


def test_qdrant_search_endpoints_only() -> None:
    def page(s: Scrape) -> None:
        search = {
            "method": "POST",
            "endpoint": "/collections/{name}/points/search",
            "status": "200",
        }
        upsert = {"method": "PUT", "endpoint": "/collections/{name}/points", "status": "200"}
        s.counter("rest_responses_total", search, 30.0)
        s.counter("rest_responses_total", upsert, 5.0)
        s.histogram("rest_responses_duration_seconds", search, BOUNDS, per_s(30))
        # slow upserts must not leak into the search latency
        s.histogram("rest_responses_duration_seconds", upsert, BOUNDS, [0, 0, 0, 5.0])
        s.counter("process_major_page_faults_total", {}, 3.0)

    store = RawStore()
    scrape(store, "qdrant-0:6333", page)
    res = run(store, "dependency.vector_query_p99", "dependency.vector_major_faults_rate")
    assert last(res, "dependency.vector_query_p99", "qdrant-0") == approx(P99)
    assert last(res, "dependency.vector_major_faults_rate", "qdrant-0") == approx(3.0)


def test_search_backends() -> None:
    def weaviate(s: Scrape) -> None:
        lbl = {"class_name": "Doc", "query_type": "get_graphql"}
        s.histogram("queries_durations_ms", lbl, (100.0, 500.0, 1000.0, INF), per_s(20))

    def elastic(s: Scrape) -> None:
        lbl = {"cluster": "es", "name": "es-0", "host": "10.0.0.5"}
        s.counter("elasticsearch_indices_search_query_total", lbl, 200.0)
        s.counter("elasticsearch_indices_search_query_time_seconds", lbl, 200.0 * 0.015)

    def postgres(s: Scrape) -> None:
        lbl = {"user": "app", "datname": "rag", "queryid": "-8812"}
        s.counter("pg_stat_statements_calls_total", lbl, 50.0)
        s.counter("pg_stat_statements_seconds_total", lbl, 50.0 * 0.004)

    store = RawStore()
    scrape(store, "weaviate-0:2112", weaviate)
    scrape(store, "es-0:9114", elastic)
    scrape(store, "pg-0:9187", postgres)
    res = run(
        store,
        "dependency.vector_query_p99",
        "dependency.search_latency_avg",
        "dependency.pg_stmt_latency_avg",
    )
    assert last(res, "dependency.vector_query_p99", "weaviate-0") == approx(P99)
    assert last(res, "dependency.search_latency_avg", "es-0") == approx(0.015)
    assert last(res, "dependency.pg_stmt_latency_avg", "pg-0") == approx(0.004)


def test_python_runtime_only_where_python_info() -> None:
    def python(s: Scrape) -> None:
        s.gauge(
            "python_info",
            {
                "implementation": "CPython",
                "major": "3",
                "minor": "11",
                "patchlevel": "9",
                "version": "3.11.9",
            },
            1,
        )
        for gen, rate in (("0", 30.0), ("1", 3.0), ("2", 0.2)):
            s.counter("python_gc_collections_total", {"generation": gen}, rate)
        s.gauge("process_resident_memory_bytes", {}, 2.5e9)
        s.counter("process_cpu_seconds_total", {}, 1.5)
        s.gauge("process_start_time_seconds", {}, T0 - 3600)

    def go_exporter(s: Scrape) -> None:  # a Go exporter exposes process_* about itself
        s.gauge("process_resident_memory_bytes", {}, 30e6)
        s.counter("process_cpu_seconds_total", {}, 0.01)

    store = RawStore()
    scrape(store, "api-1:8000", python)
    scrape(store, "api-1:9100", go_exporter)
    res = run(
        store,
        "service.gc_collections_rate",
        "service.process_rss",
        "service.process_cpu",
        "service.restarts",
    )
    assert last(res, "service.gc_collections_rate", "api-1") == approx(0.2)
    assert last(res, "service.process_rss", "api-1") == 2.5e9
    assert last(res, "service.process_cpu", "api-1") == approx(1.5)
    assert last(res, "service.restarts", "api-1") == 0


def test_prometheus_up() -> None:
    store = RawStore()
    for k in range(SCRAPES):
        t = T0 + k * STEP
        store.add("up", (("instance", "node-7:8000"), ("job", "vllm")), t, 1.0)
        store.add("up", (("instance", "node-7:9400"), ("job", "dcgm")), t, 0.0 if k > 60 else 1.0)
    res = run(store, "infra.target_up")
    row = res.frame.get("infra.target_up").row("node-7")  # type: ignore[union-attr]
    assert row is not None and row[0] == 1 and row[-1] == 0  # the worst target of the node


def test_nginx_plus_milliseconds_become_seconds() -> None:
    def page(s: Scrape) -> None:
        lbl = {"server": "10.0.0.7:8000", "upstream": "llm"}
        s.gauge("nginxplus_upstream_server_response_time", lbl, 250.0)
        for code, rate in (("2xx", 90.0), ("4xx", 5.0), ("5xx", 5.0)):
            s.counter("nginxplus_upstream_server_responses", {**lbl, "code": code}, rate)

    store = RawStore()
    scrape(store, "nginx-0:9113", page)
    res = run(store, "access.upstream_latency_avg", "access.upstream_5xx_ratio")
    assert last(res, "access.upstream_latency_avg", "nginx-0") == approx(0.25)
    assert last(res, "access.upstream_5xx_ratio", "nginx-0") == approx(0.05)


def test_infersight_native() -> None:
    def page(s: Scrape) -> None:
        n = {"name": "embed"}
        s.counter("infersight_requests_total", {**n, "outcome": "ok"}, 45.0)
        s.counter("infersight_requests_total", {**n, "outcome": "rejected"}, 4.0)
        s.counter("infersight_requests_total", {**n, "outcome": "error"}, 1.0)
        s.counter("infersight_rejections_total", n, 4.0)
        s.gauge("infersight_queue_length", n, 17)
        s.gauge("infersight_workers_busy", n, 6)
        s.gauge("infersight_workers_limit", n, 8)
        s.gauge("infersight_batch_window_seconds", n, 0.005)
        s.counter("infersight_cache_requests_total", {**n, "result": "hit"}, 30.0)
        s.counter("infersight_cache_requests_total", {**n, "result": "miss"}, 10.0)
        s.histogram("infersight_request_duration_seconds", n, BOUNDS, per_s(50))
        s.histogram("infersight_batch_size", n, (1.0, 4.0, 16.0, INF), [2.0, 3.0, 5.0, 0.0])

    store = RawStore()
    scrape(store, "lab-engine-0:8000", page)
    res = run(
        store,
        "service.request_rate",
        "service.error_ratio",
        "service.rejection_rate",
        "service.queue_length",
        "service.threadpool_busy_ratio",
        "inference.batch_window",
        "dependency.cache_hit_ratio",
        "service.e2e_latency_p99",
        "inference.batch_size",
    )
    i = "lab-engine-0"
    assert last(res, "service.request_rate", i) == approx(50.0)
    assert last(res, "service.error_ratio", i) == approx(0.1)
    assert last(res, "service.rejection_rate", i) == approx(4.0)
    assert last(res, "service.queue_length", i) == 17
    assert last(res, "service.threadpool_busy_ratio", i) == approx(0.75)
    assert last(res, "inference.batch_window", i) == approx(0.005)
    assert last(res, "dependency.cache_hit_ratio", i) == approx(0.75)
    assert last(res, "service.e2e_latency_p99", i) == approx(P99)
    # _sum is 0.1 × count in the generator: the mean of the observations is 0.1
    assert last(res, "inference.batch_size", i) == approx(0.1)
