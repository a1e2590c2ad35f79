"""A fleet fed to the streaming detectors frame by frame: one `SeriesDetector` per series."""

from __future__ import annotations

import math
from dataclasses import dataclass

from infersight.detect.stream import SeriesDetector, StreamFinding
from infersight.detect.stream_config import StreamConfig
from infersight.frame import MetricFrame


@dataclass(frozen=True)
class Gone:
    """A series that stopped reporting: missing is said, never taken as healthy."""

    series: str
    since: float  # timestamp of its first missing point
    points: int

    def describe(self) -> str:
        return f"{self.series}: no data for {self.points} points: not checked, not healthy"


class FleetStream:
    """A `SeriesDetector` per (signal, instance), fed frame by frame (`feed`).

    Each point is fed once: a frame that overlaps what was already fed (a re-pull of the last
    few scrapes) only adds its newer points. A series with `gone_points` missing points in a
    row is reported once as `Gone` until it comes back.
    """

    def __init__(self, config: StreamConfig | None = None, gone_points: int = 4) -> None:
        self.cfg = config or StreamConfig()
        self.gone_points = gone_points
        self._det: dict[str, SeriesDetector] = {}
        self._last: dict[str, float] = {}
        self._missing: dict[str, tuple[float, int]] = {}

    def __len__(self) -> int:
        return len(self._det)

    def feed(self, frame: MetricFrame) -> list[StreamFinding | Gone]:
        """Feed a frame's points not yet seen; what was found, in time order."""
        out: list[tuple[float, StreamFinding | Gone]] = []
        times = frame.times.tolist()
        for signal, series in frame.series.items():
            for inst, row in zip(series.instances, series.values.tolist(), strict=True):
                key = f"{signal}{{instance={inst}}}"
                det = self._det.get(key)
                if det is None:
                    det = self._det[key] = SeriesDetector(key, self.cfg)
                last = self._last.get(key, -math.inf)
                for t, v in zip(times, row, strict=True):
                    if t <= last:
                        continue
                    last = t
                    p = det.update(t, v)
                    if p.missing:
                        since, k = self._missing.get(key, (t, 0))
                        self._missing[key] = (since, k + 1)
                        if k + 1 == self.gone_points:
                            out.append((t, Gone(key, since, k + 1)))
                        continue
                    self._missing.pop(key, None)
                    if p.finding is not None:
                        out.append((t, p.finding))
                self._last[key] = last
        out.sort(key=lambda e: e[0])
        return [e for _, e in out]
