"""Container restarts, with the reason the container last terminated (OOMKilled, Error)."""

from __future__ import annotations

import numpy as np

from infersight.kube.changes import ClusterChange, Rows, Window, rises

ORDER = 40
_C = "(namespace, pod, container)"
QUERIES = {
    "restarts": f"max by {_C} (kube_pod_container_status_restarts_total)",
    "reason": "max by (namespace, pod, container, reason) "
    "(kube_pod_container_status_last_terminated_reason)",
}


def read(rows: dict[str, Rows], w: Window) -> list[ClusterChange]:
    reasons: dict[tuple[str, str, str], list[tuple[str, np.ndarray]]] = {}
    for lb, row in rows["reason"]:
        key = (lb.get("namespace", ""), lb.get("pod", ""), lb.get("container", ""))
        reasons.setdefault(key, []).append((lb.get("reason", ""), row))
    out = []
    for lb, row in rows["restarts"]:
        ns, pod, container = lb.get("namespace", ""), lb.get("pod", ""), lb.get("container", "")
        steps = list(rises(row))
        if not steps:
            continue
        first, last = steps[0][0], steps[-1][0]
        count = sum(after - before for _, before, after in steps)
        # the reason the container gave at its last restart: the series present from then on
        why = sorted(r for r, v in reasons.get((ns, pod, container), []) if np.any(v[last:] > 0))
        what = f"container {container} restarted {count:g} time(s)"
        if why:
            what += f" (last terminated: {', '.join(why)})"
        out.append(ClusterChange(float(w.times[first]), "restart", f"pod {ns}/{pod}", what,
                                 w.node_of(pod), w.workload_of(pod)))  # fmt: skip
    return out
