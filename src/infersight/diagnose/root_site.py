"""The roots the request-path walk finds: a site (ends on one part of the fleet), the root
named there, and the resolution of every confirmed cause against them."""

from __future__ import annotations

from dataclasses import dataclass, field

from infersight.diagnose.path import HOP, Change

#: the layer (seed §2.1) a part of the path belongs to
LAYER_OF = {
    "gateway": "access",
    "hop": "service",
    "service": "service",
    "engine": "inference",
    "gpu": "inference",
    "cache": "dependency",
    "retrieval": "dependency",
    "host": "infrastructure",
}
#: relations by which an end sent more work downstream (its root is a trigger)
MORE_WORK = frozenset({"more work", "demand", "misses", "a peer's share"})


@dataclass(frozen=True)
class Site:
    """Ends on one part of the fleet: one node, or that part on replicas of one role."""

    part: str
    nodes: tuple[str, ...]
    ends: tuple[Change, ...]

    @property
    def onset(self) -> float:
        return min(c.onset for c in self.ends)

    @property
    def instances(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.instance for c in self.ends if c.node != HOP))


@dataclass(frozen=True)
class PathRoot:
    """A root the walk found: the rule that names it (or `change@NODE`), where, and how it
    reaches the symptom."""

    id: str
    site: Site
    named: bool
    bottleneck: str = ""  # the node where the work piled up, on the way to the symptom
    trigger: bool = False  # it sent more work down the path (traffic, misses, a lost share)
    via: tuple[str, ...] = ()  # nodes from the root to the symptom
    #: a limit named beside the root that sent the work it could not take (`under_load`)
    triggered_by: str = ""
    #: the strongest user-facing change it explains (0: a forecast, or nothing felt)
    reach: float = 0.0


@dataclass
class Resolution:
    roots: list[PathRoot] = field(default_factory=list)
    #: confirmed cause → the roots that explain it
    explained: dict[str, list[str]] = field(default_factory=dict)
    #: confirmed causes the walk did not reach, which stand on the rules' own verdict
    outside: list[str] = field(default_factory=list)
    #: (cause, root): the root's consequences on the walk reach the cause's parts
    on_path: set[tuple[str, str]] = field(default_factory=set)
