"""Pods placed on nodes from kube_pod_info: a pod's series, and one scraped at its IP, are read
on its node; what cannot be placed for sure is left as it was."""

from __future__ import annotations

from infersight.kube.pods import PodMap, workload_of

INFO = [
    {"namespace": "inference", "pod": "vllm-5d8f7c9b4-x2k9q", "node": "gpu-3",
     "pod_ip": "10.4.3.17", "host_network": "false", "created_by_kind": "ReplicaSet",
     "created_by_name": "vllm-5d8f7c9b4"},
    {"namespace": "monitoring", "pod": "node-exporter-abcde", "node": "gpu-3",
     "pod_ip": "192.168.0.13", "host_network": "true", "created_by_kind": "DaemonSet",
     "created_by_name": "node-exporter"},
    {"namespace": "a", "pod": "twin", "node": "n1", "pod_ip": "10.0.0.1"},
    {"namespace": "b", "pod": "twin", "node": "n2", "pod_ip": "10.0.0.2"},
    {"namespace": "x", "pod": "pending-0", "node": "", "pod_ip": ""},
]  # fmt: skip


def test_a_pods_series_is_read_on_its_node() -> None:
    pods = PodMap.from_labels(INFO)
    engine = {"instance": "10.4.3.17:8000", "pod": "vllm-5d8f7c9b4-x2k9q", "job": "vllm"}
    assert pods.identity(engine) == "gpu-3"
    # kube-state-metrics' own instance is not the pod it describes
    ksm = {"instance": "10.9.9.9:8080", "pod": "vllm-5d8f7c9b4-x2k9q", "container": "vllm"}
    assert pods.identity(ksm) == "gpu-3"
    # scraped without honorLabels: the described pod is exported_pod
    renamed = {"instance": "10.9.9.9:8080", "pod": "kube-state-metrics-0"}
    renamed["exported_pod"] = "vllm-5d8f7c9b4-x2k9q"
    assert pods.identity(renamed) == "gpu-3"
    # a target at a pod's IP, without a pod label
    assert pods.identity({"instance": "10.4.3.17:9400"}) == "gpu-3"
    # dcgm-exporter's node name wins over nothing; its consumer pod agrees
    assert pods.identity({"Hostname": "gpu-3", "instance": "10.4.3.5:9400"}) == "gpu-3"


def test_what_cannot_be_placed_for_sure_is_left_alone() -> None:
    pods = PodMap.from_labels(INFO)
    # two pods of one name on two nodes: neither is placed
    assert pods.identity({"instance": "10.7.7.7:80", "pod": "twin"}) == "10.7.7.7"
    # a host-network pod's IP is its node's address, not the pod's
    assert pods.identity({"instance": "192.168.0.13:9100"}) == "192.168.0.13"
    # an unknown pod, an unscheduled one, and a series without a pod keep their identity
    assert pods.identity({"instance": "node-9:9100", "pod": "other"}) == "node-9"
    assert "pending-0" not in pods.pods
    assert not PodMap.from_labels([])


def test_workloads_and_a_round_trip() -> None:
    assert workload_of("ReplicaSet", "vllm-5d8f7c9b4") == "Deployment/vllm"
    assert workload_of("ReplicaSet", "handmade") == "ReplicaSet/handmade"
    assert workload_of("StatefulSet", "redis") == "StatefulSet/redis"
    assert workload_of("", "") == "" and workload_of("<none>", "x") == ""
    pods = PodMap.from_labels(INFO)
    assert [p.describe() for p in pods.on_node("gpu-3")] == [
        "pod node-exporter-abcde (DaemonSet/node-exporter)",
        "pod vllm-5d8f7c9b4-x2k9q (Deployment/vllm)",
    ]
    again = PodMap.from_dict(pods.to_dict())
    assert again.pods == pods.pods and again.by_ip == pods.by_ip


def test_a_pod_that_ended_just_before_the_window_is_still_placed() -> None:
    """Its samples stay inside the window's ranges and lookback: read as a machine of their
    own they would be a node nobody has."""
    import numpy as np

    from infersight.sources.local import pods_of
    from infersight.sources.raw import RawStore, labels_of

    s = RawStore()
    lb = {"pod": "vllm-abcde-fghij", "node": "gpu-5", "pod_ip": "10.4.5.41", "namespace": "x"}
    s.add_many("kube_pod_info", labels_of(lb), np.arange(0.0, 600.0, 60.0), np.ones(10))
    assert pods_of(s, 1200.0, 4800.0).identity({"instance": "10.4.5.41:8000"}) == "gpu-5"
    assert not pods_of(s, 3000.0, 6600.0)  # ended 40 min before: its samples are out of reach
