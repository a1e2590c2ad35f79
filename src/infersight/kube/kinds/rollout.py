"""A rollout: a Deployment's or StatefulSet's spec changed (its `metadata.generation` rose),
and the pods it replaced in the next half hour, on their nodes."""

from __future__ import annotations

import numpy as np

from infersight.kube.changes import ClusterChange, Rows, Window, rises

ORDER = 10
#: the pods a rollout replaced start within this long of its generation step
ROLLOUT_PODS_S = 1800.0
QUERIES = {
    "deployment": "max by (namespace, deployment) (kube_deployment_metadata_generation)",
    "statefulset": "max by (namespace, statefulset) (kube_statefulset_metadata_generation)",
    "unavailable": "max by (namespace, deployment) (kube_deployment_status_replicas_unavailable)",
    "replicas": "max by (namespace, deployment) (kube_deployment_spec_replicas)",
    "started": "max by (namespace, pod) (kube_pod_start_time)",
}
_KIND = {"deployment": "Deployment", "statefulset": "StatefulSet"}


def read(rows: dict[str, Rows], w: Window) -> list[ClusterChange]:
    starts = {lb.get("pod", ""): float(np.nanmax(v)) for lb, v in rows["started"] if _any(v)}
    by_dep = {
        (lb.get("namespace", ""), lb.get("deployment", "")): v for lb, v in rows["unavailable"]
    }
    size = {(lb.get("namespace", ""), lb.get("deployment", "")): v for lb, v in rows["replicas"]}
    out = []
    for key in ("deployment", "statefulset"):
        for lb, row in rows[key]:
            ns, name = lb.get("namespace", ""), lb.get(key, "")
            workload = f"{_KIND[key]}/{name}"
            for i, before, after in rises(row):
                at = float(w.times[i])
                # the step is seen at the first scrape after it: its pods may start a step early
                early = at - float(w.times[1] - w.times[0]) if w.times.size > 1 else at
                pods = sorted(
                    p for p, s in starts.items()
                    if early <= s <= at + ROLLOUT_PODS_S and w.workload_of(p) == workload
                )  # fmt: skip
                nodes = tuple(sorted({n for p in pods for n in w.node_of(p)}))
                what = f"generation {before:g} → {after:g}"
                if pods:
                    what += f"; {len(pods)} pod(s) started after it"
                un, want = by_dep.get((ns, name)), size.get((ns, name))
                if un is not None:
                    worst = np.nanmax(un[i:]) if _any(un[i:]) else np.nan
                    if np.isfinite(worst):
                        of = f" of {np.nanmax(want):g}" if want is not None and _any(want) else ""
                        what += f"; at most {worst:g}{of} replicas unavailable after it"
                out.append(ClusterChange(at, "rollout", f"{_KIND[key]} {ns}/{name}", what, nodes,
                                         workload))  # fmt: skip
    return out


def _any(row: np.ndarray) -> bool:
    return bool(np.any(~np.isnan(row)))
