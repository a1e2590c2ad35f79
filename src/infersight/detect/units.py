"""Human figures for findings: "350 ms", "92%", "14.2 GiB" (the unit is the signal's)."""

from __future__ import annotations

import math


def fmt_value(v: float | None, unit: str | None) -> str:
    if v is None or not math.isfinite(v):
        return "n/a"
    if unit == "s":
        a = abs(v)
        if a >= 1:
            return f"{v:.3g} s"
        if a >= 1e-3 or a == 0:
            return f"{v * 1e3:.3g} ms"
        return f"{v * 1e6:.3g} µs"
    if unit == "ratio":
        return f"{v * 100:.3g}%"
    if unit == "bytes":
        for div, name in ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
            if abs(v) >= div:
                return f"{v / div:.3g} {name}"
        return f"{v:.0f} B"
    suffix = {
        "celsius": " °C",
        "MHz": " MHz",
        "W": " W",
        "per_s": "/s",
        "cores": " cores",
    }.get(unit or "", "")
    return f"{v:.3g}{suffix}"


def fmt_duration(s: float | None) -> str:
    if s is None or not math.isfinite(s):
        return "n/a"
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    if s < 2 * 86400:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} d"
