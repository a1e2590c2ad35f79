"""Where a capture's window ends for an alert, and the summary a chat receives."""

from __future__ import annotations

from pathlib import Path

from notifications import notification

from infersight.serve.alerts import Notification
from infersight.serve.dispatch import Job, Outcome
from infersight.serve.jobs import summary_text, window_end


def test_window_end() -> None:
    now = 1_796_000_000.0
    assert window_end(now - 60, now, 1800) == now  # a fresh alert: up to now
    assert window_end(now - 7200, now, 1800) == now - 7200 + 900  # an old one: onset inside
    assert window_end(now + 300, now, 1800) == now  # a sender's clock ahead of ours


def test_summary_names_the_alert_the_roots_and_links_the_report() -> None:
    n = Notification.model_validate(notification("g1", ["a"]))
    job = Job("20261204T0217Z-x-1", n.groupKey, n.starts_at(), n.scope(), n)
    outcome = Outcome(Path("b.tar.gz"), {}, ["vector_db_swap"], "The vector DB swaps.")
    text = summary_text(job, outcome, "https://infersight.example.com/")
    assert text == (
        "[infersight] InferenceQueueBacklog: vector_db_swap. The vector DB swaps. "
        "https://infersight.example.com/captures/20261204T0217Z-x-1/report.html"
    )
    none = summary_text(job, Outcome(None, {}, [], "Cannot judge: no data."))
    assert none == "[infersight] InferenceQueueBacklog: no root cause named. Cannot judge: no data."
