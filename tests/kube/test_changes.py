"""Each kind of cluster change read from kube-state-metrics' series, hand-made on a 1-minute
grid: when it began, its figures, the nodes it touched, and what is not a change."""

from __future__ import annotations

import numpy as np

from infersight.kube.changes import relative
from infersight.kube.pods import PodMap
from infersight.kube.read import from_store
from infersight.sources.raw import RawStore, labels_of

T0, STEP, N = 1_700_000_000.0, 60.0, 30
TS = T0 + STEP * np.arange(N)
KSM = {"job": "kube-state-metrics", "instance": "10.9.9.9:8080"}


def put(store: RawStore, name: str, values: list[float] | np.ndarray, **labels: str) -> None:
    v = np.asarray(values, dtype=float)
    ok = ~np.isnan(v)
    store.add_many(name, labels_of({**KSM, **labels}), TS[ok], v[ok])


def step_at(i: int, before: float, after: float) -> np.ndarray:
    return np.where(np.arange(N) < i, before, after)


def cluster() -> tuple[RawStore, PodMap]:
    s = RawStore()
    pods = {"api-7c9d8b6f5-aaaaa": "cpu-1", "api-7c9d8b6f5-bbbbb": "cpu-2",
            "api-5b8c7d9f4-ccccc": "cpu-1", "llm-0": "gpu-3"}  # fmt: skip
    for pod, node in pods.items():
        api = pod.startswith("api")
        owner = ("ReplicaSet", pod.rsplit("-", 1)[0]) if api else ("StatefulSet", "llm")
        new = pod.endswith("ccccc")
        info = step_at(10, np.nan, 1.0) if new else np.ones(N)
        ip = f"10.1.{len(pod)}.{ord(pod[-1])}"
        put(s, "kube_pod_info", info, namespace="prod", pod=pod, node=node, pod_ip=ip,
            created_by_kind=owner[0], created_by_name=owner[1], host_network="false")  # fmt: skip
        put(
            s,
            "kube_pod_start_time",
            info * (TS[10] if new else T0 - 86400),
            namespace="prod",
            pod=pod,
        )
        image = "api:2.1" if new else ("api:2.0" if pod.startswith("api") else "vllm:0.9")
        put(s, "kube_pod_container_info", info, namespace="prod", pod=pod, container="main",
            image=image, image_id="sha256:x")  # fmt: skip
    put(
        s,
        "kube_deployment_metadata_generation",
        step_at(9, 4, 5),
        namespace="prod",
        deployment="api",
    )
    put(s, "kube_deployment_status_replicas_unavailable", step_at(10, 0, 1) * step_at(14, 1, 0),
        namespace="prod", deployment="api")  # fmt: skip
    put(s, "kube_deployment_spec_replicas", np.full(N, 2.0), namespace="prod", deployment="api")
    # llm-0 restarted twice, last killed at its memory limit
    put(s, "kube_pod_container_status_restarts_total", step_at(12, 3, 4) + step_at(20, 0, 1),
        namespace="prod", pod="llm-0", container="main")  # fmt: skip
    put(s, "kube_pod_container_status_last_terminated_reason", np.ones(N), namespace="prod",
        pod="llm-0", container="main", reason="OOMKilled")  # fmt: skip
    put(s, "kube_pod_container_status_restarts_total", np.full(N, 7.0), namespace="prod",
        pod="api-7c9d8b6f5-aaaaa", container="main")  # fmt: skip
    # llm-0 not Ready while it reloads; api pods Ready throughout
    for pod in pods:
        ready = step_at(12, 1, 0) + step_at(16, 0, 1) if pod == "llm-0" else np.ones(N)
        put(s, "kube_pod_status_ready", ready, namespace="prod", pod=pod, condition="true")
        put(s, "kube_pod_status_phase", np.ones(N), namespace="prod", pod=pod, phase="Running")
    # an HPA that scaled 2 → 4 and stayed at its maximum
    hpa = {"namespace": "prod", "horizontalpodautoscaler": "api"}
    put(s, "kube_horizontalpodautoscaler_status_desired_replicas", step_at(18, 2, 4), **hpa)
    put(s, "kube_horizontalpodautoscaler_status_current_replicas", step_at(19, 2, 4), **hpa)
    put(s, "kube_horizontalpodautoscaler_spec_max_replicas", np.full(N, 4.0), **hpa)
    # a node under memory pressure for 5 minutes; a Ready node that stays so
    put(s, "kube_node_status_condition", step_at(22, 0, 1) * step_at(27, 1, 0), node="gpu-3",
        condition="MemoryPressure", status="true")  # fmt: skip
    put(s, "kube_node_status_condition", np.ones(N), node="gpu-3", condition="Ready", status="true")
    # a pod that cannot be scheduled, and one whose image cannot be pulled
    put(s, "kube_pod_status_unschedulable", step_at(25, np.nan, 1.0), namespace="prod", pod="llm-1")
    put(s, "kube_pod_container_status_waiting_reason", step_at(26, np.nan, 1.0), namespace="prod",
        pod="api-5b8c7d9f4-ccccc", container="main", reason="ImagePullBackOff")  # fmt: skip
    put(s, "kube_pod_container_status_waiting_reason", np.ones(N), namespace="prod",
        pod="api-7c9d8b6f5-bbbbb", container="main", reason="ContainerCreating")  # fmt: skip
    from infersight.sources.local import pods_of

    return s, pods_of(s, T0, TS[-1])


def test_each_kind_of_change_with_its_time_and_figures() -> None:
    store, pods = cluster()
    every = from_store(store, T0, float(TS[-1]), STEP, pods)
    assert [c.at for c in every] == sorted(c.at for c in every)
    got = {(c.kind, c.subject): c for c in every if c.kind != "scaling"}
    rollout = got["rollout", "Deployment prod/api"]
    assert rollout.at == TS[9]
    assert rollout.what == ("generation 4 → 5; 1 pod(s) started after it; "
                            "at most 1 of 2 replicas unavailable after it")  # fmt: skip
    assert rollout.nodes == ("cpu-1",) and rollout.workload == "Deployment/api"
    image = got["image", "Deployment prod/api"]
    assert (image.at, image.what) == (TS[10], "container main: api:2.0 → api:2.1")
    restart = got["restart", "pod prod/llm-0"]
    assert restart.at == TS[12] and restart.nodes == ("gpu-3",)
    assert restart.what == "container main restarted 2 time(s) (last terminated: OOMKilled)"
    assert ("restart", "pod prod/api-7c9d8b6f5-aaaaa") not in got  # restarted before the window
    ready = got["not_ready", "pod prod/llm-0"]
    assert (ready.at, ready.until, ready.before_window) == (TS[12], TS[16], False)
    scaled, at_max = (c for c in every if c.kind == "scaling")
    assert (scaled.subject, scaled.what, scaled.at) == (
        "HPA prod/api",
        "desired replicas 2 → 4",
        TS[18],
    )
    assert at_max.what == "at its maximum of 4 replicas: it cannot add more"
    assert at_max.at == TS[19] and at_max.until is None
    node = got["node", "node gpu-3"]
    assert (node.what, node.at, node.until) == ("under MemoryPressure", TS[22], TS[27])
    assert got["pending", "pod prod/llm-1"].at == TS[25]
    pull = got["waiting", "pod prod/api-5b8c7d9f4-ccccc"]
    assert pull.what == "container main waiting: ImagePullBackOff" and pull.nodes == ("cpu-1",)
    assert ("waiting", "pod prod/api-7c9d8b6f5-bbbbb") not in got  # a container starting


def test_off_kubernetes_nothing_is_read() -> None:
    s = RawStore()
    s.add_many("up", labels_of({"job": "vllm", "instance": "node-0:8000"}), TS, np.ones(N))
    assert from_store(s, T0, float(TS[-1]), STEP, PodMap()) == []


def test_times_are_said_relative_to_the_onset() -> None:
    assert relative(T0 - 180, T0) == "3 min before the onset"
    assert relative(T0, T0) == "at the onset"
    assert relative(T0 + 720, T0) == "12 min after the onset"
    assert relative(T0, None) == ""
