"""What a scenario's fault sees: the drivers to change, the grid, a seeded generator."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from infersight.lab.sim.config import FleetConfig
from infersight.lab.sim.drivers import Drivers, FloatArray
from infersight.lab.sim.traffic import DAY


@dataclass
class Ctx:
    cfg: FleetConfig
    drv: Drivers
    ts: FloatArray
    dt: float
    rng: np.random.Generator
    nodes: list[str]
    first: int = 0  # steps of fault-free history before the part faults are placed in

    @property
    def n(self) -> int:
        return int(self.ts.size)

    def index(self, ts: float) -> int:
        return int(np.clip(round((ts - float(self.ts[0])) / self.dt), 0, self.n - 1))

    def _at(self, fraction: float) -> int:
        """The step at this fraction of the run after its history."""
        return self.first + int(fraction * (self.n - self.first))

    def onset(self, lo: float, hi: float) -> int:
        """A step drawn between fractions lo and hi of the run (after its history)."""
        a, b = self._at(lo), self._at(hi)
        return int(self.rng.integers(a, max(b, a + 1)))

    def onset_near_hour(self, lo: float, hi: float, hour_lo: float, hour_hi: float) -> int:
        """A step between fractions lo..hi of the run whose hour of day is in hour_lo..hour_hi."""
        hours = (self.ts % DAY) / 3600.0
        idx = np.arange(self.n)
        window = (idx >= self._at(lo)) & (idx <= self._at(hi))
        ok = window & (hours >= hour_lo) & (hours <= hour_hi)
        if not ok.any():
            return self.onset(lo, hi)
        return int(self.rng.choice(idx[ok]))

    def pick(self, lo: int, hi: int) -> list[int]:
        """Between lo and hi distinct instances (at least one, never all but one's worth more)."""
        m = len(self.nodes)
        k = int(np.clip(self.rng.integers(lo, hi + 1), 1, m))
        return sorted(int(i) for i in self.rng.choice(m, size=k, replace=False))

    def ramp(self, start: int, minutes: float) -> FloatArray:
        """0 before start, rising linearly to 1 over `minutes`."""
        steps = max(1.0, minutes * 60.0 / self.dt)
        out: FloatArray = np.clip((np.arange(self.n) - start) / steps, 0.0, 1.0)
        return out

    def u(self, lo: float, hi: float) -> float:
        return float(self.rng.uniform(lo, hi))


@dataclass
class Effect:
    """What a fault did: when, where, how much (filled into the ground truth)."""

    onset: int | None
    instances: list[str]
    params: dict[str, float] = field(default_factory=dict)
    end: int | None = None
