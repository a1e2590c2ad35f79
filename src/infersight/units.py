"""Human figures for findings and reports: "380 ms", "4.1 s", "95%", "14.2 GiB", "83 °C".

The unit is a canonical signal's (see `infersight.signals`): s, ratio, bytes, celsius, MHz, W,
count, per_s, cores, code. Anything else is printed as the number followed by the unit string.
Times are UTC, always: an incident crosses time zones faster than people do.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

_BINARY = ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))
_SUFFIX = {"celsius": " °C", "MHz": " MHz", "W": " W", "per_s": "/s", "cores": " cores"}


def _num(v: float) -> str:
    """Three significant digits, no exponent, thousands separated: 0.5, 12.3, 380, 12,345.

    Below 0.001 a figure reads as "≈0": no canonical unit makes such a value worth its digits.
    """
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a == 0:
        return "0"
    if a < 1e-3:
        return "≈0"
    text = f"{v:.3g}"
    return text if "e" not in text else f"{v:.4f}".rstrip("0").rstrip(".")


def format_value(value: float | None, unit: str | None) -> str:
    """One value of a signal in human units; "n/a" when there is none (None, NaN, inf)."""
    if value is None or not math.isfinite(value):
        return "n/a"
    v = float(value)
    a = abs(v)
    if unit == "s":
        if a == 0:
            return "0 s"
        if a < 1e-6:
            return "≈0 s"
        if a < 1e-3:
            return f"{_num(v * 1e6)} µs"
        if a < 1:
            return f"{_num(v * 1e3)} ms"
        if a < 120:
            return f"{_num(v)} s"
        if a < 7200:
            return f"{_num(v / 60)} min"
        return f"{_num(v / 3600)} h"
    if unit == "ratio":
        return f"{_num(v * 100)}%"
    if unit == "bytes":
        for div, name in _BINARY:
            if a >= div:
                return f"{_num(v / div)} {name}"
        return f"{v:.0f} B"
    if unit == "code":
        return f"{v:.0f}" if v == int(v) else _num(v)
    if unit in _SUFFIX:
        return _num(v) + _SUFFIX[unit]
    if not unit or unit == "count":
        return _num(v)
    return f"{_num(v)} {unit}"


def format_change(baseline: float | None, observed: float | None, unit: str | None) -> str:
    """ "20 ms → 800 ms", or just the side that is known; "" when neither is."""
    if baseline is None and observed is None:
        return ""
    if baseline is None:
        return format_value(observed, unit)
    if observed is None:
        return f"{format_value(baseline, unit)} → n/a"
    return f"{format_value(baseline, unit)} → {format_value(observed, unit)}"


def format_ratio(ratio: float | None) -> str:
    """How many times a baseline a value is, the same way everywhere: "0.62×", "1.41×", "63.5×",
    "473×", "1,060×" (three significant digits, no exponent); "" when there is none."""
    if ratio is None or not math.isfinite(ratio) or ratio < 0:
        return ""
    if ratio >= 10:
        return _num(float(f"{ratio:.3g}")) + "×"
    return f"{ratio:.2f}".rstrip("0").rstrip(".") + "×" if ratio >= 1e-3 else "≈0×"


def format_confidence(confidence: float) -> str:
    """A 0..1 confidence as a whole percentage: 0.874 → "87%"."""
    if not math.isfinite(confidence):
        return "n/a"
    return f"{round(min(max(confidence, 0.0), 1.0) * 100):d}%"


def _utc(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


def format_clock(ts: float | None, seconds: bool = False) -> str:
    """A timestamp as UTC wall-clock time: "02:17" (or "02:17:30")."""
    if ts is None or not math.isfinite(ts):
        return "n/a"
    return _utc(ts).strftime("%H:%M:%S" if seconds else "%H:%M")


def format_timestamp(ts: float | None) -> str:
    """A timestamp with its date: "2024-05-14 02:17:30 UTC"."""
    if ts is None or not math.isfinite(ts):
        return "n/a"
    return _utc(ts).strftime("%Y-%m-%d %H:%M:%S UTC")


def format_duration(seconds: float) -> str:
    """A length of time: "45 s", "15 min", "1.5 h", "2 d"."""
    if not math.isfinite(seconds):
        return "n/a"
    s = abs(seconds)
    if s < 120:
        return f"{_num(s)} s"
    if s < 7200:
        return f"{_num(s / 60)} min"
    if s < 2 * 86400:
        return f"{_num(s / 3600)} h"
    return f"{_num(s / 86400)} d"


def format_window(start: float, end: float) -> str:
    """ "2024-05-14 01:45–02:45 UTC (1 h)"; the end date is written when it differs."""
    a, b = _utc(start), _utc(end)
    tail = b.strftime("%H:%M") if a.date() == b.date() else b.strftime("%Y-%m-%d %H:%M")
    return f"{a.strftime('%Y-%m-%d %H:%M')}–{tail} UTC ({format_duration(end - start)})"
