"""Inline SVG time-series plots drawn with numpy alone: observed line, baseline band, onset.

The time axis is labelled in UTC HH:MM, the value axis in human units (`format_value`).
Every string that reaches the SVG goes through `html.escape`.
"""

from __future__ import annotations

import math
from html import escape

import numpy as np

from infersight.frame import FloatArray
from infersight.report.plotdata import PlotSeries
from infersight.units import format_clock, format_value

W, H = 640, 244
LEFT, RIGHT, TOP, BOTTOM = 72, 14, 40, 30
#: a plot whose values span this factor or more is drawn on a log scale, so a baseline near
#: zero stays a line with a shape instead of collapsing onto the axis
LOG_SPAN = 50.0
_TIME_STEPS = (60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800)
_BINARY = (2**40, 2**30, 2**20, 2**10)


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round tick values (1, 2, 2.5, 5 × 10^k) covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi <= lo:
        pad = abs(lo) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw * (1 - 1e-9))
    first = math.floor(lo / step + 1e-9) * step
    count = math.ceil((hi - first) / step - 1e-9) + 1
    return [round(first + i * step, 12) for i in range(count)]


def value_ticks(lo: float, hi: float, unit: str) -> list[float]:
    """Ticks in the unit's own steps: bytes tick on whole KiB/MiB/GiB multiples."""
    if unit == "bytes":
        div = next((b for b in _BINARY if max(abs(lo), abs(hi)) >= b), 1)
        return [t * div for t in nice_ticks(lo / div, hi / div)]
    return nice_ticks(lo, hi)


def time_ticks(t0: float, t1: float, most: int = 7) -> list[float]:
    """Tick times on whole minutes/hours (UTC), at most `most` of them."""
    span = max(t1 - t0, 1.0)
    step = next((s for s in _TIME_STEPS if span / s <= most), _TIME_STEPS[-1])
    first = math.ceil(t0 / step) * step
    return [float(t) for t in np.arange(first, t1 + 1e-9, step)]


def _path(xs: FloatArray, ys: FloatArray) -> str:
    """Polyline segments, broken where y is NaN."""
    parts: list[str] = []
    pen_down = False
    for x, y in zip(xs, ys, strict=True):
        if not math.isfinite(y):
            pen_down = False
            continue
        parts.append(f"{'L' if pen_down else 'M'}{x:.1f},{y:.1f}")
        pen_down = True
    return " ".join(parts)


def polyline(xs: FloatArray, ys: FloatArray) -> str:
    """SVG path data through points already in the plot's coordinates, broken where y is NaN
    (for plots other than time series: the reliability diagram of bench/calibration.py)."""
    return _path(xs, ys)


#: up to this many instances are drawn one line each; more as the fleet's band and median
FLEET_LINES = 12


def fleet_paths(xs: FloatArray, ys: list[FloatArray], cls: str) -> list[str]:
    """A fleet finding: every instance's line (already scaled to y), or, past FLEET_LINES
    instances, their min–max band and median."""
    if len(ys) <= FLEET_LINES:
        return [f'<path class="peer {cls}" d="{_path(xs, y)}"/>' for y in ys]
    stack = np.vstack(ys)
    ok = np.isfinite(stack).any(axis=0)
    lo, hi, mid = (np.full(stack.shape[1], np.nan) for _ in range(3))
    lo[ok] = np.nanmin(stack[:, ok], axis=0)
    hi[ok] = np.nanmax(stack[:, ok], axis=0)
    mid[ok] = np.nanmedian(stack[:, ok], axis=0)
    return [
        f'<path class="fleet-band {cls}" d="{_band(xs, lo, hi)}"/>',
        f'<path class="fleet-median {cls}" d="{_path(xs, mid)}"/>',
    ]


def _band(xs: FloatArray, lo: FloatArray, hi: FloatArray) -> str:
    """Closed polygons between lo and hi, one per run of finite points."""
    ok = np.isfinite(lo) & np.isfinite(hi)
    out: list[str] = []
    i, n = 0, len(xs)
    while i < n:
        if not ok[i]:
            i += 1
            continue
        j = i
        while j < n and ok[j]:
            j += 1
        top = [f"{xs[k]:.1f},{hi[k]:.1f}" for k in range(i, j)]
        bottom = [f"{xs[k]:.1f},{lo[k]:.1f}" for k in range(j - 1, i - 1, -1)]
        out.append("M" + " L".join(top + bottom) + " Z")
        i = j
    return " ".join(out)


def _values(ps: PlotSeries) -> FloatArray:
    arrays = [ps.observed, *ps.peers] + [a for a in (ps.band_lo, ps.band_hi) if a is not None]
    return np.concatenate([a[np.isfinite(a)] for a in arrays])


def _value_range(vals: FloatArray) -> tuple[float, float]:
    lo, hi = float(vals.min()), float(vals.max())
    if lo >= 0 and lo < 0.35 * hi:
        lo = 0.0
    return lo, hi


def log_floor(vals: FloatArray) -> float | None:
    """The bottom of a log scale for these values, or None when a linear one reads better
    (negative values, or a span under LOG_SPAN)."""
    if vals.size == 0 or float(vals.min()) < 0:
        return None
    positive = vals[vals > 0]
    hi = float(vals.max())
    if positive.size == 0 or hi / float(positive.min()) < LOG_SPAN:
        return None
    return max(float(positive.min()), hi / 1e5)


def log_ticks(floor: float, hi: float) -> list[float]:
    """Powers of ten covering [floor, hi], at most six of them."""
    a, b = math.floor(math.log10(floor)), math.ceil(math.log10(hi))
    step = max(1, math.ceil((b - a) / 5))
    return [10.0**k for k in range(a, b + step, step)]


def svg_plot(
    ps: PlotSeries,
    unit: str,
    onset: float | None,
    label: str,
    signal: str = "",
    instance: str = "",
) -> str:
    """One plot as an <svg> element (no external references), sized by its viewBox: the
    observed line (and its peers' when the finding is fleet-wide), the baseline band, the
    onset with its label above the plot area."""
    t = ps.times
    t0, t1 = float(t[0]), float(t[-1])
    vals = _values(ps)
    floor = log_floor(vals)
    if floor is not None:
        ticks = log_ticks(floor, float(vals.max()))

        def tr(v: FloatArray | float) -> FloatArray:
            return np.log10(np.maximum(np.asarray(v, dtype=np.float64), floor))
    else:
        ticks = value_ticks(*_value_range(vals), unit)

        def tr(v: FloatArray | float) -> FloatArray:
            return np.asarray(v, dtype=np.float64)

    y0, y1 = float(tr(ticks[0])), float(tr(ticks[-1]))
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def sx(v: FloatArray | float) -> FloatArray:
        return LEFT + (np.asarray(v, dtype=np.float64) - t0) / max(t1 - t0, 1e-9) * pw

    def sy(v: FloatArray | float) -> FloatArray:
        return TOP + ph - (tr(v) - y0) / max(y1 - y0, 1e-300) * ph

    xs = sx(t)
    scale = "log" if floor is not None else "linear"
    el: list[str] = [
        f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" '
        f'role="img" data-signal="{escape(signal)}" data-instance="{escape(instance)}" '
        f'data-scale="{scale}">',
        f"<title>{escape(label)}</title>",
        f'<rect class="area" x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}"/>',
    ]
    for v in ticks:
        y = float(sy(v))
        el.append(f'<line class="grid" x1="{LEFT}" x2="{W - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        text = escape(format_value(v, unit))
        el.append(f'<text class="ytick" x="{LEFT - 6}" y="{y + 4:.1f}">{text}</text>')
    for tt in time_ticks(t0, t1):
        x = float(sx(tt))
        el.append(
            f'<line class="tick" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP + ph}" y2="{TOP + ph + 4}"/>'
        )
        el.append(f'<text class="xtick" x="{x:.1f}" y="{H - 10}">{format_clock(tt)}</text>')
    axis = "UTC · log scale" if floor is not None else "UTC"
    el.append(f'<text class="axis" x="{W - RIGHT}" y="{H - 10}" text-anchor="end">{axis}</text>')
    if ps.band_lo is not None and ps.band_hi is not None:
        el.append(f'<path class="band" d="{_band(xs, sy(ps.band_lo), sy(ps.band_hi))}"/>')
    if ps.band_mid is not None:
        el.append(f'<path class="baseline" d="{_path(xs, sy(ps.band_mid))}"/>')
    if ps.peers:
        el += fleet_paths(xs, [sy(p) for p in ps.peers], "peers")
    el.append(f'<path class="observed" d="{_path(xs, sy(ps.observed))}"/>')
    if onset is not None and t0 <= onset <= t1:
        x = float(sx(onset))
        el.append(f'<line class="onset" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP - 4}" y2="{TOP + ph}"/>')
        anchor = "end" if x > LEFT + pw * 0.8 else "start"
        dx = -4 if anchor == "end" else 4
        el.append(  # above the plot area: it never covers the curve
            f'<text class="onset-label" x="{x + dx:.1f}" y="{TOP - 6}" text-anchor="{anchor}">'
            f"onset {format_clock(onset)}</text>"
        )
    el.append(_legend(ps))
    el.append("</svg>")
    return "\n".join(el)


def _legend(ps: PlotSeries) -> str:
    x = LEFT + 2
    items = ['<line class="observed" x1="0" x2="18" y1="0" y2="0"/>'
             '<text x="22" y="4">observed</text>']  # fmt: skip
    if ps.baselines:
        names = ", ".join(b.removeprefix("baseline-") for b in ps.baselines)
        items.append(
            '<rect class="band" x="90" y="-5" width="18" height="10"/>'
            f'<text x="112" y="4">baseline min–max, median ({escape(names)} ago)</text>'
        )
    if ps.peers:
        items.append(
            f'<text x="{420 if ps.baselines else 90}" y="4">+ {len(ps.peers)} more instances</text>'
        )
    return f'<g class="legend" transform="translate({x},{TOP - 26})">{"".join(items)}</g>'
