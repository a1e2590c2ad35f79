"""Ground truth of a simulated run: what was broken, where, from when."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class GroundTruth:
    scenario: str
    roots: tuple[str, ...]  # root-cause hypothesis ids; empty for a healthy run
    layer: str  # layer of the (first) root cause, "" when healthy
    onset: float | None  # epoch seconds the cause began; None when healthy
    end: float | None  # epoch seconds the cause stopped; None if it lasts to the end
    instances: tuple[str, ...]  # instances the cause touches directly
    seed_section: str
    description: str
    contributing: tuple[str, ...] = ()  # triggers that are not the cause (a burst, a surge)
    params: dict[str, float] = field(default_factory=dict)  # the magnitudes this seed drew
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "roots": list(self.roots),
            "contributing": list(self.contributing),
            "layer": self.layer,
            "onset": self.onset,
            "end": self.end,
            "instances": list(self.instances),
            "seed_section": self.seed_section,
            "description": self.description,
            "params": dict(self.params),
            "seed": self.seed,
        }
