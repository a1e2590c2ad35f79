"""An image change: a workload's container runs an image it did not run at the window's
start (a deploy of a new version, or a tag that moved)."""

from __future__ import annotations

import numpy as np

from infersight.kube.changes import ClusterChange, Rows, Window

ORDER = 20
QUERIES = {"images": "max by (namespace, pod, container, image) (kube_pod_container_info)"}


def read(rows: dict[str, Rows], w: Window) -> list[ClusterChange]:
    # per (workload, container): each image's first time seen, and the pods (nodes) running it
    first: dict[tuple[str, str, str], dict[str, tuple[float, set[str]]]] = {}
    for lb, row in rows["images"]:
        seen = np.flatnonzero(~np.isnan(row))
        if not seen.size:
            continue
        pod = lb.get("pod", "")
        key = (lb.get("namespace", ""), w.workload_of(pod) or f"pod/{pod}", lb.get("container", ""))
        at, nodes = first.setdefault(key, {}).get(lb.get("image", ""), (np.inf, set()))
        nodes |= set(w.node_of(pod))
        first[key][lb.get("image", "")] = (min(at, float(w.times[seen[0]])), nodes)
    out = []
    start = float(w.times[0])
    for (ns, workload, container), images in first.items():
        old = sorted(i for i, (t, _) in images.items() if t <= start)
        for image, (t, nodes) in sorted(images.items(), key=lambda kv: kv[1][0]):
            if t <= start or not old:
                continue  # there from the start, or nothing to compare it with
            what = f"container {container}: {', '.join(old)} → {image}"
            kind, _, name = workload.partition("/")
            subject = f"{kind} {ns}/{name}"
            out.append(ClusterChange(t, "image", subject, what, tuple(sorted(nodes)), workload))
    return out
