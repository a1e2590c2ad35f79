"""The lab's generated Prometheus configuration (every part under its own `node` label, the
one host's node_exporter read under each part's name) and the names its GPU stand-in exports
from the start; no server needed."""

from __future__ import annotations

import yaml

from infersight.lab.live.configs import prometheus_yml


def _ports(replicas: int) -> dict[str, int]:
    names = ["haproxy_metrics", "api", "vector", "redis_exporter", "node_exporter", "cadvisor"]
    names += [f"gpu-{i}" for i in range(replicas)]
    return {n: 20000 + k for k, n in enumerate(names)}


def _targets(cfg: dict[str, object], job: str) -> list[tuple[str, str]]:
    jobs = [j for j in cfg["scrape_configs"] if j["job_name"] == job]  # type: ignore[attr-defined]
    assert len(jobs) == 1, job
    return [(t, sc["labels"]["node"]) for sc in jobs[0]["static_configs"] for t in sc["targets"]]


def test_the_host_exporter_is_read_under_every_part_that_runs_there() -> None:
    ports = _ports(3)
    cfg = yaml.safe_load(prometheus_yml(ports, 3, []))
    node = _targets(cfg, "node")
    assert {t for t, _ in node} == {f"127.0.0.1:{ports['node_exporter']}"}
    parts = {"gateway", "api", "vector", "redis", "replica-0", "replica-1", "replica-2"}
    assert sorted(n for _, n in node) == sorted(parts)
    # every part's own target carries the same name, so its host figures meet its own
    jobs = ("haproxy", "api", "vector", "redis", "vllm")
    own = {n for job in jobs for _, n in _targets(cfg, job)}
    assert own == parts


def test_the_gpu_standin_exports_a_zero_abort_count_from_the_start() -> None:
    """vLLM creates a child of `vllm:request_success_total` per finish reason when it starts:
    a server that has failed nothing reads an error ratio of 0, not "no data"."""
    from prometheus_client import generate_latest

    from infersight.lab.live.gpu_standin import Replica

    text = generate_latest(Replica("replica-0").registry).decode()
    for reason in ("stop", "length", "abort"):
        assert f'vllm:request_success_total{{finished_reason="{reason}"' in text


def test_a_real_engine_is_the_vllm_target_and_its_card_the_dcgm_target() -> None:
    ports = _ports(2) | {"engine-0": 21000, "engine-1": 21001}
    cfg = yaml.safe_load(prometheus_yml(ports, 2, [], real_engine=True))
    assert _targets(cfg, "vllm") == [
        ("127.0.0.1:21000", "replica-0"),
        ("127.0.0.1:21001", "replica-1"),
    ]
    dcgm = _targets(cfg, "dcgm")
    assert dcgm == [(f"127.0.0.1:{ports[f'gpu-{i}']}", f"replica-{i}") for i in range(2)]


def test_each_limited_part_is_read_from_its_own_path_under_its_host() -> None:
    """One exporter, one path per part: the API's cgroup counters under `api`, each real
    engine's under its replica, so a throttled container is read where its latency is."""
    ports = _ports(2) | {"engine-0": 21000, "engine-1": 21001}
    cfg = yaml.safe_load(prometheus_yml(ports, 2, [], real_engine=True))
    jobs = {j["job_name"]: j for j in cfg["scrape_configs"]}
    assert jobs["cadvisor-api"]["metrics_path"] == "/metrics/api"
    assert _targets(cfg, "cadvisor-api") == [(f"127.0.0.1:{ports['cadvisor']}", "api")]
    assert _targets(cfg, "cadvisor-engine-1") == [(f"127.0.0.1:{ports['cadvisor']}", "replica-1")]
    standin = yaml.safe_load(prometheus_yml(_ports(2), 2, []))
    assert not any(j["job_name"].startswith("cadvisor-engine") for j in standin["scrape_configs"])
