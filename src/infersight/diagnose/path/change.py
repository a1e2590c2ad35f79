"""A change: one series (a signal on an instance) that moved, at a node of the path, with its
facet (what it measures there), its figures and when it began. The walk reads nothing else."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from infersight.diagnose.result import Evidence
from infersight.signals import EFFECTS, all_signals


@dataclass(frozen=True)
class Change:
    node: str
    signal: str
    instance: str
    facet: str
    direction: str  # up | down
    onset: float
    score: float
    kind: str  # deviation | fleet_outlier | absent | trend | step | peak | idle | added
    bad: bool  # the signal's bad way (a queue that grew; a hit ratio that fell)
    evidence: Evidence
    uncertainty_s: float = 0.0
    before: float | None = None
    after: float | None = None
    #: read against the window's own first part only (no baseline window held the series)
    weak: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return (self.signal, self.instance)

    @property
    def is_effect(self) -> bool:
        return self.facet in EFFECTS

    @property
    def is_work(self) -> bool:
        """Work arriving: a trigger's sign."""
        return self.facet == "arrivals"

    @property
    def felt(self) -> bool:
        """What users feel (`user_facing` in signals.yaml): a symptom, never what made it."""
        sig = all_signals().get(self.signal)
        return sig is not None and sig.user_facing is not None

    @property
    def is_event(self) -> bool:
        """A count of moments that are over (`event` in signals.yaml): a restart."""
        sig = all_signals().get(self.signal)
        return sig is not None and sig.event

    @property
    def follows_work(self) -> bool:
        """What rises and falls with the work (a process's CPU, a batch's size)."""
        sig = all_signals().get(self.signal)
        return sig is not None and sig.load

    @property
    def ratio(self) -> float | None:
        if self.before is None or self.after is None or self.before == 0:
            return None
        return self.after / self.before


def bad_way(signal: str, direction: str) -> bool:
    """Whether moving this way is the signal's bad direction."""
    sig = all_signals().get(signal)
    return sig is not None and sig.bad in (direction, "both")


def by_node(changes: Iterable[Change]) -> dict[str, list[Change]]:
    out: dict[str, list[Change]] = {}
    for c in changes:
        out.setdefault(c.node, []).append(c)
    return out
