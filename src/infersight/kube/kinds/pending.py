"""Pods that cannot run: unschedulable (no node has room: GPUs, memory), or a container
waiting on its image or crash-looping."""

from __future__ import annotations

import numpy as np

from infersight.kube.changes import ClusterChange, Rows, Window, lasting

ORDER = 70
QUERIES = {
    "unschedulable": "max by (namespace, pod) (kube_pod_status_unschedulable)",
    "waiting": "max by (namespace, pod, container, reason) "
    "(kube_pod_container_status_waiting_reason)",
}
#: waiting reasons that are trouble; ContainerCreating and PodInitializing are a start
_WAITING = {"ImagePullBackOff", "ErrImagePull", "CrashLoopBackOff", "CreateContainerConfigError",
            "InvalidImageName", "CreateContainerError"}  # fmt: skip


def read(rows: dict[str, Rows], w: Window) -> list[ClusterChange]:
    out = []
    for lb, row in rows["unschedulable"]:
        pod = lb.get("pod", "")
        subject = f"pod {lb.get('namespace', '')}/{pod}"
        out += lasting(w, "pending", subject, "Pending: no node can schedule it",
                       np.nan_to_num(row) > 0.5, (), w.workload_of(pod))  # fmt: skip
    for lb, row in rows["waiting"]:
        reason, pod = lb.get("reason", ""), lb.get("pod", "")
        if reason not in _WAITING:
            continue
        subject = f"pod {lb.get('namespace', '')}/{pod}"
        what = f"container {lb.get('container', '')} waiting: {reason}"
        out += lasting(w, "waiting", subject, what, np.nan_to_num(row) > 0.5, w.node_of(pod),
                       w.workload_of(pod))  # fmt: skip
    return out
