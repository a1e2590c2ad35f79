"""What shows each live-lab fault in Prometheus: per fault, the PromQL whose answer is the
fault's defining change, and the test it must pass (`bench.live_lab` checks it after the
hold, before diagnosing). `{r}` is the replica the fault was injected on."""

from __future__ import annotations

#: Per fault: PromQL whose answer shows the fault in Prometheus, and what counts as seen.
SIGNATURES: dict[str, tuple[str, str]] = {
    "api-pool-shrink": ('min(infersight_workers_limit{name="api_workers"})', "<= 1"),
    # the share of the API's scheduler periods the kernel held it in (cAdvisor's names)
    "api-cpu-limit": (
        'sum(rate(container_cpu_cfs_throttled_periods_total{container="api"}[1m]))'
        ' / sum(rate(container_cpu_cfs_periods_total{container="api"}[1m]))',
        "> 0.25",
    ),
    "api-gc-pressure": ('rate(infersight_gc_pause_seconds_total{node="api"}[1m])', "> 0.03"),
    "disk-pressure": ("max(rate(node_disk_io_time_seconds_total[1m]))", "> 0.2"),
    "batch-delay": ('max(infersight_batch_window_seconds{node="replica-{r}"})', ">= 0.2"),
    "replica-kill": ('min(up{job="vllm",node="replica-{r}"})', "== 0"),
    "redis-maxmemory": ("sum(increase(redis_evicted_keys_total[2m]))", "> 0"),
    "vector-out-of-ram": (
        'sum(rate(infersight_dependency_major_page_faults_total{node="vector"}[1m]))',
        "> 5",
    ),
    "link-slow": (
        "histogram_quantile(0.99, sum by (le) "
        '(rate(lab_api_dependency_seconds_bucket{dependency="llm"}[1m])))',
        "> 0.4",
    ),
    "link-lossy": (
        'sum(increase(haproxy_server_response_errors_total{server="replica-{r}"}[2m]))',
        "> 0",
    ),
    "cpu-hog": ('1 - avg(rate(node_cpu_seconds_total{mode="idle"}[1m]))', "> 0.9"),
    # a real engine's (`--engine vllm`): each from the engine's own counters
    "engine-kv-pressure": ("sum(increase(vllm:num_preemptions_total[2m]))", "> 0"),
    "engine-seqs-cap": ("max(max_over_time(vllm:num_requests_waiting[1m]))", "> 0"),
    "engine-admission-limit": (
        "sum(increase(vllm:admission_rejections_total[2m]))",
        "> 0",
    ),
    # a new process answering scrapes under the old series' labels
    "engine-restart": (
        'changes(process_start_time_seconds{job="vllm",node="replica-{r}"}[10m])',
        ">= 1",
    ),
    # seconds of decoding per token made (the lab's engines: about 2.5 ms)
    "engine-cpu-limit": (
        'rate(vllm:request_decode_time_seconds_sum{node="replica-{r}"}[1m])'
        ' / rate(vllm:generation_tokens_total{node="replica-{r}"}[1m])',
        "> 0.01",
    ),
    # the engine core stopped, the API server still scraped: no token comes out
    "engine-hang": ('sum(rate(vllm:generation_tokens_total{node="replica-{r}"}[1m]))', "== 0"),
    "engine-template-change": (
        "sum(rate(vllm:prefix_cache_hits_total[1m]))"
        " / sum(rate(vllm:prefix_cache_queries_total[1m]))",
        "< 0.2",
    ),
    "gpu-clock-drop": ('min(DCGM_FI_DEV_SM_CLOCK{node="replica-{r}"})', "< 1200"),
    "gpu-xid": ('max(DCGM_FI_DEV_XID_ERRORS{node="replica-{r}"})', "== 79"),
    # over the whole hold: a leak that fills the card stops climbing there, so the last
    # minute alone can read flat (951 MiB at 60 MiB/s on a card full for 40 s)
    "gpu-vram-leak": (
        'max_over_time(DCGM_FI_DEV_FB_USED{node="replica-{r}"}[3m])'
        ' - min_over_time(DCGM_FI_DEV_FB_USED{node="replica-{r}"}[3m])',
        "> 1000",
    ),
}
