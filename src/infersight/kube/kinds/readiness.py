"""Running pods that are not Ready: out of their Service's endpoints, taking no traffic (seed
§2.3: a removed instance shows as the others' skewed load)."""

from __future__ import annotations

import numpy as np

from infersight.kube.changes import ClusterChange, Rows, Window, lasting

ORDER = 50
QUERIES = {
    "ready": 'max by (namespace, pod) (kube_pod_status_ready{condition="true"}) and on '
    '(namespace, pod) (kube_pod_status_phase{phase="Running"} == 1)',
}


def read(rows: dict[str, Rows], w: Window) -> list[ClusterChange]:
    out = []
    for lb, row in rows["ready"]:
        pod = lb.get("pod", "")
        subject = f"pod {lb.get('namespace', '')}/{pod}"
        not_ready = np.nan_to_num(row, nan=1.0) < 0.5
        out += lasting(w, "not_ready", subject, "not Ready, out of the Service's endpoints",
                       not_ready, w.node_of(pod), w.workload_of(pod))  # fmt: skip
    return out
