"""canonical_frame: identities, family priority, gaps, and why a signal is missing."""

from __future__ import annotations

import math

import pytest

from infersight.exporters import load_catalog
from infersight.signals import UnknownSignalError
from infersight.sources.local import canonical_frame
from infersight.sources.raw import RawStore, labels_of

T0 = 1_700_000_000.0
TS = [T0 + 15.0 * k for k in range(81)]


def gauge(store: RawStore, name: str, value: float, **labels: str) -> None:
    store.add_many(name, labels_of(labels), TS, [value] * len(TS))


def counter(store: RawStore, name: str, per_s: float, **labels: str) -> None:
    store.add_many(name, labels_of(labels), TS, [per_s * (t - T0 + 3600) for t in TS])


def run(store: RawStore, *signals: str):  # type: ignore[no-untyped-def]
    return canonical_frame(store, load_catalog(), T0 + 600, T0 + 1200, 60.0, "5m", signals)


def test_three_exporters_of_one_node_meet_as_one_identity() -> None:
    store = RawStore()
    gauge(store, "vllm:num_requests_waiting", 5, instance="node-7:8000", model_name="m")
    gauge(store, "vllm:num_requests_running", 2, instance="node-7:8000", model_name="m")
    gauge(store, "DCGM_FI_DEV_GPU_UTIL", 35, instance="node-7:9400", Hostname="node-7", gpu="0")
    counter(store, "node_cpu_seconds_total", 0.5, instance="node-7:9100", cpu="0", mode="idle")
    res = run(store, "service.queue_length", "inference.gpu_util", "infra.cpu_util")
    assert res.frame.instances == ["node-7"]
    assert res.frame.get("service.queue_length").row("node-7")[-1] == 5  # type: ignore[union-attr,index]
    assert res.frame.get("inference.gpu_util").row("node-7")[-1] == pytest.approx(0.35)  # type: ignore[union-attr,index]
    assert res.frame.get("infra.cpu_util").row("node-7")[-1] == pytest.approx(0.5)  # type: ignore[union-attr,index]
    assert res.sources == {
        "service.queue_length": "vllm",
        "inference.gpu_util": "dcgm",
        "infra.cpu_util": "node",
    }
    assert res.frame.n == 11 and res.frame.start == T0 + 600


def test_a_cpu_waiting_on_io_is_not_a_busy_cpu() -> None:
    """iowait is idle time with I/O outstanding: a disk-bound host must not read as a busy CPU."""
    store = RawStore()
    for cpu in ("0", "1"):
        counter(store, "node_cpu_seconds_total", 0.2, instance="h:9100", cpu=cpu, mode="idle")
        counter(store, "node_cpu_seconds_total", 0.7, instance="h:9100", cpu=cpu, mode="iowait")
        counter(store, "node_cpu_seconds_total", 0.1, instance="h:9100", cpu=cpu, mode="user")
    res = run(store, "infra.cpu_util")
    assert res.frame.get("infra.cpu_util").row("h")[-1] == pytest.approx(0.1)  # type: ignore[union-attr,index]


def test_throttling_is_read_per_container_and_never_from_the_pod_or_pause_cgroup() -> None:
    """cAdvisor's CFS counters: the pod's own cgroup (container="") and the pause container
    ("POD") are not the serving process; a container without a limit counts no periods."""
    store = RawStore()
    for container, periods, throttled in (("api", 10, 6), ("", 10, 9), ("POD", 10, 9)):
        labels = {
            "instance": "node-3:10250",
            "namespace": "rag",
            "pod": "api-7",
            "container": container,
        }
        counter(store, "container_cpu_cfs_periods_total", periods, **labels)
        counter(store, "container_cpu_cfs_throttled_periods_total", throttled, **labels)
    res = run(store, "service.cpu_throttled_ratio")
    s = res.frame.get("service.cpu_throttled_ratio")
    assert s is not None and s.values[:, -1] == pytest.approx([0.6])
    assert res.sources == {"service.cpu_throttled_ratio": "cadvisor"}


def test_higher_priority_family_wins_per_identity() -> None:
    store = RawStore()
    # node-1 has both Triton (priority 10) and DCGM (priority 20) GPU utilisation
    gauge(store, "nv_inference_request_success", 1, instance="node-1:8002", model="a")
    gauge(store, "nv_gpu_utilization", 0.9, instance="node-1:8002", gpu_uuid="GPU-1")
    gauge(store, "DCGM_FI_DEV_GPU_UTIL", 20, instance="node-1:9400", Hostname="node-1", gpu="0")
    # node-2 only DCGM
    gauge(store, "DCGM_FI_DEV_GPU_UTIL", 40, instance="node-2:9400", Hostname="node-2", gpu="0")
    res = run(store, "inference.gpu_util")
    s = res.frame.get("inference.gpu_util")
    assert s is not None and s.instances == ("node-1", "node-2")
    assert s.values[:, -1] == pytest.approx([0.9, 0.4])
    assert res.sources["inference.gpu_util"] == "triton,dcgm"
    # both expressions are recorded as evaluated, over the grid's range and step (issue 39)
    runs = [(r.family, r.expr, r.rate_window, r.start, r.end, r.step) for r in res.runs]
    assert runs == [
        ("triton", "avg by (node, hostname, Hostname, instance, pod) (nv_gpu_utilization)",
         "5m", T0 + 600, T0 + 1200, 60.0),
        ("dcgm", "avg by (node, hostname, Hostname, instance, pod) (DCGM_FI_DEV_GPU_UTIL < 1e15)"
         " / 100", "5m", T0 + 600, T0 + 1200, 60.0),
    ]  # fmt: skip


def test_series_of_one_identity_merge_with_the_signal_combine() -> None:
    store = RawStore()
    for model, q in (("a", 3), ("b", 4)):  # queue_length combines with sum
        gauge(store, "vllm:num_requests_waiting", q, instance="n:8000", model_name=model)
        gauge(store, "vllm:kv_cache_usage_perc", q / 10, instance="n:8000", model_name=model)
    gauge(store, "vllm:num_requests_running", 1, instance="n:8000", model_name="a")
    res = run(store, "service.queue_length", "inference.kv_cache_usage")
    assert res.frame.get("service.queue_length").row("n")[-1] == 7  # type: ignore[union-attr,index]
    assert res.frame.get("inference.kv_cache_usage").row("n")[-1] == pytest.approx(0.4)  # type: ignore[union-attr,index]


def test_infinities_become_gaps_and_missing_signals_say_why() -> None:
    store = RawStore()
    gauge(store, "vllm:num_requests_waiting", 1, instance="n:8000")
    gauge(store, "vllm:num_requests_running", 1, instance="n:8000")
    # requests but zero latency counts: avg latency is 0/0 (NaN) and 1/0 would be Inf
    counter(store, "vllm:e2e_request_latency_seconds_sum", 1.0, instance="n:8000")
    counter(store, "vllm:e2e_request_latency_seconds_count", 0.0, instance="n:8000")
    res = run(
        store,
        "service.e2e_latency_avg",
        "infra.gpu_temp_c",
        "service.ttft_p99",
        "inference.batch_fill_wait_p99",
    )
    assert "service.e2e_latency_avg" not in res.frame
    assert "no data" in res.missing["service.e2e_latency_avg"]
    assert "dcgm" in res.missing["infra.gpu_temp_c"]  # which exporter would provide it
    assert "vllm:time_to_first_token_seconds_bucket" in res.missing["service.ttft_p99"]
    assert "infersight" in res.missing["inference.batch_fill_wait_p99"]


def test_all_signals_by_default_and_unknown_signal_fails() -> None:
    store = RawStore()
    gauge(store, "up", 1, instance="a:1", job="j")
    res = canonical_frame(store, load_catalog(), T0 + 600, T0 + 1200, 60.0)
    assert res.frame.signals == ["infra.target_up"]
    assert len(res.missing) > 50
    with pytest.raises(UnknownSignalError):
        run(store, "service.nope")


def test_stale_series_leave_gaps_after_the_lookback() -> None:
    store = RawStore()
    early = [t for t in TS if t < T0 + 700]
    store.add_many("up", labels_of({"instance": "a:1"}), early, [1.0] * len(early))
    store.add_many("up", labels_of({"instance": "b:1"}), TS, [1.0] * len(TS))
    row = run(store, "infra.target_up").frame.get("infra.target_up").row("a")  # type: ignore[union-attr]
    assert row is not None and math.isnan(row[-1]) and row[0] == 1  # > 5 min after its last scrape
