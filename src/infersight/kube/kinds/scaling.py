"""Scaling: a HorizontalPodAutoscaler's desired replicas changed, and when it reached its
maximum (a surge it can no longer follow)."""

from __future__ import annotations

import itertools

import numpy as np

from infersight.kube.changes import ClusterChange, Rows, Window, lasting

ORDER = 30
_BY = "max by (namespace, horizontalpodautoscaler)"
QUERIES = {
    "desired": f"{_BY} (kube_horizontalpodautoscaler_status_desired_replicas)",
    "current": f"{_BY} (kube_horizontalpodautoscaler_status_current_replicas)",
    "max": f"{_BY} (kube_horizontalpodautoscaler_spec_max_replicas)",
}


def _key(lb: dict[str, str]) -> tuple[str, str]:
    return lb.get("namespace", ""), lb.get("horizontalpodautoscaler", "")


def read(rows: dict[str, Rows], w: Window) -> list[ClusterChange]:
    current = {_key(lb): v for lb, v in rows["current"]}
    most = {_key(lb): v for lb, v in rows["max"]}
    out: list[ClusterChange] = []
    for lb, row in rows["desired"]:
        ns, name = _key(lb)
        subject = f"HPA {ns}/{name}"
        ok = np.flatnonzero(~np.isnan(row))
        for a, b in itertools.pairwise(ok):
            if row[b] != row[a]:
                what = f"desired replicas {row[a]:g} → {row[b]:g}"
                out.append(ClusterChange(float(w.times[b]), "scaling", subject, what))
        cur, top = current.get((ns, name)), most.get((ns, name))
        if cur is not None and top is not None:
            with np.errstate(invalid="ignore"):
                at_max = (cur >= top) & (row >= top)
            peak = np.nanmax(top) if np.any(~np.isnan(top)) else np.nan
            what = f"at its maximum of {peak:g} replicas: it cannot add more"
            out += lasting(w, "scaling", subject, what, np.nan_to_num(at_max) > 0)
    return out
