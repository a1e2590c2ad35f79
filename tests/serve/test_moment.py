"""The moment an alert is diagnosed and the window it is read in (`serve` and `diagnose --alert`
alike): when it arrived, reaching back past its startsAt."""

from __future__ import annotations

import pytest

from infersight.serve.moment import AlertTiming, alert_window

NOW = 1_796_000_000.0
LEAD = AlertTiming().lead_s


def test_a_fresh_alert_is_read_up_to_its_arrival_from_before_its_start() -> None:
    w = alert_window(NOW - 60, NOW, 1800)
    assert w.at == NOW and w.span_s == 1800 and w.reaches
    assert w.start <= NOW - 60 - LEAD


def test_an_alert_older_than_the_window_stretches_it_back_past_its_start() -> None:
    w = alert_window(NOW - 3600, NOW, 1800)
    assert w.at == NOW and w.start == pytest.approx(NOW - 3600 - LEAD) and w.reaches


def test_a_window_longer_than_needed_is_kept() -> None:
    assert alert_window(NOW - 60, NOW, 7200).span_s == 7200


def test_a_very_old_alert_is_capped_and_says_so() -> None:
    t = AlertTiming()
    w = alert_window(NOW - 2 * t.max_span_s, NOW, 1800)
    assert w.span_s == t.max_span_s and not w.reaches


def test_a_sender_clock_ahead_of_ours_counts_as_arrival() -> None:
    w = alert_window(NOW + 300, NOW, 1800)
    assert w.at == NOW and w.span_s == 1800 and w.reaches


def test_the_lead_is_a_setting() -> None:
    w = alert_window(NOW - 600, NOW, 600, AlertTiming(lead_s=3600))
    assert w.span_s == 4200 and w.reaches
