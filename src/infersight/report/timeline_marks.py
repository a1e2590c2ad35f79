"""What the timeline draws besides today's lines, and its legend: the same hours yesterday, the
alert's start, and one line of marks that says what each is.

Yesterday is the "baseline-1d" window the diagnosis read, aligned point by point with the
incident window; one instance's yesterday is a faint line, several instances' their min–max
band. A window that lacks yesterday, or an alert time that cannot be read, is said in the
legend, never drawn as something it is not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from html import escape

import numpy as np

from infersight.diagnose.result import Diagnosis
from infersight.frame import FloatArray, MetricFrame
from infersight.report.svg import _band, _path
from infersight.units import format_clock
from infersight.windows import INCIDENT, baseline_name

#: the window drawn as "yesterday": the same hours a day before
YESTERDAY = baseline_name(86400.0)
#: the key of `Diagnosis.source` that holds the alert's startsAt (ISO 8601, UTC), where an
#: alert started the diagnosis (`serve`, `diagnose --alert`)
ALERT_KEY = "alert_starts_at"
#: the legend's rows and a width per character of its 12 px text, to wrap it inside the figure
LEGEND_ROW, CHAR_W = 18, 6.6
SWATCH_W, ITEM_GAP = 22, 18


@dataclass(frozen=True)
class LegendItem:
    #: symptom | cause | yesterday (a line) | yesterday-band | yesterday-both | onset | alert |
    #: note (text alone)
    kind: str
    text: str


def yesterday_rows(
    windows: Mapping[str, MetricFrame], signal: str, instances: tuple[str, ...]
) -> tuple[FloatArray, ...] | None:
    """The signal on these instances (every instance when empty) the same hours yesterday,
    those with readings; None when the data holds no yesterday on the incident's grid."""
    today, frame = windows.get(INCIDENT), windows.get(YESTERDAY)
    if today is None or frame is None or frame.n != today.n:
        return None
    s = frame.get(signal)
    if s is None:
        return ()
    rows = [s.row(i) for i in (instances or s.instances)]
    return tuple(r for r in rows if r is not None and np.isfinite(r).any())


def yesterday_paths(xs: FloatArray, rows: Sequence[FloatArray]) -> list[str]:
    """Yesterday's rows already scaled to y: one as a line, several as their min–max band;
    points without a reading stay gaps."""
    if not rows:
        return []
    if len(rows) == 1:
        return [f'<path class="yesterday" d="{_path(xs, rows[0])}"/>']
    stack = np.vstack(rows)
    ok = np.isfinite(stack).any(axis=0)
    lo, hi = np.full(stack.shape[1], np.nan), np.full(stack.shape[1], np.nan)
    lo[ok] = np.nanmin(stack[:, ok], axis=0)
    hi[ok] = np.nanmax(stack[:, ok], axis=0)
    return [f'<path class="yesterday-band" d="{_band(xs, lo, hi)}"/>']


def alert_at(d: Diagnosis) -> tuple[float | None, str]:
    """When the alert that started this diagnosis began, or why it cannot be drawn: (None, "")
    when no alert did."""
    raw = d.source.get(ALERT_KEY)
    if raw is None:
        return None, ""
    try:
        at = datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError, OSError):
        return None, f"alert start not readable: {raw[:40]}"
    return (at, "") if math.isfinite(at) else (None, f"alert start not readable: {raw[:40]}")


def legend_items(
    kinds: set[str], yesterday: str, alert: float | None, alert_note: str, t0: float, t1: float
) -> list[LegendItem]:
    """The marks drawn, in reading order. `kinds`: the line kinds the panels drew (symptom,
    cause, yesterday, yesterday-band); `yesterday`: why yesterday is missing ("" when drawn)."""
    items: list[LegendItem] = []
    if "symptom" in kinds:
        items.append(LegendItem("symptom", "today: symptom, each instance"))
    if "cause" in kinds:
        items.append(LegendItem("cause", "today: root cause reading"))
    line, band = "yesterday" in kinds, "yesterday-band" in kinds
    if yesterday:
        items.append(LegendItem("note", yesterday))
    elif line and band:
        items.append(LegendItem("yesterday-both", "yesterday, same hours (line or band)"))
    elif band:
        items.append(LegendItem("yesterday-band", "yesterday, same hours (range of instances)"))
    elif line:
        items.append(LegendItem("yesterday", "yesterday, same hours"))
    items.append(LegendItem("onset", "onset"))
    if alert is not None and t0 <= alert <= t1:
        items.append(LegendItem("alert", "alert fired"))
    elif alert is not None:
        items.append(LegendItem("note", f"alert fired {format_clock(alert)}, outside these hours"))
    elif alert_note:
        items.append(LegendItem("note", alert_note))
    return items


def _swatch(kind: str, x: float, y: float) -> str:
    mid = y - 4
    if kind in ("symptom", "cause", "yesterday"):
        return f'<line class="swatch {kind}" x1="{x:.1f}" x2="{x + 18:.1f}" y1="{mid}" y2="{mid}"/>'
    if kind == "yesterday-band":
        return f'<rect class="swatch {kind}" x="{x:.1f}" y="{mid - 5}" width="18" height="10"/>'
    if kind == "yesterday-both":
        return _swatch("yesterday-band", x, y) + _swatch("yesterday", x, y)
    if kind in ("onset", "alert"):
        return (
            f'<line class="swatch {kind}" x1="{x + 9:.1f}" x2="{x + 9:.1f}" '
            f'y1="{mid - 7}" y2="{mid + 7}"/>'
        )
    return ""


def svg_legend(items: list[LegendItem], left: float, right: float) -> tuple[str, int]:
    """The legend as a <g>, wrapped into rows between `left` and `right`, and its height."""
    x, row = left, 0
    parts: list[str] = []
    for item in items:
        width = (SWATCH_W if item.kind != "note" else 0) + len(item.text) * CHAR_W
        if x > left and x + width > right:
            x, row = left, row + 1
        y = LEGEND_ROW * (row + 1) - 4
        parts.append(_swatch(item.kind, x, y))
        tx = x + (SWATCH_W if item.kind != "note" else 0)
        cls = "legend-note" if item.kind == "note" else "legend-text"
        parts.append(f'<text class="{cls}" x="{tx:.1f}" y="{y}">{escape(item.text)}</text>')
        x += width + ITEM_GAP
    height = LEGEND_ROW * (row + 1) + 4
    return f'<g class="legend" aria-label="legend">{"".join(parts)}</g>', height
