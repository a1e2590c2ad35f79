"""Configuration files of the lab's third-party parts: HAProxy and Prometheus."""

from __future__ import annotations

from collections.abc import Mapping

SCRAPE_INTERVAL = "5s"


def haproxy_cfg(ports: Mapping[str, int], replicas: int) -> str:
    """The gateway: clients → API, API → model pool (one server per replica, through its link),
    and the built-in Prometheus exporter on its own frontend."""
    lines = [
        "global",
        "  maxconn 1024",
        "  nbthread 1",
        "defaults",
        "  mode http",
        "  option http-keep-alive",
        "  timeout connect 2s",
        "  timeout client 30s",
        "  timeout server 30s",
        "  timeout queue 10s",
        "  retries 2",
        "  option redispatch",
        "frontend stats",
        f"  bind 127.0.0.1:{ports['haproxy_metrics']}",
        "  http-request use-service prometheus-exporter if { path /metrics }",
        "  http-request return status 200 content-type text/plain string ok if { path /health }",
        # the stats page's admin form (drain/ready/maint a server over HTTP): the runbooks'
        # gateway remedies; bound to loopback like every part of the lab
        "  stats enable",
        "  stats uri /stats",
        "  stats admin if TRUE",
        "frontend gateway",
        f"  bind 127.0.0.1:{ports['gateway']}",
        "  default_backend api",
        "backend api",
        "  option httpchk GET /health",
        f"  server api-0 127.0.0.1:{ports['api']} check inter 2s",
        "frontend llm",
        f"  bind 127.0.0.1:{ports['llm']}",
        "  default_backend llm",
        "backend llm",
        "  balance leastconn",
        "  option httpchk GET /health",
    ]
    for i in range(replicas):
        lines.append(
            f"  server replica-{i} 127.0.0.1:{ports[f'link-{i}']} check inter 1s fall 2 rise 2"
        )
    return "\n".join(lines) + "\n"


def _job(name: str, targets: list[tuple[int, str]], path: str = "/metrics") -> list[str]:
    out = [f"  - job_name: {name}", f"    metrics_path: {path}", "    static_configs:"]
    for port, node in targets:
        out += [f"      - targets: ['127.0.0.1:{port}']", f"        labels: {{node: '{node}'}}"]
    return out


def prometheus_yml(
    ports: Mapping[str, int], replicas: int, rule_files: list[str], real_engine: bool = False
) -> str:
    """Every part scraped; each target labelled with `node`, the identity the catalog reads
    first (all parts share 127.0.0.1, so `instance` cannot tell them apart). The host's
    node_exporter is read under each part's name. With a real engine its own `/metrics` is the
    vllm job's target and the modelled card beside it the dcgm job's."""
    lines = [
        "global:",
        f"  scrape_interval: {SCRAPE_INTERVAL}",
        f"  evaluation_interval: {SCRAPE_INTERVAL}",
    ]
    if rule_files:
        lines.append("rule_files:")
        lines += [f"  - '{f}'" for f in rule_files]
    lines.append("scrape_configs:")
    lines += _job("haproxy", [(ports["haproxy_metrics"], "gateway")])
    lines += _job("api", [(ports["api"], "api")])
    lines += _job("vector", [(ports["vector"], "vector")])
    lines += _job("redis", [(ports["redis_exporter"], "redis")])
    # one host holds every part: its node_exporter is scraped once per part, labelled as that
    # part, as a cluster's per-node exporter shares the node label of what runs there; a host
    # cause (a busy disk, a CPU taken by a neighbour) is then read where the part's own
    # latency is
    parts = ["gateway", "api", "vector", "redis"] + [f"replica-{i}" for i in range(replicas)]
    lines += _job("node", [(ports["node_exporter"], part) for part in parts])
    gpus = [(ports[f"gpu-{i}"], f"replica-{i}") for i in range(replicas)]
    engines = (
        [(ports[f"engine-{i}"], f"replica-{i}") for i in range(replicas)] if real_engine else gpus
    )
    lines += _job("vllm", engines)
    lines += _job("dcgm", gpus, "/dcgm/metrics")
    # the kernel's CFS counters of each limited part, as the kubelet's cAdvisor gives them,
    # one path per part, labelled with the part's host
    limited = [("api", "api")]
    limited += [(f"engine-{i}", f"replica-{i}") for i in range(replicas) if real_engine]
    for part, host in limited:
        lines += _job(f"cadvisor-{part}", [(ports["cadvisor"], host)], f"/metrics/{part}")
    return "\n".join(lines) + "\n"


def recording_rules() -> str:
    """A few recording rules, as a production Prometheus would have for dashboards; loaded so
    the lab's server evaluates rules like one in production does."""
    return (
        "groups:\n"
        "  - name: infersight-lab\n"
        "    rules:\n"
        "      - record: lab:api_request_rate:rate1m\n"
        '        expr: sum(rate(infersight_requests_total{name="api"}[1m]))\n'
        "      - record: lab:api_latency_p99:1m\n"
        "        expr: histogram_quantile(0.99, sum by (le) "
        '(rate(infersight_request_duration_seconds_bucket{name="api"}[1m])))\n'
        "      - record: lab:gateway_5xx_ratio:rate1m\n"
        '        expr: sum(rate(haproxy_frontend_http_responses_total{code="5xx"}[1m])) / '
        "sum(rate(haproxy_frontend_http_responses_total[1m]))\n"
    )
