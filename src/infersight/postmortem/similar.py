"""How alike two incidents are: by root causes, signals, onset order, figures and layers.

Words alone would call every "latency went up" alike; the engine's findings tell a vector DB
that swapped from a cache that shrank, and the order the parts began in tells which came first.
Each part scores 0..1 and they are weighed by `SimilarityWeights`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TypeVar

from infersight.postmortem.config import PostmortemConfig
from infersight.postmortem.signature import IncidentSignature

T = TypeVar("T")


@dataclass(frozen=True)
class Similarity:
    score: float  # 0..1
    parts: tuple[tuple[str, float], ...]  # (part, 0..1) before weighing
    why: tuple[str, ...]  # what the two share, for a person

    def to_dict(self) -> dict[str, object]:
        return {"score": round(self.score, 3), "parts": dict(self.parts), "why": list(self.why)}


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


def order_agreement(a: Sequence[str], b: Sequence[str]) -> float:
    """Share of the pairs both orders hold that they put the same way round (1 when fewer than
    two are shared), times how much of the two lists is shared."""
    pos_a = {x: i for i, x in enumerate(a)}
    pos_b = {x: i for i, x in enumerate(b)}
    common = [x for x in a if x in pos_b]
    overlap = jaccard(a, b)
    pairs = list(combinations(common, 2))
    if not pairs:
        return overlap
    same = sum(1 for x, y in pairs if (pos_a[x] - pos_a[y]) * (pos_b[x] - pos_b[y]) > 0)
    return overlap * same / len(pairs)


def figure_closeness(a: dict[str, float], b: dict[str, float], tolerance: float) -> float:
    """For the signals both moved: 1 when the changes are the same size, 0.5 when they differ
    by `tolerance`×, less beyond; averaged, times the share of signals with figures shared."""
    common = sorted(set(a) & set(b))
    if not common:
        return 0.0
    scale = math.log(tolerance)
    close = [1.0 / (1.0 + (math.log(a[s] / b[s]) / scale) ** 2) for s in common]
    return sum(close) / len(close) * len(common) / len(set(a) | set(b))


def compare(
    query: IncidentSignature, past: IncidentSignature, cfg: PostmortemConfig | None = None
) -> Similarity:
    cfg = cfg or PostmortemConfig()
    w = cfg.weights
    parts = (
        ("root_causes", jaccard(query.root_causes, past.root_causes)),
        ("signals", jaccard(query.signals, past.signals)),
        ("onset_order", order_agreement(query.onset_order, past.onset_order)),
        ("figures", figure_closeness(query.figure_map, past.figure_map, cfg.figure_tolerance)),
        ("layers", jaccard(query.layers, past.layers)),
    )
    weights = {
        "root_causes": w.root_causes,
        "signals": w.signals,
        "onset_order": w.onset_order,
        "figures": w.figures,
        "layers": w.layers,
    }
    total = sum(weights.values()) or 1.0
    score = sum(weights[name] * value for name, value in parts) / total
    return Similarity(score, parts, _why(query, past, dict(parts)))


def _why(q: IncidentSignature, p: IncidentSignature, parts: dict[str, float]) -> tuple[str, ...]:
    out = []
    shared = [r for r in q.root_causes if r in p.root_causes]
    if shared:
        same = set(q.root_causes) == set(p.root_causes)
        out.append(("same root causes: " if same else "shares root cause: ") + ", ".join(shared))
    sig = set(q.signals) & set(p.signals)
    if sig:
        out.append(f"{len(sig)} of {len(set(q.signals) | set(p.signals))} signals moved in both")
    if parts["onset_order"] >= 0.5 and len(set(q.onset_order) & set(p.onset_order)) >= 2:
        out.append("began in the same order")
    if parts["figures"] >= 0.5:
        out.append("changes of the same size")
    return tuple(out)


def rank(
    query: IncidentSignature,
    candidates: Iterable[tuple[T, IncidentSignature]],
    cfg: PostmortemConfig | None = None,
    min_score: float | None = None,
) -> list[tuple[T, Similarity]]:
    """Candidates scored against the query, best first, those below `min_score` left out."""
    cfg = cfg or PostmortemConfig()
    floor = cfg.min_score if min_score is None else min_score
    scored = [(item, compare(query, sig, cfg)) for item, sig in candidates]
    kept = [(item, s) for item, s in scored if s.score >= floor]
    return sorted(kept, key=lambda pair: -pair[1].score)
