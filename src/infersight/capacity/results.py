"""A load test's results as one curve: per step (a batch size, a concurrency or a request
rate), the throughput and the latency percentiles, and the plain CSV this package writes."""

from __future__ import annotations

import csv
import io
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Literal

Axis = Literal["batch", "concurrency", "rate"]
AXES: tuple[Axis, ...] = ("batch", "concurrency", "rate")
PERCENTILES = ("p50", "p90", "p95", "p99")
#: the plain format's header: latencies in milliseconds, throughput per second
PLAIN_HEADER = ("throughput", *(f"{p}_ms" for p in PERCENTILES), "requests", "errors")


class ResultsError(ValueError):
    """A results file that cannot be read as a load test; the message says what and where."""


@dataclass(frozen=True)
class Point:
    """One step of a load test. Latencies in seconds (None where the tool did not report it);
    throughput in items per second (inferences, requests, or tokens as the tool counts)."""

    x: float
    throughput: float
    latency: dict[str, float | None] = field(default_factory=dict)
    requests: int | None = None
    errors: int | None = None

    def p(self, name: str) -> float | None:
        return self.latency.get(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "x": self.x,
            "throughput": self.throughput,
            "latency_s": dict(self.latency),
            "requests": self.requests,
            "errors": self.errors,
        }


@dataclass(frozen=True)
class Sweep:
    """The curve: points sorted by x, what x is, what tool wrote it and what it counts."""

    axis: Axis
    points: tuple[Point, ...]
    source: str  # the format read: plain, perf_analyzer, model_analyzer, locust, vllm
    throughput_unit: str = "items/s"
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        xs = [p.x for p in self.points]
        if xs != sorted(xs) or len(set(xs)) != len(xs):
            raise ResultsError("a sweep's steps must be distinct and in increasing order")

    @property
    def xs(self) -> list[float]:
        return [p.x for p in self.points]

    @property
    def ys(self) -> list[float]:
        return [p.throughput for p in self.points]

    def latency_at(self, x: float, name: str = "p99") -> float | None:
        """The latency percentile at x, linear between the steps around it; None where a step
        around it lacks that percentile or x lies outside the sweep."""
        pts = self.points
        for a, b in itertools.pairwise(pts):
            if a.x <= x <= b.x:
                la, lb = a.p(name), b.p(name)
                if la is None or lb is None:
                    return None
                t = (x - a.x) / (b.x - a.x)
                return la + t * (lb - la)
        if pts and x == pts[-1].x:
            return pts[-1].p(name)
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "axis": self.axis,
            "source": self.source,
            "throughput_unit": self.throughput_unit,
            "points": [p.to_dict() for p in self.points],
            "notes": list(self.notes),
        }


def _fmt(v: float | int | None, scale: float = 1.0) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    if isinstance(v, int):
        return str(v)
    return f"{v * scale:.6g}"


def to_plain_csv(sweep: Sweep) -> str:
    """The plain format: `AXIS,throughput,p50_ms,p90_ms,p95_ms,p99_ms,requests,errors`."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow((sweep.axis, *PLAIN_HEADER))
    for p in sweep.points:
        x = int(p.x) if float(p.x).is_integer() else p.x
        lat = (_fmt(p.p(name), 1000.0) for name in PERCENTILES)
        w.writerow((x, _fmt(p.throughput), *lat, _fmt(p.requests), _fmt(p.errors)))
    return out.getvalue()
