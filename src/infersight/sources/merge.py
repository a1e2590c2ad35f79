"""Series → one row per instance identity, the same way for a live pull and a local evaluation.

Several series of one identity (the GPUs of a host, two engines on one node) merge with the
signal's `combine`; where several exporter families cover one identity, the first (highest
priority) family with data wins for that identity.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np

from infersight.frame import FloatArray
from infersight.identity import resolve
from infersight.signals import Combine


def combine_rows(rows: FloatArray, how: Combine) -> FloatArray:
    """Merge a (k, n) stack into one row, ignoring NaN; all-NaN columns stay NaN."""
    present = ~np.isnan(rows)
    count = present.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if how == "sum":
            out = np.nansum(rows, axis=0)
        elif how == "mean":
            out = np.nansum(rows, axis=0) / count
        elif how == "max":
            out = np.max(np.where(present, rows, -np.inf), axis=0)
        else:
            out = np.min(np.where(present, rows, np.inf), axis=0)
    result: FloatArray = np.where(count > 0, out, np.nan)
    return result


Identify = Callable[[Mapping[str, str]], str]


def rows_by_identity(
    labelled_rows: Iterable[tuple[Mapping[str, str], FloatArray]],
    how: Combine,
    identify: Identify = resolve,
) -> dict[str, FloatArray]:
    """One row per identity; non-finite values (±Inf from a division by zero) become gaps.
    `identify` names a series' identity (a pod's node where the cluster says where it runs:
    `kube/pods.py`)."""
    groups: dict[str, list[FloatArray]] = {}
    for labels, row in labelled_rows:
        clean = np.where(np.isfinite(row), row, np.nan)
        if not np.all(np.isnan(clean)):
            groups.setdefault(identify(labels), []).append(clean)
    return {ident: combine_rows(np.vstack(rows), how) for ident, rows in groups.items()}


def first_family_wins(
    per_family: Iterable[tuple[str, dict[str, FloatArray]]],
) -> tuple[dict[str, FloatArray], list[str]]:
    """Rows per identity from families in priority order, and the families that contributed."""
    rows: dict[str, FloatArray] = {}
    used: list[str] = []
    for family, fam_rows in per_family:
        fresh = {k: v for k, v in fam_rows.items() if k not in rows}
        if fresh:
            rows.update(fresh)
            used.append(family)
    return rows, used
