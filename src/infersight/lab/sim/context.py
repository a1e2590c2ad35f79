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
    #: how far the fault is from healthy, relative to the scenario as drawn (knobs.Variation)
    magnitude: float = 1.0
    #: hours of day every fault onset is drawn in, whatever the scenario's own choice
    band: tuple[float, float] | None = None
    #: the part of the run (fractions after its history) a band's onset may fall in
    band_part: tuple[float, float] = (0.3, 0.8)

    @property
    def n(self) -> int:
        return int(self.ts.size)

    def index(self, ts: float) -> int:
        return int(np.clip(round((ts - float(self.ts[0])) / self.dt), 0, self.n - 1))

    def _at(self, fraction: float) -> int:
        """The step at this fraction of the run after its history."""
        return self.first + int(fraction * (self.n - self.first))

    def onset(self, lo: float, hi: float) -> int:
        """A step drawn between fractions lo and hi of the run (after its history); in the
        band's hours instead when one is set."""
        if self.band is not None:
            return self._in_band(lo, hi)
        a, b = self._at(lo), self._at(hi)
        return int(self.rng.integers(a, max(b, a + 1)))

    def onset_near_hour(self, lo: float, hi: float, hour_lo: float, hour_hi: float) -> int:
        """`moment_near_hour` for a fault's onset: in the band's hours when one is set."""
        if self.band is not None:
            return self._in_band(lo, hi)
        return self.moment_near_hour(lo, hi, hour_lo, hour_hi)

    def moment_near_hour(self, lo: float, hi: float, hour_lo: float, hour_hi: float) -> int:
        """A step between fractions lo..hi of the run whose hour of day is in hour_lo..hour_hi."""
        hours = (self.ts % DAY) / 3600.0
        idx = np.arange(self.n)
        window = (idx >= self._at(lo)) & (idx <= self._at(hi))
        ok = window & (hours >= hour_lo) & (hours <= hour_hi)
        if not ok.any():
            a, b = self._at(lo), self._at(hi)
            return int(self.rng.integers(a, max(b, a + 1)))
        return int(self.rng.choice(idx[ok]))

    def _in_band(self, lo: float, hi: float) -> int:
        """An onset in the band's hours, in the middle part of the run (`band_part`), where
        the run's start placed the band; lo..hi when the run holds none there."""
        assert self.band is not None
        h0, h1 = self.band
        hours = (self.ts % DAY) / 3600.0
        idx = np.arange(self.n)
        a, b = (self._at(f) for f in self.band_part)
        ok = (idx >= a) & (idx <= b) & (hours >= h0) & (hours <= h1)
        if not ok.any():
            a, b = self._at(lo), self._at(hi)
            return int(self.rng.integers(a, max(b, a + 1)))
        return int(self.rng.choice(idx[ok]))

    def away(self, value: float, healthy: float) -> float:
        """A severity drawn as `value`, moved from `healthy` (where the fault does nothing) by the
        magnitude: healthy + (value − healthy)·magnitude. For amounts (a leak rate, a loss, an
        inlet rise) and for limits pushed past a threshold (an index past RAM, demand past
        capacity), `healthy` being the threshold. At magnitude 1: `value`, bit for bit."""
        if self.magnitude == 1.0:
            return value
        return healthy + (value - healthy) * self.magnitude

    def away_ratio(self, value: float, healthy: float) -> float:
        """The same on a ratio scale, for a setting cut below `healthy` (a pool of 4 workers
        where 56 serve, a cache a fifth of its working set): healthy·(value/healthy)^magnitude,
        which never crosses zero however large the magnitude."""
        if self.magnitude == 1.0:
            return value
        return float(healthy * (value / healthy) ** self.magnitude)

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
