"""A small plot for a change no rule explains: its series over the window, the band of its
baselines behind it, the onset marked, the lowest and highest value and the window's ends.

The onset's label sits in a band of its own above the plot area. A series the frames lack is
an empty frame that says so; points without a reading are gaps, said under the plot.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

import numpy as np

from infersight.frame import FloatArray, MetricFrame
from infersight.report.plotdata import plot_series
from infersight.report.svg import _band, _path, _value_range, _values, value_ticks
from infersight.units import format_clock, format_value

W, H = 360, 80
LEFT, RIGHT, TOP, BOTTOM = 58, 8, 18, 16


def _open(signal: str, instance: str, label: str) -> list[str]:
    return [
        f'<svg class="spark" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" '
        f'role="img" data-signal="{escape(signal)}" data-instance="{escape(instance)}">',
        f"<title>{escape(label)}</title>",
        f'<rect class="area" x="{LEFT}" y="{TOP}" width="{W - LEFT - RIGHT}" '
        f'height="{H - TOP - BOTTOM}"/>',
    ]


def sparkline(
    windows: Mapping[str, MetricFrame],
    signal: str,
    instance: str,
    unit: str,
    onset: float | None,
) -> str:
    """The change's series as one small <svg> (no external references)."""
    where = f"{signal} @ {instance}" if instance else signal
    ps = plot_series(windows, signal, instance)
    if ps is None:
        el = _open(signal, instance, f"{where}: no readings in the window")
        el.append(
            f'<text class="missing" x="{LEFT + 8}" y="{TOP + (H - TOP - BOTTOM) / 2 + 4:.0f}">'
            "no readings of this series in the window</text>"
        )
        return "\n".join([*el, "</svg>"])
    t0, t1 = float(ps.times[0]), float(ps.times[-1])
    ticks = value_ticks(*_value_range(_values(ps)), unit)
    y0, y1 = ticks[0], ticks[-1]
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def sx(v: FloatArray | float) -> FloatArray:
        return LEFT + (np.asarray(v, dtype=np.float64) - t0) / max(t1 - t0, 1e-9) * pw

    def sy(v: FloatArray | float) -> FloatArray:
        return TOP + ph - (np.asarray(v, dtype=np.float64) - y0) / max(y1 - y0, 1e-300) * ph

    xs = sx(ps.times)
    el = _open(signal, instance, where)
    for v, y in ((y1, TOP + 9), (y0, TOP + ph)):
        el.append(
            f'<text class="ytick" x="{LEFT - 4}" y="{y}">{escape(format_value(v, unit))}</text>'
        )
    for t, anchor in ((t0, "start"), (t1, "end")):
        el.append(
            f'<text class="xtick" x="{float(sx(t)):.1f}" y="{H - 3}" text-anchor="{anchor}">'
            f"{format_clock(t)}</text>"
        )
    if ps.band_lo is not None and ps.band_hi is not None:
        el.append(f'<path class="band" d="{_band(xs, sy(ps.band_lo), sy(ps.band_hi))}"/>')
    el.append(f'<path class="observed" d="{_path(xs, sy(ps.observed))}"/>')
    if not np.isfinite(ps.observed).all():
        el.append(
            f'<text class="gap-note" x="{LEFT + pw / 2:.0f}" y="{H - 3}" text-anchor="middle">'
            "gaps: no readings</text>"
        )
    if onset is not None and t0 <= onset <= t1:
        x = float(sx(onset))
        el.append(f'<line class="onset" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP - 3}" y2="{TOP + ph}"/>')
        anchor, dx = ("end", -3) if x > LEFT + pw * 0.6 else ("start", 3)
        el.append(  # above the plot area, in its own band
            f'<text class="onset-label" x="{x + dx:.1f}" y="{TOP - 5}" text-anchor="{anchor}">'
            f"onset {format_clock(onset)}</text>"
        )
    return "\n".join([*el, "</svg>"])
