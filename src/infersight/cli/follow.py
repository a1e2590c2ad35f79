"""`infersight detect --follow -p URL`: the streaming detectors on a live Prometheus.

Warm-up: the same clock time last week and yesterday (from `window` before to `horizon`
after, so the seasonal predictors have something to read while the session runs), then the
last `window` up to now, fed in time order, silently. Then every `interval` seconds the points
since the last pull are fetched and fed; each finding is printed as it appears (one line, or
one JSON object per line with --format json). Each point is evaluated once, on arrival: the
detectors are incremental, nothing is re-run over the window.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from infersight.detect.stream import StreamFinding
from infersight.detect.stream_config import StreamConfig
from infersight.detect.stream_fleet import FleetStream, Gone
from infersight.timeparse import iso

if TYPE_CHECKING:
    from pathlib import Path

    from infersight.cli.connection import Connection
    from infersight.frame import MetricFrame

#: (start, end, step) → the frame of every signal on that grid (raises on a server error).
Puller = Callable[[float, float, float], "MetricFrame"]

DAY = 86400.0


def warm_spans(now: float, window: float, horizon: float) -> list[tuple[float, float]]:
    """The spans read before following, oldest first: around now − 7 d, around now − 1 d
    (each from `window` before to `horizon` after), then the last `window`."""
    spans = [(now - lag - window, now - lag + horizon) for lag in (7 * DAY, DAY)]
    return [*spans, (now - window, now)]


def render(event: StreamFinding | Gone, as_json: bool) -> str:
    if isinstance(event, Gone):
        if as_json:
            return json.dumps(
                {"series": event.series, "kind": "missing", "since": iso(event.since)}
            )
        return f"{iso(event.since)}  missing  {event.describe()}"
    if as_json:
        d = {
            "series": event.series,
            "kind": event.kind,
            "direction": event.direction,
            "onset": iso(event.onset),
            "reported_at": iso(event.reported_at),
            "observed": event.observed,
            "expected": event.expected,
            "band": [event.low, event.high],
            "z": event.z if math.isfinite(event.z) else None,
            "likelihood": event.likelihood,
            "surprise": event.surprise,
            "baseline": event.baseline,
        }
        return json.dumps(d)
    return f"{iso(event.reported_at)}  {event.kind:15s}  {event.describe()}"


def render_error(t: float, message: str, as_json: bool) -> str:
    if as_json:
        return json.dumps({"kind": "unread", "at": iso(t), "error": message})
    return f"{iso(t)}  unread           pull failed ({message}): not checked, retrying"


def follow(
    pull: Puller,
    *,
    step: float,
    window: float,
    interval: float,
    as_json: bool,
    emit: Callable[[str], None] = print,
    horizon: float = 6 * 3600.0,
    config: StreamConfig | None = None,
    now: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    cycles: int | None = None,
    transient: tuple[type[Exception], ...] = (),
) -> int:
    """Warm up, then pull and evaluate every `interval` s; `cycles` bounds the loop (tests).
    Returns the number of findings printed."""
    fleet = FleetStream(config)
    # one scrape interval behind now, so that the newest point has arrived when it is read
    t_now = math.floor((now() - step) / step) * step
    for a, b in warm_spans(t_now, window, horizon):
        b = min(b, t_now)
        if b > a:
            fleet.feed(pull(a, b, step))  # history: learnt from, not reported
    last = t_now
    shown = 0
    k = 0
    while cycles is None or k < cycles:
        k += 1
        sleep(interval)
        t_now = math.floor((now() - step) / step) * step
        if t_now <= last:
            continue
        try:
            frame = pull(last, t_now, step)  # `last` itself is not fed twice
        except transient as exc:  # nothing read: said, and the span is read again next time
            emit(render_error(t_now, str(exc), as_json))
            continue
        for event in fleet.feed(frame):
            emit(render(event, as_json))
            shown += 1
        last = t_now
    return shown


def run_cli(
    conn: Connection, window: str, mappings: list[Path] | None, as_json: bool, step: float = 15.0
) -> None:
    """The `detect --follow` command: runs until interrupted (Ctrl-C)."""
    from infersight.cli.common import console, fail
    from infersight.exporters import load_catalog
    from infersight.sources.errors import QueryTimeout, ServerUnreachable, SourceError
    from infersight.sources.pull import pull
    from infersight.timeparse import parse_duration

    try:
        length = parse_duration(window)
    except ValueError as exc:
        fail(f"--window: {exc}")
    catalog = load_catalog(mappings or [])

    def puller(a: float, b: float, st: float) -> MetricFrame:
        # a client per pull: --deadline bounds each pull, not the whole session
        return pull(conn.client(), catalog, a, b, st, None).frame

    if not as_json:
        console.print(
            f"following {conn.url} every {step:.0f} s (warming up on the last {window}, "
            "yesterday and last week); Ctrl-C to stop"
        )
    retryable = tuple(e for e in (ServerUnreachable, QueryTimeout) if issubclass(e, SourceError))
    try:
        follow(
            puller, step=step, window=length, interval=step, as_json=as_json, transient=retryable
        )
    except SourceError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        pass
