"""Exporter family files: they load, name real metrics, and bad user files say what is wrong."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from infersight.exporters import CatalogError, load_catalog
from infersight.signals import all_signals

BUILTIN = sorted(
    p.stem
    for p in (Path(__file__).parents[2] / "src/infersight/catalog").glob("*.yaml")
    if p.stem != "signals"
)

# Real metric names per exporter, from reference/metrics-catalog.md (read from each exporter's
# source); histograms and counters are listed as scraped (`_bucket`/`_sum`/`_count`, `_total`).
REAL = re.compile(
    r"^(vllm:(num_requests_(running|waiting)|kv_cache_usage_perc|gpu_cache_usage_perc"
    r"|request_success_total|admission_rejections_total|num_preemptions_total|generation_tokens_total"
    r"|(gpu_)?prefix_cache_(hits|queries)_total"
    r"|(e2e_request_latency|time_to_first_token|inter_token_latency|time_per_output_token"
    r"|request_queue_time|request_inference_time|request_prefill_time|request_decode_time)"
    r"_seconds_(bucket|sum|count)|request_prompt_tokens_(sum|count))"
    r"|nv_inference_(request_success|request_failure|count|exec_count|pending_request_count"
    r"|request_duration_us|queue_duration_us|compute_infer_duration_us"
    r"|first_response_histogram_ms_bucket)"
    r"|nv_model_load_duration_secs|nv_trt_llm_kv_cache_block_metrics"
    r"|nv_gpu_(utilization|memory_used_bytes|memory_total_bytes|power_usage)"
    r"|tgi_(queue_size|batch_current_size|request_count|request_success|request_failure"
    r"|(request_queue_duration|request_duration|request_mean_time_per_token_duration"
    r"|batch_forward_duration)_bucket|(request_queue_duration|request_duration|batch_forward_duration)_(sum|count)"
    r"|request_generated_tokens_sum|request_input_length_(sum|count))"
    r"|DCGM_FI_DEV_(GPU_UTIL|FB_USED|FB_FREE|FB_RESERVED|GPU_TEMP|SM_CLOCK|POWER_USAGE"
    r"|CLOCKS_EVENT_REASONS|CLOCK_THROTTLE_REASONS|XID_ERRORS|ECC_DBE_VOL_TOTAL"
    r"|UNCORRECTABLE_REMAPPED_ROWS|PCIE_REPLAY_COUNTER)|DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"
    r"|dcgm_(gpu_utilization|fb_used|fb_free|gpu_temp|sm_clock|power_usage|xid_errors)"
    r"|container_cpu_cfs_(periods|throttled_periods)_total"
    r"|kube_pod_(info|start_time|status_ready|status_phase"
    r"|container_status_(restarts_total|last_terminated_reason))"
    r"|node_(cpu_seconds_total|pressure_(cpu_waiting|memory_stalled|io_stalled)_seconds_total"
    r"|memory_(MemAvailable|MemTotal|SwapFree|SwapTotal)_bytes|vmstat_(pswpin|pgmajfault|oom_kill)"
    r"|netstat_(Tcp_RetransSegs|Tcp_OutSegs|TcpExt_ListenOverflows)"
    r"|network_(receive|transmit)_drop_total"
    r"|disk_(io_time_seconds_total|io_time_weighted_seconds_total|write_time_seconds_total"
    r"|writes_completed_total))"
    r"|redis_(up|keyspace_hits_total|keyspace_misses_total|evicted_keys_total|memory_used_bytes"
    r"|memory_max_bytes|commands_duration_seconds_total|commands_total)"
    r"|nginx_ingress_controller_(requests|(request|response|header|connect)_duration_seconds_bucket"
    r"|response_duration_seconds_(sum|count))"
    r"|envoy_cluster_upstream_(rq_total|rq_xx|rq_pending_active|rq_pending_overflow"
    r"|rq_time_bucket|cx_connect_ms_bucket)"
    r"|milvus_(proxy_sq_latency|proxy_sq_lantency|querynode_sq_queue_latency)_bucket"
    r"|milvus_proxy_req_count|(rest|grpc)_responses_total"
    r"|(rest|grpc)_responses_duration_seconds_bucket|process_major_page_faults_total"
    r"|queries_durations_ms_(bucket|count)|elasticsearch_indices_search_query_(time_seconds|total)"
    r"|pg_stat_statements_(seconds|calls)_total"
    r"|python_gc_collections_total|python_info|process_(resident_memory_bytes|cpu_seconds_total"
    r"|start_time_seconds)"
    r"|haproxy_(frontend_http_(requests|responses)_total|backend_http_responses_total"
    r"|(server|backend)_response_time_average_seconds|backend_current_queue"
    r"|server_(connection_errors|response_errors|loadbalanced)_total)"
    r"|up|nginxplus_upstream_server_(response_time|responses))$"
)
# infersight's own names: the serving library's, plus those only the lab (its simulator,
# the live lab's vector service) exports
NATIVE_LAB_ONLY = {
    "infersight_dependency_duration_seconds_bucket",
    "infersight_dependency_major_page_faults_total",
    "infersight_gc_pause_seconds_total",
    "infersight_gpu_processes",
    "infersight_model_load_seconds",
    "infersight_oom_total",
}


def _native_names() -> set[str]:
    from infersight.serving import metrics

    out = set()
    for name in metrics.ALL_NAMES:
        out |= {name, f"{name}_bucket", f"{name}_sum", f"{name}_count"}
    return out | NATIVE_LAB_ONLY


def test_every_builtin_family_loads() -> None:
    cat = load_catalog()
    assert sorted(cat.families) == BUILTIN
    for fam in cat.families.values():
        assert fam.mappings, fam.name
        assert fam.detect
        assert set(fam.signals) <= set(all_signals())


def test_every_mapping_reads_real_metric_names() -> None:
    native = _native_names()
    for fam in load_catalog().families.values():
        for alts in fam.mappings.values():
            for m in alts:
                for name in m.metrics:
                    ok = name in native if fam.name == "infersight" else REAL.match(name)
                    assert ok, f"{fam.name}/{m.signal}: {name} is not a known exporter metric"


def test_priority_orders_engines_before_hosts() -> None:
    order = [f.name for f in load_catalog().ordered()]
    assert order.index("infersight") < order.index("vllm") < order.index("dcgm")
    assert order.index("triton") < order.index("dcgm") < order.index("node")
    assert order[-1] == "prometheus"


GOOD = """\
family: myengine
title: My engine
layer_hint: service
priority: 15
source: in-house
detect: [my_queue]
signals:
  service.queue_length:
    - sum by ($by) (my_queue)
"""


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("family: [unclosed\n", "not valid YAML"),
        (GOOD.replace("service.queue_length", "service.queue_lenght"), "field signals"),
        (
            GOOD.replace("sum by ($by) (my_queue)", "sum by ($by) (my_queue"),
            "signals.service.queue_length.0",
        ),
        (
            GOOD.replace("sum by ($by) (my_queue)", "topk(1, my_queue)"),
            "signals.service.queue_length.0",
        ),
        (GOOD.replace("title: My engine\n", ""), "field title"),
        (GOOD.replace("priority: 15", "priority: high"), "field priority"),
        (GOOD.replace("detect: [my_queue]", "detect: []"), "field detect"),
        (GOOD + "extra: 1\n", "field extra"),
        (GOOD.replace("    - sum by ($by) (my_queue)\n", "    []\n"), "field signals"),
    ],
)
def test_malformed_user_family_names_file_and_field(tmp_path: Path, text: str, field: str) -> None:
    (tmp_path / "myengine.yaml").write_text(text)
    with pytest.raises(CatalogError) as err:
        load_catalog([tmp_path])
    msg = str(err.value)
    assert str(tmp_path / "myengine.yaml") in msg
    assert field in msg
    assert "\n" not in msg


def test_user_dir_adds_and_overrides_families(tmp_path: Path) -> None:
    (tmp_path / "myengine.yaml").write_text(GOOD)
    (tmp_path / "vllm.yaml").write_text(
        GOOD.replace("family: myengine", "family: vllm").replace(
            "my_queue", "vllm:num_requests_waiting"
        )
    )
    cat = load_catalog([tmp_path])
    assert cat.families["myengine"].path == str(tmp_path / "myengine.yaml")
    vllm = cat.families["vllm"]
    assert vllm.path == str(tmp_path / "vllm.yaml") and vllm.signals == ["service.queue_length"]
    assert "dcgm" in cat.families  # the other built-ins stay


def test_missing_user_dir_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="not a directory"):
        load_catalog([tmp_path / "nope"])


@pytest.mark.parametrize(
    "content",
    [b"\xca\xfe\xba\xbe\x00\x81garbage", b"family: x\n\xff\xfe\n"],
    ids=["binary", "latin"],
)
def test_unreadable_user_family_is_a_catalog_error(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "bad.yaml").write_bytes(content)
    with pytest.raises(CatalogError, match=r"bad\.yaml: not UTF-8 text"):
        load_catalog([tmp_path])


def test_a_directory_named_yaml_is_a_catalog_error(tmp_path: Path) -> None:
    (tmp_path / "sub.yaml").mkdir()
    with pytest.raises(CatalogError, match=r"sub\.yaml: is a folder"):
        load_catalog([tmp_path])
