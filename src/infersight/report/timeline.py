"""The first thing the HTML report shows: the users' symptom and each root cause on one time
axis, so a reader sees which moved first.

One SVG of stacked panels sharing the time axis: the symptom (a user-facing signal on every
instance: each instance's line, or the fleet's min–max band and median when there are many),
then one panel per root cause (its first supporting reading). Each panel has its own value
scale and its title in a band of its own above its plot area, so no title covers a line. The
same hours yesterday (the "baseline-1d" window, aligned point by point) are drawn faint behind
today's lines: one instance's as a line, several as their min–max band. Onsets and the alert's
start are vertical lines across all panels, labelled above them in rows that do not overlap; a
legend on top says what each mark is. Missing readings are gaps, and a panel says so in its
title band; a window without yesterday's hours says so in the legend.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from html import escape

import numpy as np

from infersight.diagnose.result import Diagnosis
from infersight.frame import FloatArray, MetricFrame
from infersight.report.consequences import earliest_onset
from infersight.report.svg import _path, fleet_paths, time_ticks, value_ticks
from infersight.report.symptom import felt, level_text
from infersight.report.timeline_marks import (
    alert_at,
    legend_items,
    svg_legend,
    yesterday_paths,
    yesterday_rows,
)
from infersight.report.view import signal_unit
from infersight.units import format_clock, format_value

W = 1000
LEFT, RIGHT = 70, 16
#: a panel's plot area, and the space under it before the next title band
PANEL_H, GAP = 82, 6
#: each panel's title band, above its plot area
TITLE_H = 18
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
    #: the instances plotted; empty: every instance of the signal with readings
    instances: tuple[str, ...] = ()
    #: the same instances the same hours yesterday (those with readings): empty when none had
    #: any, None when the data holds no yesterday at all
    yesterday: tuple[FloatArray, ...] | None = None
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
                            before=f.baseline if f.moved else None))  # fmt: skip
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
        instances = (ev.instance,) if ev.instance else ()
        rows = _rows(frame, ev.signal, instances)  # none: the panel says so
        where = f" @ {ev.instance}" if ev.instance else ""
        title = f"#{r.rank} {h.title}: {ev.signal}{where}"
        panels.append(Panel(title, ev.signal, ev.unit or signal_unit(ev.signal),
                            tuple(rows), 0, "cause", instances))  # fmt: skip
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


def svg_timeline(
    panels: list[Panel], markers: list[Marker], times: FloatArray, notes: tuple[str, ...] = ()
) -> str:
    """Stacked panels on one time axis, as one <svg> element: the legend on top, then the
    onset labels, then each panel's title band and plot area. `notes`: what the legend says
    could not be drawn (an alert time that cannot be read)."""
    t0, t1 = float(times[0]), float(times[-1])
    pw = W - LEFT - RIGHT
    order = sorted((m for m in markers if t0 <= m.at <= t1), key=lambda m: m.at)
    xs_m = [LEFT + (m.at - t0) / max(t1 - t0, 1e-9) * pw for m in order]
    label_rows = _label_rows(xs_m)
    alert = next((m.at for m in markers if m.kind == "alert"), None)
    missing = "" if any(p.yesterday is not None for p in panels) else "yesterday: not in the data"
    kinds = {k for p in panels for k in _kinds(p)}
    items = legend_items(kinds, missing, alert, "; ".join(notes), t0, t1)
    legend, legend_h = svg_legend(items, LEFT, W - RIGHT)
    top = legend_h + LABEL_ROW * (max(label_rows, default=-1) + 1) + 8
    slot = TITLE_H + PANEL_H + GAP
    height = top + len(panels) * slot + AXIS_H
    xs = LEFT + (times - t0) / max(t1 - t0, 1e-9) * pw
    el = [
        f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {height}" '
        'role="img" aria-label="symptom and root causes on one time axis">',
        "<title>The symptom and the root causes on one time axis (UTC)</title>",
        legend,
    ]
    for k, p in enumerate(panels):
        el += _panel(p, xs, top + k * slot, pw)
    bottom = top + len(panels) * slot - GAP
    for tt in time_ticks(t0, t1, most=10):
        x = LEFT + (tt - t0) / max(t1 - t0, 1e-9) * pw
        el.append(f'<line class="tick" x1="{x:.1f}" x2="{x:.1f}" y1="{bottom}" y2="{bottom + 4}"/>')
        el.append(f'<text class="xtick" x="{x:.1f}" y="{bottom + 16}">{format_clock(tt)}</text>')
    el.append(f'<text class="axis" x="{W - RIGHT}" y="{bottom + 16}" text-anchor="end">UTC</text>')
    for m, x, row in zip(order, xs_m, label_rows, strict=True):
        y = legend_h + LABEL_ROW * (row + 1)
        # down from its label to the first title band, then across each plot area: never
        # through a panel's title
        runs = [(y + 3, top)] + [
            (top + k * slot + TITLE_H, top + k * slot + TITLE_H + PANEL_H)
            for k in range(len(panels))
        ]
        d = " ".join(f"M{x:.1f},{a} V{b}" for a, b in runs)
        el.append(f'<path class="onset {m.kind}" d="{d}"/>')
        el.append(
            f'<text class="onset-label {m.kind}" x="{x + 3:.1f}" y="{y}">'
            f"{escape(m.label)} {format_clock(m.at)}</text>"
        )
    el.append("</svg>")
    return "\n".join(el)


def _kinds(p: Panel) -> list[str]:
    """The legend's kinds of line this panel draws."""
    out = [p.kind] if p.rows else []
    if p.yesterday:
        out.append("yesterday" if len(p.yesterday) == 1 else "yesterday-band")
    return out


def _notes(p: Panel) -> str:
    """What is missing from a panel, said in its title band."""
    notes = [] if p.rows else ["no readings in the window"]
    if any(not np.isfinite(r).all() for r in p.rows):
        notes.append("gaps: no readings")
    if p.yesterday is not None and not p.yesterday:
        notes.append("yesterday: no readings")
    return " · ".join(notes)


def value_range(p: Panel) -> tuple[float, float]:
    """The panel's value range (over today's rows and yesterday's). A symptom's starts at
    zero and holds its level before the change: a change then takes the share of the height it
    is of the level (a doubled P99 fills half of it, 2% of noise on a flat line stays 2%), where
    a range fitted to the data would stretch a flat line's noise over the whole panel and draw
    an incident that is not there. A cause's reading is fitted to its data (from zero when that
    is near): it is shown for when it moved, and its size is in the figures beside it."""
    rows = (*p.rows, *(p.yesterday or ()))
    finite = np.concatenate([r[np.isfinite(r)] for r in rows])
    lo, hi = float(finite.min()), float(finite.max())
    if p.kind == "symptom":
        level = p.before if p.before is not None and math.isfinite(p.before) else hi
        return min(lo, 0.0), max(hi, level, 0.0)
    if lo >= 0 and lo < 0.35 * hi:
        lo = 0.0
    return lo, hi


def _panel(p: Panel, xs: FloatArray, y_top: float, pw: float) -> list[str]:
    """One panel: its title (and what it lacks) in a band of its own, the plot area below."""
    area = y_top + TITLE_H
    out = [
        f'<g class="panel {p.kind}" data-signal="{escape(p.signal)}">'
        f"<title>{escape(p.signal)}</title>",
        f'<text class="panel-title" x="{LEFT}" y="{y_top + TITLE_H - 5}">{escape(p.title)}</text>',
        f'<rect class="area" x="{LEFT}" y="{area}" width="{pw}" height="{PANEL_H}"/>',
    ]
    note = _notes(p)
    if note:
        out.append(
            f'<text class="panel-note" x="{W - RIGHT}" y="{y_top + TITLE_H - 5}" '
            f'text-anchor="end">{escape(note)}</text>'
        )
    if not p.rows and not p.yesterday:  # nothing to draw: an empty area under the note
        return [*out, "</g>"]
    lo, hi = value_range(p)
    ticks = value_ticks(lo, hi, p.unit)
    y0, y1 = ticks[0], ticks[-1]

    def sy(v: FloatArray) -> FloatArray:
        return area + PANEL_H - (v - y0) / max(y1 - y0, 1e-300) * PANEL_H

    for v, dy in ((ticks[0], -3), (ticks[-1], 12)):  # inside the panel's own height
        y = float(sy(np.asarray(v)))
        out.append(
            f'<text class="ytick" x="{LEFT - 8}" y="{y + dy:.1f}">'
            f"{escape(format_value(v, p.unit))}</text>"
        )
    out += yesterday_paths(xs, [sy(r) for r in p.yesterday or ()])
    if p.before is not None and math.isfinite(p.before):
        y = float(sy(np.asarray(p.before)))
        out.append(
            f'<line class="before" x1="{LEFT}" x2="{LEFT + pw}" y1="{y:.1f}" y2="{y:.1f}">'
            f"<title>before: {escape(format_value(p.before, p.unit))}</title></line>"
        )
    if p.highlight is None:
        out += fleet_paths(xs, [sy(r) for r in p.rows], "symptom")
    elif p.rows:
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
    panels = [replace(p, yesterday=yesterday_rows(windows, p.signal, p.instances)) for p in panels]
    alert, note = alert_at(d)
    if alert is not None:
        markers.append(Marker(alert, "alert", "alert"))
    svg = svg_timeline(panels, markers, windows["incident"].times, (note,) if note else ())
    caption = "What the users felt and what broke, on one time axis" + (
        f" · {len(panels[0].rows)} instances" if panels[0].kind == "symptom" else ""
    )
    tail = f" · <span class='query'>{query}</span>" if query and panels[0].kind == "symptom" else ""
    return (
        f"<figure class='timeline'><figcaption>{escape(caption)}{tail}</figcaption>{svg}</figure>"
    )
