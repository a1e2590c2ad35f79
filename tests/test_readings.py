"""Readings no metric reaches (±Inf, ±1e308) are gaps, counted per signal; clean frames pass
through untouched."""

from __future__ import annotations

import numpy as np

from infersight.frame import MetricFrame
from infersight.readings import ReadingLimits, note, readable

START, STEP = 1.75e9, 15.0


def test_past_the_bound_and_infinities_become_gaps_and_are_counted() -> None:
    v = np.array([[1.0, 1e308, -np.inf, np.nan, -1e31, 1e29]])
    frame = MetricFrame(START, STEP, 6).with_series("service.queue_length", ["a"], v)
    out, dropped = readable({"incident": frame, "baseline-1h": frame})
    got = out["incident"].series["service.queue_length"].values
    assert np.array_equal(got, [[1.0, np.nan, np.nan, np.nan, np.nan, 1e29]], equal_nan=True)
    assert dropped == {"service.queue_length": 6}  # three in each window; NaN was a gap already
    assert v[0, 1] == 1e308  # the caller's array is left as it was


def test_clean_frames_are_returned_as_they_are() -> None:
    frame = MetricFrame(START, STEP, 3).with_series("service.queue_length", ["a"], np.ones((1, 3)))
    out, dropped = readable({"incident": frame})
    assert out["incident"] is frame and dropped == {}


def test_the_bound_is_a_setting_and_the_note_names_it() -> None:
    frame = MetricFrame(START, STEP, 2).with_series(
        "service.queue_length", ["a"], np.array([[5.0, 50.0]])
    )
    _out, dropped = readable({"incident": frame}, ReadingLimits(max_abs=10.0))
    assert dropped == {"service.queue_length": 1}
    assert note({}) == ""
    many = {f"infra.s{i}": i + 1 for i in range(5)}
    text = note(many)
    assert text.startswith("15 readings (infra.s4, infra.s3, infra.s2 and 2 more) were ±Inf")
    assert "past ±1e30" in text
