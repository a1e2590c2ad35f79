"""Confidence of a confirmed hypothesis and the order of root causes.

Roots are ordered by onset (a cause comes before its effects), but onsets closer than
`ONSET_TIE_S` (or the detection's own uncertainty) count as simultaneous and are ordered by
strength of evidence instead: detectors date a slow ramp later than a step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from infersight.diagnose.result import Evidence

#: Onsets closer than this are simultaneous for ranking.
ONSET_TIE_S = 900.0


def confidence(scores: Sequence[float], evidence: Sequence[Evidence], conditions: int) -> float:
    """0..1 from how many conditions held and how strong their anomalies are.

    Each supporting anomaly's score (robust z × effect, capped) saturates at 20; more
    independent conditions that hold raise the figure.
    """
    if not scores:
        return 0.0
    strength = sum(min(max(s, 0.0), 20.0) / 20.0 for s in scores) / len(scores)
    breadth = 1.0 - math.exp(-max(conditions, 1) / 2.0)
    supporting = sum(1 for e in evidence if e.supports)
    return round(min(1.0, 0.35 + 0.4 * strength + 0.25 * breadth * min(supporting, 4) / 4), 3)


@dataclass(frozen=True)
class Candidate:
    id: str
    onset: float | None
    confidence: float


def order(cands: Sequence[Candidate]) -> list[Candidate]:
    """Earliest onset first, ties within ONSET_TIE_S broken by confidence."""
    if not cands:
        return []
    by_conf = sorted(cands, key=lambda c: (-c.confidence, c.id))
    t0 = min((c.onset for c in cands if c.onset is not None), default=None)

    def bucket(c: Candidate) -> float:
        if c.onset is None or t0 is None:
            return math.inf
        return math.floor((c.onset - t0) / ONSET_TIE_S)

    return sorted(by_conf, key=bucket)
