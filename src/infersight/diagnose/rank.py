"""Confidence of a confirmed hypothesis and the order of root causes.

Roots are ordered by onset (a cause comes before its effects), but onsets closer than
`DiagnoseConfig.onset_tie_s` (or the detection's own uncertainty) count as simultaneous and are
ordered by strength of evidence instead: detectors date a slow ramp later than a step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from infersight.diagnose.config import DEFAULT_CONFIG, DiagnoseConfig
from infersight.diagnose.result import Evidence


def confidence(
    scores: Sequence[float],
    evidence: Sequence[Evidence],
    conditions: int,
    config: DiagnoseConfig = DEFAULT_CONFIG,
) -> float:
    """0..1 from how many conditions held and how strong their anomalies are.

    Each supporting anomaly's score (robust z × effect, capped) saturates at
    `score_saturation`; more independent conditions that hold raise the figure.
    """
    if not scores:
        return 0.0
    cfg, top = config, config.score_saturation
    strength = sum(min(max(s, 0.0), top) / top for s in scores) / len(scores)
    breadth = 1.0 - math.exp(-max(conditions, 1) / cfg.breadth_conditions)
    supporting = sum(1 for e in evidence if e.supports)
    full = cfg.supporting_full
    wide = cfg.confidence_breadth * breadth * min(supporting, full) / full
    return round(min(1.0, cfg.confidence_base + cfg.confidence_strength * strength + wide), 3)


@dataclass(frozen=True)
class Candidate:
    id: str
    onset: float | None
    confidence: float
    #: the strongest user-facing change it explains (0: none, a forecast or a finding
    #: nobody felt)
    reach: float = 0.0
    #: the strongest of its own changes (0: unknown, a rule's verdict alone)
    strength: float = 0.0


def order(cands: Sequence[Candidate], config: DiagnoseConfig = DEFAULT_CONFIG) -> list[Candidate]:
    """What explains the most the users felt first, then the root that changed the most (both
    in bands of `reach_band`: an early wobble under the same symptom does not outrank the
    vector DB that pages a thousand times more); then earliest onset, ties within
    `onset_tie_s` broken by confidence."""
    if not cands:
        return []
    by_conf = sorted(cands, key=lambda c: (-c.confidence, c.id))
    t0 = min((c.onset for c in cands if c.onset is not None), default=None)

    def bucket(c: Candidate) -> float:
        if c.onset is None or t0 is None:
            return math.inf
        return math.floor((c.onset - t0) / config.onset_tie_s)

    def band(x: float) -> float:
        return -math.floor(math.log(max(x, 1.0), config.reach_band))

    return sorted(by_conf, key=lambda c: (band(c.reach), band(c.strength), bucket(c)))
