"""`infersight diagnose --alert ALERT.json`: the entry `serve` uses, from a saved notification:
diagnosed when the alert arrived (--at, else now, or a bundle's newest data) over a window that
reaches back past its startsAt, never at startsAt itself; a bad file is one line."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from notifications import notification
from typer.testing import CliRunner

from incident_now import incident_now_onset
from infersight.bundle import write_bundle
from infersight.cli import app
from infersight.cli.common import EXIT_INPUT, CommandError
from infersight.lab.live.servers import LocalPrometheus
from infersight.lab.sim.outputs import sim_windows
from infersight.lab.sim.run import simulate
from infersight.timeparse import iso

runner = CliRunner()


def _roots(args: list[str]) -> list[str]:
    res = runner.invoke(app, [*args, "--format", "json"])
    assert res.exit_code in (0, 1), res.output
    return [r["hypothesis"] for r in json.loads(res.stdout)["root_causes"]]


def _alert(path: Path, starts_at: float) -> Path:
    # the earliest firing startsAt counts; a resolved alert of the group does not
    doc = notification("g1", ["a", "b"], starts_at=iso(starts_at))
    doc["alerts"][1]["startsAt"] = iso(starts_at - 600)
    doc["alerts"][1]["status"] = "resolved"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.server
def test_an_alert_starting_at_the_onset_is_diagnosed_when_it_arrives(
    tmp_path: Path, prometheus_with_backfill: Callable[[Sequence[Path]], LocalPrometheus]
) -> None:
    """Issue 38 item 3: read at startsAt, the onset itself, the 02:17 incident showed nothing
    yet; read now (or at --at), over a window reaching past startsAt, it names the vector DB."""
    om, end, onset = incident_now_onset(tmp_path)
    prom = prometheus_with_backfill([om])
    alert = str(_alert(tmp_path / "alert.json", onset))
    now = _roots(["diagnose", "-p", prom.url, "--alert", alert, "--window", "30m"])
    assert {"vector_db_swap", "cache_capacity"} <= set(now[:2])
    at = _roots(["diagnose", "-p", prom.url, "--alert", alert, "--at", iso(end)])
    # the same causes first; a faint third root may come and go with the seconds by which
    # "now" passed the data's end (the window slides by a scrape or two)
    assert at[:2] == now[:2]


def test_a_bundle_is_diagnosed_at_its_newest_data_not_at_startsat(tmp_path: Path) -> None:
    res = simulate("incident_0217", hours=3, instances=3, seed=1, history_h=1.0)
    onset = res.truth.onset
    assert onset is not None
    windows = sim_windows(res, "vllm", (onset + 1800) // 15 * 15, 3600.0)
    bundle = str(write_bundle(tmp_path / "b", windows, {"kind": "test"}))
    alert = str(_alert(tmp_path / "alert.json", onset))
    roots = _roots(["diagnose", bundle, "--alert", alert])
    assert roots and roots[0] == "vector_db_swap"
    # an alert that began after the bundle ends: the bundle holds nothing of it
    late = str(_alert(tmp_path / "late.json", onset + 7200))
    out = runner.invoke(app, ["diagnose", bundle, "--alert", late])
    assert isinstance(out.exception, CommandError) and out.exception.code == EXIT_INPUT
    assert "the bundle holds nothing of it" in str(out.exception)


def test_a_bad_alert_file_is_one_line(tmp_path: Path) -> None:
    alert = tmp_path / "alert.json"
    alert.write_text(json.dumps({"version": "3", "alerts": []}))
    res = runner.invoke(app, ["diagnose", "x.tar.gz", "--alert", str(alert)])
    assert isinstance(res.exception, CommandError) and res.exception.code == EXIT_INPUT
    assert "version '3'; only Alertmanager's 4 is read" in str(res.exception)


def test_the_html_report_marks_when_the_alert_fired(tmp_path: Path) -> None:
    """Issue 39: `diagnose --alert` keeps the alert's startsAt in the source; the HTML timeline
    draws it as a line and names it in its legend."""
    from infersight.report.timeline_marks import ALERT_KEY

    res = simulate("incident_0217", hours=3, instances=3, seed=1, history_h=1.0)
    onset = res.truth.onset
    assert onset is not None
    windows = sim_windows(res, "vllm", (onset + 1800) // 15 * 15, 3600.0)
    bundle = str(write_bundle(tmp_path / "b", windows, {"kind": "test"}))
    alert = str(_alert(tmp_path / "alert.json", onset + 120))
    page = tmp_path / "report.html"
    out = runner.invoke(app, ["diagnose", bundle, "--alert", alert, "-o", str(page)])
    assert out.exit_code == 1, out.output
    html = page.read_text("utf-8")
    assert 'class="onset alert"' in html and ">alert fired</text>" in html
    assert iso(onset + 120) in html  # the source line names it too
    doc = json.loads(runner.invoke(app, ["diagnose", bundle, "--alert", alert, "--json"]).stdout)
    assert doc["source"][ALERT_KEY] == iso(onset + 120)
