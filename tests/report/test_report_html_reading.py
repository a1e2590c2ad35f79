"""The HTML report read at 3 a.m. (issue 39): panel titles in a band of their own, yesterday and
a legend on the timeline, a small plot for each unexplained change, and folded parts that show
they open. Each test reads the page as a tree (`htmltree`, the standard library's parser), so
the page is also checked to be well formed; missing data stays a gap that is said."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
from htmltree import Node, parse
from report_samples import HOSTILE, ONSET, START, STEP, N, incident, windows

from infersight.diagnose.result import Diagnosis, UnexplainedChange
from infersight.frame import MetricFrame
from infersight.report import render_html
from infersight.report.timeline_marks import ALERT_KEY, YESTERDAY
from infersight.timeparse import iso

SYMPTOM = "service.e2e_latency_p99"


def _timeline(page: str) -> Node:
    return parse(page).one("svg", "timeline")


def _ys(path: Node) -> list[float]:
    return [float(y) for y in re.findall(r"[ML][\d.]+,([\d.]+)", path.attrs["d"])]


def _runs(path: Node) -> int:
    """How many separate stretches a path draws (each starts with M)."""
    return path.attrs["d"].count("M")


def test_panel_titles_sit_in_a_band_above_their_plot_area() -> None:
    d = incident()
    panels = _timeline(render_html(d, windows(d))).all("g", "panel")
    assert len(panels) == 3
    bottom = 0.0
    for g in panels:
        title, area = g.one("text", "panel-title"), g.one("rect", "area")
        top = area.num("y")
        # the title's baseline is above the plot area's top (room for descenders), and below
        # the panel above it
        assert bottom < title.num("y") <= top - 3, (g.attrs["data-signal"], title.attrs)
        for path in g.all("path"):  # every line stays inside the plot area
            assert all(top - 0.5 <= y <= top + area.num("height") + 0.5 for y in _ys(path))
        bottom = top + area.num("height")


def test_onset_lines_cross_the_plot_areas_and_not_the_titles() -> None:
    d = incident()
    svg = _timeline(render_html(d, windows(d)))
    bands = [  # from the title's cap height (a 12 px font) to the plot area's top
        (g.one("text", "panel-title").num("y") - 12, g.one("rect", "area").num("y"))
        for g in svg.all("g", "panel")
    ]
    lines = [p for p in svg.all("path") if "onset" in p.classes]
    assert lines
    for line in lines:
        runs = re.findall(r"M[\d.]+,([\d.]+) V([\d.]+)", line.attrs["d"])
        for a, b in ((float(a), float(b)) for a, b in runs):
            assert all(b <= lo or a >= hi for lo, hi in bands), (a, b)


def test_the_timeline_draws_yesterday_and_a_legend() -> None:
    d = incident()
    w = windows(d)
    svg = _timeline(render_html(d, w))
    legend = [t.text() for t in svg.one("g", "legend").all("text")]
    assert legend == [
        "today: symptom, each instance",
        "today: root cause reading",
        "yesterday, same hours",
        "onset",
    ]
    assert svg.one("g", "legend").all("line", "swatch")  # each mark drawn next to its words
    for g in svg.all("g", "panel"):
        (yday,) = g.all("path", "yesterday")
        today = next(p for p in g.all("path") if {"observed", "peer"} & set(g.classes + p.classes))
        assert yday.attrs["d"] != today.attrs["d"]
        assert len(_ys(yday)) == N  # every point of the same hours yesterday
    # yesterday is the frame a day back, drawn on today's scale: the cache's hit ratio held
    # ~95% yesterday while today it fell to 60%, so yesterday's line ends above today's
    cache = next(g for g in svg.all("g", "panel") if g.attrs["data-signal"].endswith("hit_ratio"))
    assert _ys(cache.one("path", "yesterday"))[-1] < _ys(cache.one("path", "observed"))[-1] - 20


def test_several_instances_yesterday_are_a_band_named_in_the_legend() -> None:
    d = incident()
    w = windows(d)
    names = ("infer-0", "infer-1", "infer-2")
    for k, f in w.items():
        row = f.get(SYMPTOM).values[0]  # type: ignore[union-attr]
        w[k] = f.with_series(SYMPTOM, names, np.vstack([row * (1 + i / 10) for i in range(3)]))
    svg = _timeline(render_html(d, w))
    symptom = svg.all("g", "panel")[0]
    assert symptom.attrs["data-signal"] == SYMPTOM and symptom.all("path", "yesterday-band")
    # the causes' single instances are lines: the legend shows both marks
    legend = svg.one("g", "legend")
    assert "yesterday, same hours (line or band)" in [t.text() for t in legend.all("text")]
    assert legend.all("rect", "yesterday-band") and legend.all("line", "yesterday")


def test_the_alert_time_is_marked_and_named() -> None:
    d = incident()
    alerted = replace(d, source={**d.source, ALERT_KEY: iso(ONSET + 150)})
    svg = _timeline(render_html(alerted, windows(d)))
    assert svg.one("path", "alert") and svg.one("text", "alert").text() == "alert 02:19"
    assert "alert fired" in [t.text() for t in svg.one("g", "legend").all("text")]
    # no alert: no mark and no legend entry
    plain = _timeline(render_html(d, windows(d)))
    assert not plain.all("path", "alert") and "alert" not in plain.one("g", "legend").text()
    # an alert outside the plotted hours, or a time that cannot be read, is said, not drawn
    for raw, said in ((iso(START - 3600), "alert fired 00:45, outside these hours"),
                      ("not a time", "alert start not readable: not a time"),
                      (HOSTILE, f"alert start not readable: {HOSTILE}")):  # fmt: skip
        page = render_html(replace(d, source={ALERT_KEY: raw}), windows(d))
        assert "<script" not in page
        svg = _timeline(page)
        assert not svg.all("path", "alert")
        assert said in [t.text() for t in svg.one("g", "legend").all("text", "legend-note")]


def _drop(frame: MetricFrame, signal: str) -> MetricFrame:
    return frame.select(signals=[s for s in frame.signals if s != signal])


def test_missing_readings_are_gaps_and_said_never_a_flat_line() -> None:
    d = incident()
    # no yesterday window at all: the legend says so, and nothing is drawn for it
    w = {k: f for k, f in windows(d).items() if k != YESTERDAY}
    svg = _timeline(render_html(d, w))
    assert not [p for p in svg.all("path") if {"yesterday", "yesterday-band"} & set(p.classes)]
    assert "yesterday: not in the data" in [t.text() for t in svg.all("text", "legend-note")]
    # yesterday lacks the symptom: that panel says so in its title band
    w = windows(d)
    w[YESTERDAY] = _drop(w[YESTERDAY], SYMPTOM)
    symptom = _timeline(render_html(d, w)).all("g", "panel")[0]
    assert not symptom.all("path", "yesterday")
    assert symptom.one("text", "panel-note").text() == "yesterday: no readings"
    # readings missing for a while, today and yesterday: each line breaks there
    w = windows(d)
    for k in ("incident", YESTERDAY):
        s = w[k].get(SYMPTOM)
        assert s is not None
        vals = s.values.copy()
        vals[0, 100:120] = np.nan
        w[k] = w[k].with_series(SYMPTOM, s.instances, vals)
    symptom = _timeline(render_html(d, w)).all("g", "panel")[0]
    assert _runs(symptom.one("path", "yesterday")) == 2
    assert _runs(symptom.one("path", "peer")) == 2
    assert symptom.one("text", "panel-note").text() == "gaps: no readings"


def test_a_root_reading_missing_from_the_frames_keeps_its_panel_and_says_so() -> None:
    d = incident()
    mem = "infra.mem_available_ratio"  # what dates root #1
    # missing today, there yesterday: yesterday is drawn, today is said to be missing
    w = windows(d)
    w["incident"] = _drop(w["incident"], mem)
    panel = next(g for g in _timeline(render_html(d, w)).all("g", "panel")
                 if g.attrs["data-signal"] == mem)  # fmt: skip
    assert not panel.all("path", "observed") and panel.one("path", "yesterday")
    assert panel.one("text", "panel-note").text() == "no readings in the window"
    # missing everywhere: an empty area under the note, no line at all
    w = {k: _drop(f, mem) for k, f in windows(d).items()}
    panel = next(g for g in _timeline(render_html(d, w)).all("g", "panel")
                 if g.attrs["data-signal"] == mem)  # fmt: skip
    assert not panel.all("path") and panel.one("rect", "area")
    assert panel.one("text", "panel-note").text() == (
        "no readings in the window · yesterday: no readings"
    )


def test_a_finding_without_readings_says_so_where_its_plot_would_be() -> None:
    d = incident()
    w = {k: _drop(f, "inference.gpu_util") for k, f in windows(d).items()}
    tree = parse(render_html(d, w))
    (fig,) = tree.all("figure", "no-data")
    assert fig.one("figcaption").text().startswith("inference.gpu_util @ ")
    assert fig.one("p", "missing").text() == (
        "No readings of this series in the window: nothing to plot."
    )
    assert not fig.all("svg")


# -- unexplained changes --------------------------------------------------------------------
RSS = "service.process_rss"


def _changes() -> tuple[Diagnosis, dict[str, MetricFrame]]:
    """Two changes no rule explains, on instances no root acts on: one with its series in the
    frames (missing for a stretch), one whose series the frames lack."""
    d = incident()
    changes = (
        UnexplainedChange(RSS, "gateway-0", "access", 3.1,
                          "Resident memory on gateway-0 grew from 1 GiB to 1.6 GiB",
                          ONSET + 240, 2**30, 1.6 * 2**30),
        UnexplainedChange("service.error_rate", "gateway-1", "access", 2.0,
                          "Errors on gateway-1 rose from 0.1% to 2%", ONSET + 60, 0.001, 0.02),
    )  # fmt: skip
    w = windows(d)
    t = START + STEP * np.arange(N)
    for k, f in w.items():
        if k == "incident":
            v = 2**30 * (1 + 0.6 * np.clip((t - ONSET - 240) / 300, 0, 1))
            v[60:70] = np.nan
        else:
            v = np.full(N, 1.02 * 2**30)
        w[k] = f.with_series(RSS, ("gateway-0",), v[None, :])
    return replace(d, unexplained=changes), w


def test_each_unexplained_change_has_a_plot_with_its_onset() -> None:
    d, w = _changes()
    tree = parse(render_html(d, w))
    section = next(s for s in tree.all("section") if s.attrs.get("id") == "unexplained")
    items = section.all("li")
    assert len(items) == 2
    for item, u in zip(items, d.unexplained, strict=True):
        (spark,) = item.all("svg")
        assert spark.classes == ["spark"] and spark.attrs["data-signal"] == u.signal
        assert spark.attrs["data-instance"] == u.instance and u.statement in item.text()
        assert item.all("details", "promql")  # its query, as a finding has
    drawn, missing = (i.one("svg", "spark") for i in items)
    area = drawn.one("rect", "area")
    assert _runs(drawn.one("path", "observed")) == 2  # the stretch without readings is a gap
    assert drawn.one("text", "gap-note").text() == "gaps: no readings"
    assert drawn.one("path", "band")  # its baselines behind it
    label = drawn.one("text", "onset-label")
    assert label.text() == "onset 02:21" and label.num("y") < area.num("y")  # above the area
    onset = drawn.one("line", "onset")
    x = area.num("x") + (ONSET + 240 - START) / (STEP * (N - 1)) * area.num("width")
    assert abs(onset.num("x1") - x) < 0.2
    assert [t.text() for t in drawn.all("text", "ytick")] == ["1.6 GiB", "1 GiB"]
    # the series the frames lack: an empty plot that says so, no line at all
    assert not missing.all("path")
    assert missing.one("text", "missing").text() == "no readings of this series in the window"


def test_without_frames_the_changes_stay_text() -> None:
    d, _ = _changes()
    page = render_html(d)
    assert "<svg" not in page and "Resident memory on gateway-0" in page


def test_the_page_stays_self_contained_with_every_new_mark() -> None:
    d, w = _changes()
    d = replace(d, source={**d.source, ALERT_KEY: iso(ONSET + 150)})
    page = render_html(d, w)
    tree = parse(page)
    assert "<script" not in page.lower()
    for ref in ("<link", "src=", "href=", "@import", "url("):
        assert ref not in page
    svgs = tree.all("svg")
    assert len(svgs) == 1 + 12 + 2  # the timeline, the findings' plots, the changes' plots
    assert re.findall(r"https?://[^\"' <]+", page) == ["http://www.w3.org/2000/svg"] * len(svgs)


# -- folded parts ---------------------------------------------------------------------------
def test_every_folded_part_has_a_marker_and_a_hint_and_opens_from_the_keyboard() -> None:
    d, w = _changes()
    tree = parse(render_html(d, w))
    folds = tree.all("details")
    assert {c for f in folds for c in f.classes} == {"fold", "step", "hyp", "promql"}
    for f in folds:
        summary = f.elements()[0]
        assert summary.tag == "summary"  # the native toggle: focusable, Enter and Space open it
        assert "tabindex" not in summary.attrs
        marker = summary.elements()[0]
        assert marker.classes == ["marker"] and marker.text() == "▸"
        assert marker.attrs.get("aria-hidden") == "true"  # read as the summary's words alone
        if "promql" not in f.classes:  # a section says it opens (hidden once open: CSS)
            assert summary.one("span", "hint").text()
    closed = [f for f in folds if "open" not in f.attrs and "promql" not in f.classes]
    assert len(closed) >= 8
    # ruled out, unchecked and missing signals are folded, their ids still seen while folded
    for sid in ("ruled-out", "unchecked", "missing"):
        section = next(s for s in tree.all("section") if s.attrs.get("id") == sid)
        box = section.elements()[0]
        assert box.tag == "details" and "fold" in box.classes and "open" not in box.attrs
    ruled = next(s for s in tree.all("section") if s.attrs.get("id") == "ruled-out")
    assert "gpu_throttling" in ruled.elements()[0].elements()[0].text()


def test_the_stylesheet_turns_the_marker_and_hides_the_hint_when_open() -> None:
    from infersight.report.html_style import CSS

    assert "details[open] > summary > .marker { transform:rotate(90deg); }" in CSS
    assert "details[open] > summary > .hint { display:none; }" in CSS
    assert "summary:focus-visible" in CSS
