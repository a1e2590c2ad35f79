"""The cluster's pods and changes as a bundle artifact, so that a bundle replays them."""

from __future__ import annotations

import json
from collections.abc import Sequence

from infersight.kube.changes import ClusterChange
from infersight.kube.pods import PodMap

ARTIFACT = "cluster.json"


def to_artifact(pods: PodMap, changes: Sequence[ClusterChange]) -> bytes:
    doc = {"pods": pods.to_dict(), "changes": [c.to_dict() for c in changes]}
    return json.dumps(doc, indent=1, sort_keys=True).encode()


def from_artifact(data: bytes) -> tuple[PodMap, tuple[ClusterChange, ...]]:
    """What `to_artifact` wrote. Raises ValueError for anything else."""
    try:
        doc = json.loads(data)
        pods = PodMap.from_dict(doc.get("pods", {}))
        changes = tuple(ClusterChange.from_dict(c) for c in doc.get("changes", []))
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise ValueError(f"{ARTIFACT} is not a cluster record: {exc}") from None
    return pods, changes
