from infersight.identity import host_of, resolve


def test_one_gpu_node_meets_as_one_identity() -> None:
    engine = {"instance": "node-7:8000", "job": "vllm"}
    dcgm = {"instance": "node-7:9400", "Hostname": "node-7", "gpu": "0"}
    dcgm_main = {"instance": "10.0.0.7:9400", "hostname": "node-7", "gpu": "1"}
    node = {"instance": "node-7:9100"}
    assert {resolve(x) for x in (engine, dcgm, dcgm_main, node)} == {"node-7"}


def test_node_label_wins_and_shared_dependencies_stay_apart() -> None:
    assert resolve({"instance": "10.1.2.3:8000", "node": "gpu-3", "pod": "vllm-0"}) == "gpu-3"
    assert resolve({"instance": "redis://cache-1:6379"}) == "cache-1"
    assert resolve({"job": "fleet"}) == "*"


def test_host_of_forms() -> None:
    assert host_of("[::1]:9090") == "::1"
    assert host_of("fe80::1") == "fe80::1"
    assert host_of("http://vdb-0:19530/metrics") == "vdb-0"
    assert host_of("node-1") == "node-1"
