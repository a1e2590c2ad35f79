"""An incident's signature: its root causes, layers, signals, onset order and figures.

Taken from a diagnosis when a draft is written, and read back from a postmortem's front
matter (which a person may have edited), so that both sides of a comparison are the same shape.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from infersight.diagnose.kb import LAYER_ORDER
from infersight.diagnose.result import Diagnosis, Evidence
from infersight.postmortem.config import PostmortemConfig
from infersight.postmortem.frontmatter import FrontMatter


@dataclass(frozen=True)
class IncidentSignature:
    root_causes: tuple[str, ...] = ()
    layers: tuple[str, ...] = ()
    signals: tuple[str, ...] = ()
    onset_order: tuple[str, ...] = ()
    figures: tuple[tuple[str, float], ...] = ()  # (signal, observed / baseline)

    @property
    def figure_map(self) -> dict[str, float]:
        return dict(self.figures)


def ratio(e: Evidence, cap: float) -> float | None:
    """observed / baseline of one reading, capped both ways (a baseline of 0 reads as `cap`);
    None where the reading has no such figures."""
    b, o = e.baseline, e.observed
    if b is None or o is None or not (math.isfinite(b) and math.isfinite(o)):
        return None
    if b == 0 and o == 0:
        return 1.0
    if b == 0 or o / b > cap:
        return cap if o > 0 else 1.0 / cap
    r = o / b
    if r <= 0:
        return 1.0 / cap
    return max(r, 1.0 / cap)


def _layer_key(layer: str) -> tuple[int, str]:
    return (LAYER_ORDER.index(layer) if layer in LAYER_ORDER else len(LAYER_ORDER), layer)


def from_diagnosis(d: Diagnosis, cfg: PostmortemConfig | None = None) -> IncidentSignature:
    """The signature of a diagnosis: root causes by rank; the layers of what was confirmed;
    the signals its supporting readings moved, strongest first; confirmed ids by onset."""
    cfg = cfg or PostmortemConfig()
    confirmed = d.by_verdict("confirmed")
    roots = tuple(r.hypothesis for r in sorted(d.root_causes, key=lambda r: r.rank))
    layers = tuple(sorted({h.layer for h in confirmed}, key=_layer_key))
    strongest: dict[str, float] = {}
    seen: dict[str, float] = {}  # signal -> strength, for the order; figures may be missing
    for h in confirmed:
        for e in h.evidence:
            if not e.supports or not e.signal:
                continue
            r = ratio(e, cfg.ratio_cap)
            strength = abs(math.log(r)) if r is not None else 0.0
            seen[e.signal] = max(seen.get(e.signal, -1.0), strength)
            if r is not None and strength >= abs(math.log(strongest.get(e.signal, 1.0))):
                strongest[e.signal] = r
    signals = sorted(seen, key=lambda s: (-seen[s], s))[: cfg.max_signals]
    figures = tuple((s, _round(strongest[s])) for s in signals if s in strongest)
    timed = sorted((h for h in confirmed if h.onset is not None), key=lambda h: (h.onset, h.id))
    return IncidentSignature(
        roots, layers, tuple(sorted(signals)), tuple(h.id for h in timed), figures
    )


def _round(x: float) -> float:
    """Three significant figures: enough to compare, few enough to read in front matter."""
    return float(f"{x:.3g}")


def from_front_matter(fm: FrontMatter) -> IncidentSignature:
    figures = tuple(
        (s, float(v))
        for s, v in sorted(fm.signature.figures.items())
        if isinstance(v, int | float) and math.isfinite(v) and v > 0
    )
    return IncidentSignature(
        tuple(fm.root_causes),
        tuple(fm.layers),
        tuple(sorted(set(fm.signals))),
        tuple(fm.signature.onset_order),
        figures,
    )
