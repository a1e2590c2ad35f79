"""`detect --follow`: the loop on a fake Prometheus and a fake clock; FleetStream's bookkeeping."""

from __future__ import annotations

import json
import math

import numpy as np

from infersight.cli.follow import follow, warm_spans
from infersight.detect.stream import StreamFinding
from infersight.detect.stream_fleet import FleetStream, Gone
from infersight.frame import MetricFrame, SignalSeries

STEP = 60.0
NOW0 = 1_750_000_000.0 - (1_750_000_000.0 % STEP)
JUMP = NOW0 + 30 * STEP  # the level steps up here, after the warm-up
GAP = (NOW0 + 80 * STEP, NOW0 + 90 * STEP)  # node-b stops reporting here


def _value(t: float, inst: str) -> float:
    noise = np.random.default_rng(int(t) + (7 if inst == "node-b" else 0)).normal(0.0, 1.0)
    level = 50.0 + (25.0 if inst == "node-a" and t >= JUMP else 0.0)
    return float(level + noise)


class FakeProm:
    def __init__(self) -> None:
        self.calls: list[tuple[float, float]] = []

    def __call__(self, a: float, b: float, step: float) -> MetricFrame:
        self.calls.append((a, b))
        start = math.ceil(a / step) * step
        n = int((b - start) // step) + 1
        times = start + step * np.arange(n)
        rows = []
        for inst in ("node-a", "node-b"):
            row = [_value(t, inst) for t in times]
            if inst == "node-b":
                row = [
                    math.nan if GAP[0] <= t < GAP[1] else v for t, v in zip(times, row, strict=True)
                ]
            rows.append(row)
        return MetricFrame(
            start,
            step,
            n,
            {"service.e2e_latency_p99": SignalSeries(("node-a", "node-b"), np.array(rows))},
        )


class Clock:
    def __init__(self) -> None:
        self.t = NOW0 + STEP  # "now": one interval past the first evaluated point

    def now(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.t += s


def test_follow_prints_the_step_once_and_the_gap_as_missing() -> None:
    prom, clock = FakeProm(), Clock()
    lines: list[str] = []
    shown = follow(
        prom,
        step=STEP,
        window=8 * 3600.0,
        interval=STEP,
        as_json=True,
        emit=lines.append,
        now=clock.now,
        sleep=clock.sleep,
        cycles=100,
    )
    events = [json.loads(x) for x in lines]
    assert shown == len(events)
    a = [e for e in events if "node-a" in e["series"] and e["kind"] != "missing"]
    assert len(a) == 1 and a[0]["direction"] == "up"
    reported = a[0]["reported_at"]
    assert reported.startswith("2025") and a[0]["likelihood"] > 0.999
    missing = [e for e in events if e["kind"] == "missing"]
    assert [e["series"] for e in missing] == ["service.e2e_latency_p99{instance=node-b}"]
    # incremental: after the warm-up, each pull asks only for the span since the last one
    live = prom.calls[3:]
    assert all(b - a <= 2 * STEP for a, b in live)


def test_warm_spans_read_last_week_yesterday_then_the_window() -> None:
    spans = warm_spans(1_000_000.0 + 8 * 86400.0, 3600.0, 7200.0)
    starts = [a for a, _ in spans]
    assert starts == sorted(starts) and len(spans) == 3
    assert spans[-1][1] == 1_000_000.0 + 8 * 86400.0


def test_fleet_stream_feeds_each_point_once_and_reports_gone_once() -> None:
    fs = FleetStream()
    n = 400
    vals = 10.0 + np.random.default_rng(0).normal(0.0, 0.5, (1, n))
    vals[0, 380:] = np.nan
    frame = MetricFrame(NOW0, STEP, n, {"x": SignalSeries(("i",), vals)})
    ev = fs.feed(frame)
    gone = [e for e in ev if isinstance(e, Gone)]
    assert len(gone) == 1 and gone[0].since == NOW0 + 380 * STEP
    assert fs.feed(frame) == []  # the same points again: nothing new, nothing re-reported
    assert not [e for e in ev if isinstance(e, StreamFinding)]


def test_follow_is_for_a_live_server_only() -> None:
    from typer.testing import CliRunner

    from infersight.cli import app
    from infersight.cli.common import EXIT_USAGE, CommandError

    res = CliRunner().invoke(app, ["detect", "incident.tar.gz", "--follow"])
    err = res.exception
    assert isinstance(err, CommandError) and err.code == EXIT_USAGE
    assert "--follow" in str(err)
