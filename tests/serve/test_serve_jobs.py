"""What a capture is asked for an alert, and the summary a chat receives."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from notifications import notification

from incident_now import incident_now_onset
from infersight.lab.live.servers import LocalPrometheus
from infersight.serve.alerts import Notification
from infersight.serve.config import ServeConfig
from infersight.serve.dispatch import Job, Outcome
from infersight.serve.jobs import capture_request, capture_runner, summary_text
from infersight.serve.moment import AlertTiming
from infersight.timeparse import iso

NOW = 1_796_000_000.0


def _job(starts_at: float, received_at: float) -> Job:
    n = Notification.model_validate(notification("g1", ["a"], starts_at=iso(starts_at)))
    return Job("20261204T0217Z-x-1", n.groupKey, n.starts_at(), n.scope(), n, received_at)


def test_the_capture_is_diagnosed_at_arrival_over_a_window_reaching_past_startsat(
    tmp_path: Path,
) -> None:
    cfg = ServeConfig.model_validate({"auth": {"disabled": True}, "capture": {"since": "30m"}})
    lead = AlertTiming().lead_s
    fresh = capture_request(cfg, _job(NOW - 60, NOW), tmp_path)
    assert fresh.at == NOW and fresh.end == NOW and fresh.since_s == 1800
    assert fresh.at - fresh.since_s <= NOW - 60 - lead
    # startsAt an hour before it arrived (a group re-sent): the window reaches back past it
    old = capture_request(cfg, _job(NOW - 3600, NOW), tmp_path)
    assert old.at == NOW and old.at - old.since_s == NOW - 3600 - lead


@pytest.mark.server
@pytest.mark.slow
def test_an_alert_that_starts_at_the_onset_is_diagnosed_past_it(
    tmp_path: Path, prometheus_with_backfill: Callable[[Sequence[Path]], LocalPrometheus]
) -> None:
    """Issue 38 item 3: read at the alert's startsAt, the onset itself, the 02:17 incident
    showed nothing yet; read when the alert arrives, it names the vector DB."""
    om, end, onset = incident_now_onset(tmp_path)
    prom = prometheus_with_backfill([om])
    cfg = ServeConfig.model_validate(
        {
            "auth": {"disabled": True},
            "prometheus": {"url": prom.url},
            "capture": {"since": "1h", "baselines": ["1h"]},
            "out_dir": str(tmp_path / "captures"),
        }
    )
    outcome = capture_runner(cfg)(_job(onset, end))
    assert {"vector_db_swap", "cache_capacity"} <= set(outcome.root_causes[:2]), outcome.summary


def test_summary_names_the_alert_the_roots_and_links_the_report() -> None:
    n = Notification.model_validate(notification("g1", ["a"]))
    job = Job("20261204T0217Z-x-1", n.groupKey, n.starts_at(), n.scope(), n, n.starts_at())
    outcome = Outcome(Path("b.tar.gz"), {}, ["vector_db_swap"], "The vector DB swaps.")
    text = summary_text(job, outcome, "https://infersight.example.com/")
    assert text == (
        "[infersight] InferenceQueueBacklog: vector_db_swap. The vector DB swaps. "
        "https://infersight.example.com/captures/20261204T0217Z-x-1/report.html"
    )
    none = summary_text(job, Outcome(None, {}, [], "Cannot judge: no data."))
    assert none == "[infersight] InferenceQueueBacklog: no root cause named. Cannot judge: no data."


def test_the_alert_start_goes_with_the_capture_into_its_source(tmp_path: Path) -> None:
    """Issue 39: the HTML timeline marks when the alert fired; the capture keeps its startsAt
    in the diagnosis' source (and the bundle's), from where the report reads it."""
    from infersight.capture import capture
    from infersight.report.timeline_marks import ALERT_KEY

    cfg = ServeConfig.model_validate({"auth": {"disabled": True}})
    req = capture_request(cfg, _job(NOW - 60, NOW), tmp_path)
    assert req.alert_starts_at == NOW - 60
    # no server to read: the capture is made all the same, and says when the alert began
    result = capture(replace(req, connection=None, out=tmp_path / "scene.tar.gz"))
    assert result.diagnosis.source[ALERT_KEY] == iso(NOW - 60)
