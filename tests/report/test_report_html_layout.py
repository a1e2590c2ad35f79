"""The HTML report's layout (issue 30): the symptom and the root causes on one time axis first,
fleet findings with every instance, a near-zero baseline kept readable, ruled-out causes
folded, and each finding's PromQL with links to Prometheus and Grafana."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import numpy as np
import pytest
from report_samples import END, START, STEP, N, incident, windows
from test_report_html import _chromium, _run

from infersight.diagnose.result import Diagnosis, HypothesisResult
from infersight.frame import MetricFrame
from infersight.report import render_html, render_json, write_report
from infersight.report.links import Links, grafana_link, prometheus_link
from infersight.report.svg import FLEET_LINES, TOP

PLOT = re.compile(r'<svg class="plot".*?</svg>', re.S)


def test_the_first_figure_is_the_symptom_and_the_roots_on_one_time_axis() -> None:
    d = incident()
    page = render_html(d, windows(d))
    first_svg = page.index("<svg")
    assert page[first_svg:].startswith('<svg class="timeline"')
    assert first_svg < page.index('id="roots"') < page.index('id="scope"')
    timeline = page[first_svg : page.index("</svg>", first_svg)]
    panels = re.findall(r'<g class="panel (\w+)" data-signal="([^"]+)"', timeline)
    # the user-facing signal that moved most: P99 380 ms → 4.1 s (11×); errors 0.1% → 5% are
    # 5× their floor of a point of share
    assert panels[0] == ("symptom", "service.e2e_latency_p99")
    # one panel per root, each with the reading that dates it (the earliest)
    assert panels[1:] == [
        ("cause", "infra.mem_available_ratio"),
        ("cause", "dependency.cache_hit_ratio"),
    ]
    labels = re.findall(r'class="onset-label (\w+)"[^>]*>([^<]+)<', timeline)
    assert ("cause", "#1 02:15") in labels and ("cause", "#2 02:14") in labels
    assert any(kind == "symptom" for kind, _ in labels)


def test_onset_labels_on_the_timeline_never_share_a_row_when_close() -> None:
    from infersight.report.timeline import LABEL_SPACING, _label_rows

    rows = _label_rows([100.0, 100.0 + LABEL_SPACING / 2, 100.0 + LABEL_SPACING * 2])
    assert rows == [0, 1, 0]


def _fleet(d: Diagnosis, n: int) -> tuple[Diagnosis, dict[str, MetricFrame]]:
    """The queue-wait finding made on `n` instances, with their series in the frames."""
    h = next(h for h in d.hypotheses if h.id == "queue_backlog")
    e = next(e for e in h.evidence if e.signal == "service.queue_wait_p99")
    names = [f"infer-{k}" for k in range(n)]
    many = tuple(replace(e, instance=i) for i in names)
    others = tuple(x for x in many if x.instance != e.instance)
    h2: HypothesisResult = replace(h, evidence=(*h.evidence, *others))
    d = replace(d, hypotheses=tuple(h2 if x.id == h.id else x for x in d.hypotheses))
    frames = windows(d)
    values = np.tile(np.linspace(0.05, 2.9, N), (n, 1)) * np.linspace(0.8, 1.2, n)[:, None]
    frames["incident"] = frames["incident"].with_series("service.queue_wait_p99", names, values)
    return d, frames


@pytest.mark.parametrize("n", [4, FLEET_LINES + 4])
def test_a_fleet_finding_is_plotted_with_every_instance_or_a_band(n: int) -> None:
    d, frames = _fleet(incident(), n)
    page = render_html(d, frames)
    svg = next(s for s in PLOT.findall(page) if 'data-signal="service.queue_wait_p99"' in s)
    if n <= FLEET_LINES:
        assert svg.count('class="peer peers"') == n - 1  # each other instance, one line
    else:
        assert 'class="fleet-band peers"' in svg and 'class="fleet-median peers"' in svg
    assert f"+ {n - 1} more instances" in svg


def test_a_baseline_near_zero_keeps_its_shape_and_the_onset_label_stays_off_the_curve() -> None:
    d = incident()
    svg = PLOT.findall(render_html(d, windows(d)))[0]  # 20 ms → 800 ms
    assert 'data-scale="log"' in svg
    label_y = float(re.search(r'class="onset-label" x="[\d.]+" y="([\d.]+)"', svg).group(1))  # type: ignore[union-attr]
    assert label_y < TOP  # above the plot area
    # a change within one order of magnitude stays on a linear axis
    gpu = next(s for s in PLOT.findall(render_html(d, windows(d))) if "inference.gpu_util" in s)
    assert 'data-scale="linear"' in gpu


def test_ruled_out_and_unchecked_causes_are_folded() -> None:
    page = render_html(incident(), windows())
    for sid in ("ruled-out", "unchecked", "missing"):
        section = page[page.index(f'id="{sid}"') :]
        assert section.startswith(f"id=\"{sid}\"><details class='fold'><summary>"), sid
    assert "<details class='fold' open" not in page
    # their ids stay visible while folded
    assert "gpu_throttling" in page[page.index('id="ruled-out"') :][:600]


def test_each_finding_links_to_its_query() -> None:
    d = incident()
    links = Links("http://prom.example:9090/", "https://grafana.example", "Mimir")
    page = render_html(d, windows(d), links=links)
    hrefs = re.findall(r"href='([^']+)'", page)
    prom = [h for h in hrefs if "/graph?" in h]
    graf = [h for h in hrefs if "/explore?" in h]
    assert prom and graf
    q = parse_qs(urlparse(prom[0].replace("&amp;", "&")).query)
    assert q["g0.expr"][0].startswith(("histogram_quantile", "sum", "avg", "max", "min", "rate"))
    state = json.loads(parse_qs(urlparse(graf[0].replace("&amp;", "&")).query)["left"][0])
    assert state["datasource"] == "Mimir" and state["queries"][0]["expr"] == q["g0.expr"][0]
    assert "<details class='promql'>" in page
    # the JSON report carries the PromQL behind each finding, and the links
    doc = json.loads(render_json(d, links=links))
    (p99,) = doc["queries"]["dependency.vector_query_p99"]
    # no record of what ran (a sample diagnosis): the catalog's, rendered as a pull sends it
    assert p99["as_run"] is False and "instance, pod)" in p99["expr"]
    assert p99["links"]["prometheus"].startswith("http://prom.example:9090/graph?g0.expr=")
    assert (p99["start"], p99["end"], p99["step"], p99["rate_window"]) == (
        d.start,
        d.end,
        STEP,
        "5m",
    )
    assert {"dependency.vector_query_p99", "service.queue_wait_p99"} <= set(doc["queries"])


def test_link_urls() -> None:
    url = prometheus_link("http://p:9090", 'up{job="x"}', START, END, 30.0)
    assert url.startswith("http://p:9090/graph?g0.expr=up%7Bjob%3D%22x%22%7D&g0.tab=0")
    assert "g0.range_input=3600s" in url and "2024-05-14%2002%3A45%3A00" in url
    assert url.endswith("&g0.step_input=30")
    g = grafana_link("https://g/", "up", START, END, 30.0, "prometheus")
    left = json.loads(unquote(g.split("left=", 1)[1]))
    assert left["range"] == {"from": str(int(START * 1000)), "to": str(int(END * 1000))}
    assert left["queries"][0]["interval"] == "30s"
    assert STEP == 15.0


# -- a real browser: what the reader sees first, and how long the page is ----------------------
WRAPPER = """<!DOCTYPE html><html><body>
<iframe id="f" src="report.html" style="width:1200px;height:900px;border:0"></iframe>
<pre id="out"></pre><script>
document.getElementById('f').onload = function () {
  var doc = this.contentDocument, svg = doc.querySelector('svg');
  document.getElementById('out').textContent = JSON.stringify({
    height: doc.documentElement.scrollHeight,
    first: svg ? svg.getAttribute('class') : null,
    top: svg ? svg.getBoundingClientRect().top : null,
    bottom: svg ? svg.getBoundingClientRect().bottom : null});
};</script></body></html>"""


def measure(page: Path, tmp: Path) -> dict[str, float | str | None]:
    """Lay the report out in headless Chromium at 1200 px wide; the page's height and where
    its first plot sits."""
    exe = _chromium()
    (tmp / "wrap.html").write_text(WRAPPER.replace("report.html", page.name), "utf-8")
    res = _run(exe, tmp, "--allow-file-access-from-files", "--virtual-time-budget=5000",
               "--dump-dom", (tmp / "wrap.html").resolve().as_uri())  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    m = re.search(r'<pre id="out">(.*?)</pre>', res.stdout, re.S)
    assert m is not None and m.group(1), res.stdout[-2000:]
    return json.loads(m.group(1))  # type: ignore[no-any-return]


def screenshot(page: Path, tmp: Path) -> bytes:
    """The first screen a reader sees (1200 × 900)."""
    png = tmp / "first-screen.png"
    shot = _run(_chromium(), tmp, f"--screenshot={png}", "--window-size=1200,900",
                page.resolve().as_uri())  # fmt: skip
    assert shot.returncode == 0, shot.stderr[-2000:]
    return png.read_bytes()


@pytest.mark.slow
def test_chromium_shows_the_symptom_plot_first(tmp_path: Path) -> None:
    d = incident()
    page = write_report(d, tmp_path / "report.html", "html", windows(d))
    got = measure(page, tmp_path)
    assert got["first"] == "timeline"
    assert got["bottom"] is not None and float(got["bottom"]) <= 900  # on the first screen
    data = screenshot(page, tmp_path)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 30_000


@pytest.mark.sim
def test_the_demo_page_is_short_with_ruled_out_causes_folded(tmp_path: Path) -> None:
    from infersight.demo import run_demo

    res = run_demo(tmp_path)
    got = measure(res.html, tmp_path)
    assert got["first"] == "timeline" and float(got["bottom"] or 1e9) <= 900
    # ruled-out causes folded keep it near 4,000 px; the header's symptom line (what users
    # felt, with its figures) takes two lines of that
    assert float(got["height"] or 1e9) < 4100, got
    data = screenshot(res.html, tmp_path)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 30_000
    assert STEP > 0 and START < END
