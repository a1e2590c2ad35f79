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

W, H = 640, 230
LEFT, RIGHT, TOP, BOTTOM = 72, 14, 26, 30
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


def _value_range(ps: PlotSeries, extra: list[float]) -> tuple[float, float]:
    arrays = [ps.observed] + [a for a in (ps.band_lo, ps.band_hi) if a is not None]
    vals = np.concatenate([a[np.isfinite(a)] for a in arrays] + [np.asarray(extra)])
    lo, hi = float(vals.min()), float(vals.max())
    if lo >= 0 and lo < 0.35 * hi:
        lo = 0.0
    return lo, hi


def svg_plot(
    ps: PlotSeries,
    unit: str,
    onset: float | None,
    label: str,
    signal: str = "",
    instance: str = "",
) -> str:
    """One plot as an <svg> element (no external references), sized by its viewBox."""
    t = ps.times
    t0, t1 = float(t[0]), float(t[-1])
    lo, hi = _value_range(ps, [])
    ticks = value_ticks(lo, hi, unit)
    y0, y1 = ticks[0], ticks[-1]
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def sx(v: FloatArray | float) -> FloatArray:
        return LEFT + (np.asarray(v, dtype=np.float64) - t0) / max(t1 - t0, 1e-9) * pw

    def sy(v: FloatArray | float) -> FloatArray:
        return TOP + ph - (np.asarray(v, dtype=np.float64) - y0) / max(y1 - y0, 1e-300) * ph

    xs = sx(t)
    el: list[str] = [
        f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" '
        f'role="img" data-signal="{escape(signal)}" data-instance="{escape(instance)}">',
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
    el.append(f'<text class="axis" x="{W - RIGHT}" y="{H - 10}" text-anchor="end">UTC</text>')
    if ps.band_lo is not None and ps.band_hi is not None:
        el.append(f'<path class="band" d="{_band(xs, sy(ps.band_lo), sy(ps.band_hi))}"/>')
    if ps.band_mid is not None:
        el.append(f'<path class="baseline" d="{_path(xs, sy(ps.band_mid))}"/>')
    el.append(f'<path class="observed" d="{_path(xs, sy(ps.observed))}"/>')
    if onset is not None and t0 <= onset <= t1:
        x = float(sx(onset))
        el.append(f'<line class="onset" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{TOP + ph}"/>')
        anchor = "end" if x > LEFT + pw * 0.8 else "start"
        dx = -4 if anchor == "end" else 4
        el.append(
            f'<text class="onset-label" x="{x + dx:.1f}" y="{TOP + 12}" text-anchor="{anchor}">'
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
    return f'<g class="legend" transform="translate({x},{TOP - 12})">{"".join(items)}</g>'
