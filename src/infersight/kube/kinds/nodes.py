"""Nodes not Ready, or under memory, disk or PID pressure, or without a network."""

from __future__ import annotations

import numpy as np

from infersight.kube.changes import ClusterChange, Rows, Window, lasting

ORDER = 60
QUERIES = {
    "conditions": 'max by (node, condition) (kube_node_status_condition{status="true"})',
}
_TROUBLE = {"MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"}


def read(rows: dict[str, Rows], w: Window) -> list[ClusterChange]:
    out = []
    for lb, row in rows["conditions"]:
        node, cond = lb.get("node", ""), lb.get("condition", "")
        if cond == "Ready":
            bad, what = np.nan_to_num(row, nan=1.0) < 0.5, "not Ready"
        elif cond in _TROUBLE:
            bad, what = np.nan_to_num(row) > 0.5, f"under {cond}"
        else:
            continue
        out += lasting(w, "node", f"node {node}", what, bad, (node,))
    return out
