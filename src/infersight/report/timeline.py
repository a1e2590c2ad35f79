"""The first thing the HTML report shows: the users' symptom and each root cause on one time
axis, so a reader sees which moved first.

One SVG of stacked panels sharing the time axis: the symptom (a user-facing signal on every
instance: each instance's line, or the fleet's min–max band and median when there are many),
then one panel per root cause (its first supporting reading). Each panel has its own value
scale; onsets are vertical lines across all panels, labelled above them in rows that do not
overlap.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from html import escape

import numpy as np

from infersight.diagnose.result import Diagnosis
from infersight.frame import FloatArray, MetricFrame
from infersight.report.consequences import earliest_onset
from infersight.report.svg import _path, fleet_paths, time_ticks, value_ticks
from infersight.report.symptom import felt, level_text
from infersight.report.view import signal_unit
from infersight.units import format_clock, format_value

W = 1000
LEFT, RIGHT = 70, 16
PANEL_H, GAP = 92, 14
LABEL_ROW = 15
AXIS_H = 26
#: labels of onsets closer than this (px) go on separate rows
LABEL_SPACING = 118


@dataclass(frozen=True)
class Panel:
    title: str
    signal: str
    unit: str
    rows: tuple[FloatArray, ...]  # one per instance
    highlight: int | None  # the row drawn in the symptom/cause colour; None: the fleet
    kind: str  # "symptom" or "cause"
    #: the level before the change (a symptom's baseline), drawn as a dashed line
    before: float | None = None


@dataclass(frozen=True)
class Marker:
    at: float
    label: str
    kind: str


def _rows(frame: MetricFrame, signal: str, instances: tuple[str, ...] = ()) -> list[FloatArray]:
    s = frame.get(signal)
    if s is None:
        return []
    names = instances or s.instances
    rows = [s.row(i) for i in names]
    return [r for r in rows if r is not None and np.isfinite(r).any()]


def timeline_panels(
    d: Diagnosis, windows: Mapping[str, MetricFrame]
) -> tuple[list[Panel], list[Marker]]:
    """The symptom panel (`symptom.felt`: the user-facing signal that moved most, a gateway's
    first, on every instance that carries it) and one per root cause."""
    frame = windows.get("incident")
    if frame is None or frame.n < 2:
        return [], []
    panels: list[Panel] = []
    markers: list[Marker] = []
    f = felt(d)
    rows = _rows(frame, f.signal) if f is not None else []
    if f is not None and rows:
        if f.moved:
            on = f.instance or ", ".join(f.where)
            figures = level_text(f)
            title = f"symptom: {f.signal} on {on}" + (f": {figures}" if figures else "")
        else:
            title = f"users' view: {f.signal}, no change found"
        panels.append(Panel(title, f.signal, f.unit, tuple(rows), None, "symptom",
                            f.baseline if f.moved else None))  # fmt: skip
        if f.onset is not None:
            markers.append(Marker(f.onset, "symptom", "symptom"))
    for r in sorted(d.root_causes, key=lambda r: r.rank):
        h = d.hypothesis(r.hypothesis)
        if h is None:
            continue
        # the reading that dates the root: its earliest supporting evidence
        dated = [e for e in h.evidence if e.supports]
        if not dated:
            continue
        ev = min(dated, key=lambda e: e.onset if e.onset is not None else float("inf"))
        rows = _rows(frame, ev.signal, (ev.instance,) if ev.instance else ())
        if not rows:
            continue
        where = f" @ {ev.instance}" if ev.instance else ""
        title = f"#{r.rank} {h.title}: {ev.signal}{where}"
        panels.append(Panel(title, ev.signal, ev.unit or signal_unit(ev.signal),
                            tuple(rows), 0, "cause"))  # fmt: skip
        start = earliest_onset(h)
        if start is not None:
            markers.append(Marker(start, f"#{r.rank}", "cause"))
    return panels, markers


def _label_rows(xs: list[float]) -> list[int]:
    """A row per label so that labels closer than LABEL_SPACING never share one."""
    last: list[float] = []
    out: list[int] = []
    for x in xs:
        row = next((i for i, lx in enumerate(last) if x - lx >= LABEL_SPACING), len(last))
        if row == len(last):
            last.append(x)
        else:
            last[row] = x
        out.append(row)
    return out


def svg_timeline(panels: list[Panel], markers: list[Marker], times: FloatArray) -> str:
    """Stacked panels on one time axis, as one <svg> element."""
    t0, t1 = float(times[0]), float(times[-1])
    pw = W - LEFT - RIGHT
    order = sorted(markers, key=lambda m: m.at)
    xs_m = [LEFT + (m.at - t0) / max(t1 - t0, 1e-9) * pw for m in order]
    label_rows = _label_rows(xs_m)
    top = LABEL_ROW * (max(label_rows, default=-1) + 1) + 8
    height = top + len(panels) * (PANEL_H + GAP) + AXIS_H
    xs = LEFT + (times - t0) / max(t1 - t0, 1e-9) * pw
    el = [
        f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {height}" '
        'role="img" aria-label="symptom and root causes on one time axis">',
        "<title>The symptom and the root causes on one time axis (UTC)</title>",
    ]
    for k, p in enumerate(panels):
        y_top = top + k * (PANEL_H + GAP)
        el += _panel(p, xs, y_top, pw)
    bottom = top + len(panels) * (PANEL_H + GAP) - GAP
    for tt in time_ticks(t0, t1, most=10):
        x = LEFT + (tt - t0) / max(t1 - t0, 1e-9) * pw
        el.append(f'<line class="tick" x1="{x:.1f}" x2="{x:.1f}" y1="{bottom}" y2="{bottom + 4}"/>')
        el.append(f'<text class="xtick" x="{x:.1f}" y="{bottom + 16}">{format_clock(tt)}</text>')
    el.append(f'<text class="axis" x="{W - RIGHT}" y="{bottom + 16}" text-anchor="end">UTC</text>')
    for m, x, row in zip(order, xs_m, label_rows, strict=True):
        if not t0 <= m.at <= t1:
            continue
        y = LABEL_ROW * (row + 1)
        el.append(
            f'<line class="onset {m.kind}" x1="{x:.1f}" x2="{x:.1f}" y1="{y + 3}" y2="{bottom}"/>'
        )
        el.append(
            f'<text class="onset-label {m.kind}" x="{x + 3:.1f}" y="{y}">'
            f"{escape(m.label)} {format_clock(m.at)}</text>"
        )
    el.append("</svg>")
    return "\n".join(el)


def value_range(p: Panel) -> tuple[float, float]:
    """The panel's value range. A symptom's starts at zero and holds its level before the
    change: a change then takes the share of the height it is of the level (a doubled P99 fills
    half of it, 2% of noise on a flat line stays 2%), where a range fitted to the data would
    stretch a flat line's noise over the whole panel and draw an incident that is not there.
    A cause's reading is fitted to its data (from zero when that is near): it is shown for when
    it moved, and its size is in the figures beside it."""
    finite = np.concatenate([r[np.isfinite(r)] for r in p.rows])
    lo, hi = float(finite.min()), float(finite.max())
    if p.kind == "symptom":
        level = p.before if p.before is not None and math.isfinite(p.before) else hi
        return min(lo, 0.0), max(hi, level, 0.0)
    if lo >= 0 and lo < 0.35 * hi:
        lo = 0.0
    return lo, hi


def _panel(p: Panel, xs: FloatArray, y_top: float, pw: float) -> list[str]:
    lo, hi = value_range(p)
    ticks = value_ticks(lo, hi, p.unit)
    y0, y1 = ticks[0], ticks[-1]

    def sy(v: FloatArray) -> FloatArray:
        return y_top + PANEL_H - (v - y0) / max(y1 - y0, 1e-300) * PANEL_H

    out = [
        f'<g class="panel {p.kind}" data-signal="{escape(p.signal)}">'
        f"<title>{escape(p.signal)}</title>",
        f'<rect class="area" x="{LEFT}" y="{y_top}" width="{pw}" height="{PANEL_H}"/>',
        f'<text class="panel-title" x="{LEFT + 6}" y="{y_top + 14}">{escape(p.title)}</text>',
    ]
    for v, dy in ((ticks[0], -3), (ticks[-1], 12)):  # inside the panel's own height
        y = float(sy(np.asarray(v)))
        out.append(
            f'<text class="ytick" x="{LEFT - 8}" y="{y + dy:.1f}">'
            f"{escape(format_value(v, p.unit))}</text>"
        )
    if p.before is not None and math.isfinite(p.before):
        y = float(sy(np.asarray(p.before)))
        out.append(
            f'<line class="before" x1="{LEFT}" x2="{LEFT + pw}" y1="{y:.1f}" y2="{y:.1f}">'
            f"<title>before: {escape(format_value(p.before, p.unit))}</title></line>"
        )
    if p.highlight is None:
        out += fleet_paths(xs, [sy(r) for r in p.rows], "symptom")
    else:
        out.append(f'<path class="observed cause" d="{_path(xs, sy(p.rows[p.highlight]))}"/>')
    return [*out, "</g>"]


def render_timeline(
    d: Diagnosis, windows: Mapping[str, MetricFrame] | None, query: str = ""
) -> str:
    """The timeline figure, or "" when there is nothing to plot; `query`: the HTML of the
    symptom's query and links, put in the caption."""
    if not windows or "incident" not in windows:
        return ""
    panels, markers = timeline_panels(d, windows)
    if not panels:
        return ""
    svg = svg_timeline(panels, markers, windows["incident"].times)
    caption = "What the users felt and what broke, on one time axis" + (
        f" · {len(panels[0].rows)} instances" if panels[0].kind == "symptom" else ""
    )
    tail = f" · <span class='query'>{query}</span>" if query and panels[0].kind == "symptom" else ""
    return (
        f"<figure class='timeline'><figcaption>{escape(caption)}{tail}</figcaption>{svg}</figure>"
    )
