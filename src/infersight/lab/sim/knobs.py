"""Knobs that move a run away from the scenario suite's, to measure whether a diagnosis holds.

`Variation` changes the run itself (how bad the fault is, when it starts, how noisy the
traffic is); `Exposure` changes how the run reaches a monitoring system (the scrape interval,
the exporters deployed, what relabelling did to their names). Both default to the run exactly
as the scenario suite has it: same seed, same samples.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

OnsetBand = Literal["night", "day"]


@dataclass(frozen=True)
class Variation:
    #: severity of the scenario's fault, scaled away from no fault: 1 is the fault as drawn,
    #: 0.5 half as far from healthy, 3 three times as far (faults.py says, per fault, which
    #: parameter it scales and from which no-fault value)
    magnitude: float = 1.0
    #: draw the fault's onset in these hours instead of the scenario's own (None: its own)
    onset: OnsetBand | None = None
    #: night: the diurnal trough (traffic near `night_fraction` of the 14:00 peak), where
    #: batches do not fill and a GPU fault has little work to slow down
    night_hours: tuple[float, float] = (0.0, 5.0)
    #: day: the busy hours around the 14:00 peak
    day_hours: tuple[float, float] = (10.0, 17.0)
    #: the run starts so that the band's middle lies at this fraction of it: 0.55 of 26 h
    #: leaves 14 h before (a 3 h window and its hour-earlier baseline, with hours to spare) and
    #: 12 h after (room for the alert to fire and the diagnosis to follow)
    band_at: float = 0.55
    #: the part of the run a band's onset may fall in: away from its first hours (the windows
    #: need their history) and its last (the alert needs time to fire)
    band_run_part: tuple[float, float] = (0.3, 0.8)
    #: multiplies the run's fresh noise: the demand's AR(1) jitter and each instance's
    #: arrival noise (1: Poisson). The day-repeating wiggle is structure, not noise: it stays.
    noise: float = 1.0

    def __post_init__(self) -> None:
        if not self.magnitude > 0 or not self.noise >= 0 or not 0 < self.band_at < 1:
            raise ValueError("magnitude must be > 0, noise >= 0 and band_at in (0, 1)")

    def band(self) -> tuple[float, float] | None:
        """Hours of day the onset is drawn in, or None for the scenario's own choice."""
        if self.onset is None:
            return None
        return self.night_hours if self.onset == "night" else self.day_hours


@dataclass(frozen=True)
class Exposure:
    #: seconds between scrapes, a multiple of the run's step (None: every step). Counters and
    #: histograms are cumulative, so a coarser scrape loses resolution, never counts.
    scrape_s: float | None = None
    #: exporters not deployed (names in dialects.EXPORTERS): no samples, no `up` either
    without: tuple[str, ...] = ()
    #: metric names dropped by a `metric_relabel_configs` drop rule
    drop_metrics: tuple[str, ...] = ()
    #: (old, new) metric names rewritten by a relabel rule on `__name__`
    rename_metrics: tuple[tuple[str, str], ...] = ()

    @property
    def is_default(self) -> bool:
        return self == Exposure()
