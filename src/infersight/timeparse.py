"""Times and durations as people type them on the command line."""

from __future__ import annotations

import math
import re
import time
from datetime import UTC, datetime

_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)(ms|s|m|h|d|w))+$")
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
#: 9999-12-31T23:59:59Z, the last second `iso` (and Prometheus) can show
MAX_EPOCH = 253_402_300_799.0
#: 0001-01-01T00:00:00Z, the first second a datetime can hold
MIN_EPOCH = -62_135_596_800.0
_TIME_HINT = "use now, now-2h, epoch seconds or 2026-12-02T02:17:00Z"


def check_epoch(ts: float, what: str) -> float:
    """`ts` when it lies in years 1–9999, else ValueError (with a hint when it looks like
    milliseconds or finer)."""
    if not math.isfinite(ts) or not MIN_EPOCH <= ts <= MAX_EPOCH:
        hint = ""
        if MAX_EPOCH < ts < MAX_EPOCH * 1e6:
            hint = "; it looks like milliseconds or finer: give seconds"
        raise ValueError(f"{what} {ts:g} lies outside the years 1-9999{hint}")
    return ts


def parse_duration(text: str) -> float:
    """`90s`, `5m`, `1h30m`, `2d` or plain seconds → seconds."""
    t = text.strip()
    try:
        value = float(t)
    except ValueError:
        if not _DURATION.match(t):
            raise ValueError(f"{text!r} is not a duration; use e.g. 30s, 5m, 1h30m, 2d") from None
        value = sum(float(n) * _UNIT_S[u] for n, u in _PART.findall(t))
    if not math.isfinite(value):  # float() takes "nan", "inf", "1e999"
        raise ValueError(f"{text!r} is not a duration; use e.g. 30s, 5m, 1h30m, 2d")
    if value <= 0:
        raise ValueError(f"duration {text!r} must be positive")
    return value


def promql_duration(seconds: float) -> str:
    """Seconds → a PromQL duration literal (`300` → `5m`)."""
    ms = round(seconds * 1000)
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def parse_time(text: str | None, now: float | None = None) -> float:
    """`now`, `now-2h`, epoch seconds, or ISO 8601 (`2026-12-02T02:17:00Z`; no zone = UTC)."""
    current = time.time() if now is None else now
    if text is None or text.strip() in ("", "now"):
        return current
    t = text.strip()
    bad = f"{text!r} is not a time; {_TIME_HINT}"
    if t.startswith("now-"):
        try:
            return check_epoch(current - parse_duration(t[4:]), "the time")
        except ValueError as exc:
            raise ValueError(f"{text!r} is not a time: {exc}; {_TIME_HINT}") from None
    try:
        epoch = float(t)
    except ValueError:
        pass
    else:
        # float() takes "nan", "inf" and epochs past year 9999, which no clock can show
        if not math.isfinite(epoch):
            raise ValueError(bad)
        try:
            return check_epoch(epoch, "epoch")
        except ValueError as exc:
            raise ValueError(f"{text!r} is not a time: {exc}; {_TIME_HINT}") from None
    try:
        dt = datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(bad) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    try:
        return check_epoch(dt.timestamp(), "the time")
    except (ValueError, OverflowError):  # 0001-01-01T00:00+01:00 is before year 1 in UTC
        raise ValueError(bad) from None


def iso(ts: float) -> str:
    """UTC ISO 8601 of an epoch; out of years 1–9999, the number itself (never an error)."""
    try:
        return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError, OSError):
        return f"{ts:g}"
